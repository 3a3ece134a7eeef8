// Preparer::Prepare: GET, check, plan each result, make vHCUs and marks,
// write the claim's CDI spec, record it.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <tuple>

#include "dra/dra_cdi_spec.h"
#include "dra/prepare_impl.h"
#include "hcudp_internal/file_util.h"
#include "hcudp_internal/log.h"
#include "node/ledger_read.h"

namespace hcudp::dra {
namespace {

std::string Describe(const ClaimRef& ref) {
  return "ResourceClaim " + ref.namespace_name + "/" + ref.name + " (" + ref.uid + ")";
}

PrepareAnswer ErrorAnswer(std::string error) {
  PrepareAnswer a;
  a.error = std::move(error);
  return a;
}

// What a preparation answers for, per result: request, pool, device and
// shareID, sorted.
using ResultKey = std::tuple<std::string, std::string, std::string, std::string>;

std::string DeviceList(const std::vector<ResultKey>& keys) {
  std::string out;
  for (const auto& [request, pool, device, share] : keys) {
    out += (out.empty() ? "" : ", ") + pool + "/" + device;
    if (!share.empty()) out += " (share " + share + ")";
  }
  return out.empty() ? "no device" : out;
}

// Empty when `recorded` was prepared for `claim`'s current allocation. A
// claim deallocated and allocated again under the same UID (its pods done,
// a new pod) has other results, a new shareID at least; its recorded devices
// may be another claim's by now: the per-claim error, never those devices.
std::string AllocationChanged(const PreparedClaim& recorded, const ParsedClaim& claim,
                              const ClaimRef& ref) {
  std::vector<ResultKey> was;
  for (const PreparedDevice& d : recorded.devices) {
    was.emplace_back(d.request, d.pool, d.device, d.share_id);
  }
  std::vector<ResultKey> now;
  for (const AllocatedDevice& r : claim.results) {
    now.emplace_back(r.request, r.pool, r.device, r.share_id);
  }
  std::sort(was.begin(), was.end());
  std::sort(now.begin(), now.end());
  if (was == now) return "";
  return Describe(ref) + " is allocated to " + DeviceList(now) +
         " but was prepared on this node for " + DeviceList(was) +
         " (allocated again under the same UID): that preparation must be unprepared first";
}

}  // namespace

PrepareAnswer Preparer::Impl::Answer(const PreparedClaim& claim) {
  PrepareAnswer a;
  for (const PreparedDevice& d : claim.devices) {
    PreparedDeviceAnswer out;
    out.request_names = {BaseRequestName(d.request)};
    out.pool_name = d.pool;
    out.device_name = d.device;
    out.cdi_device_ids = d.cdi_ids;
    if (!d.share_id.empty()) out.share_id = d.share_id;
    a.devices.push_back(std::move(out));
  }
  return a;
}

void Preparer::Impl::SetCdiIds(PreparedClaim* claim) const {
  for (PreparedDevice& d : claim->devices) {
    d.cdi_ids = {d.kind == PreparedKind::kCard
                     ? CardCdiKind(o_.driver_name) + "=" + d.device
                     : VhcuCdiKind(o_.driver_name) + "=" + ClaimCdiDeviceName(claim->uid, d)};
  }
}

StatusOr<PreparedDevice> Preparer::Impl::Plan(const AllocatedDevice& r,
                                              const NodeInventory& inventory) {
  if (!o_.pool_name.empty() && r.pool != o_.pool_name) {
    return InvalidArgumentError("result for request " + r.request + " names pool " + r.pool +
                                ", not this node's pool " + o_.pool_name);
  }
  HCUDP_ASSIGN_OR_RETURN(DeviceTarget target, ResolveDevice(inventory, r.device));
  PreparedDevice d;
  d.request = r.request;
  d.pool = r.pool;
  d.device = r.device;
  d.share_id = r.share_id;
  d.kind = target.kind;
  d.card = target.card;
  const Card* card = inventory.FindCard(target.card);
  if (card != nullptr) d.card_bdf = card->bdf;
  if (target.kind == PreparedKind::kVhcu) {
    d.vhcu_id = target.vhcu_id;
    HCUDP_RETURN_IF_ERROR(CheckVhcuFree(inventory, d));
  }
  if (target.kind == PreparedKind::kMig) {
    d.mig_uuid = inventory.mig_instances[static_cast<size_t>(target.mig_index)].uuid;
  }
  if (target.kind != PreparedKind::kCard || card == nullptr || r.admin_access) return d;
  // consumedCapacity; the claim spec only where the cluster has none.
  const CapacityAmounts& amounts = r.has_consumed_capacity ? r.consumed : r.requested;
  if (amounts.empty()) return CheckWholeCardFree(inventory, *card, d);
  const int64_t cores = amounts.cores.value_or(card->compute_units);
  const int64_t memory = amounts.memory_bytes.value_or(static_cast<int64_t>(card->memory_bytes));
  if (cores > card->compute_units || memory > static_cast<int64_t>(card->memory_bytes)) {
    // More than the card: no allocation of ours gives that; never the whole
    // card instead (OutOfRange: the per-claim error of PrepareNew).
    return Status(StatusCode::kOutOfRange,
                  "request " + r.request + " asks for " + std::to_string(cores) + " cores and " +
                      std::to_string(memory) + " bytes of memory on " + r.device +
                      ", more than the card has (" + std::to_string(card->compute_units) +
                      " cores, " + std::to_string(card->memory_bytes) +
                      " bytes = " + std::to_string(card->memory_mib()) + " MiB)");
  }
  if (cores >= card->compute_units && memory >= static_cast<int64_t>(card->memory_bytes)) {
    return CheckWholeCardFree(inventory, *card, d);  // all of it: the whole card
  }
  d.kind = PreparedKind::kDynamicVhcu;
  d.compute_units = static_cast<int>(std::clamp<int64_t>(cores, 1, card->compute_units));
  const uint64_t mib = (static_cast<uint64_t>(memory) + kMiB - 1) / kMiB;
  d.memory_mib = std::clamp<uint64_t>(mib, 1, card->memory_mib());
  return d;
}

Holdings Preparer::Impl::ReadHoldings() const {
  ::hcudp::internal::LedgerSources sources;
  sources.host_root = o_.host_root;
  sources.cdi_dir = CdiDir();
  return ::hcudp::internal::ReadLedger(sources);
}

Status Preparer::Impl::CheckVhcuFree(const NodeInventory& inventory,
                                     const PreparedDevice& d) const {
  // A pre-split vHCU is handed to one claim at a time: not while the ledger
  // says someone holds it (another claim, even one whose mark is lost; a
  // mark; an intent; a claim of Hygon's driver), nor when it cannot tell
  // (issue 28, repro 4).
  Lookup<Vhcu> v = inventory.LookupVhcu(d.vhcu_id);
  if (v.certainty() != Certainty::kFound) return OkStatus();  // ResolveDevice found it
  Holders held = ReadHoldings().Of(DeviceRef::OfVhcu(v.value()));
  switch (held.certainty()) {
    case Certainty::kAbsent:
      return OkStatus();
    case Certainty::kUnknown:
      return FailedPreconditionError("vHCU " + d.device + ": " + held.why());
    case Certainty::kFound:
      break;
  }
  return FailedPreconditionError("vHCU " + d.device + " is held by " + held.Describe());
}

StatusOr<PreparedDevice> Preparer::Impl::CheckWholeCardFree(const NodeInventory& inventory,
                                                            const Card& card, PreparedDevice d) {
  // A whole card is never handed out over a vHCU or MIG instance someone
  // holds on it (issue 28, repro 1): the ledger's holders, and the Prepares
  // in flight.
  const std::string child_prefix = CardDeviceName(card) + "-";
  {
    MutexLock lock(mu_);
    for (const auto& [name, uid] : reserved_) {
      if (name.rfind(child_prefix, 0) == 0) {
        return FailedPreconditionError("whole card " + d.device + " is not free: claim " + uid +
                                       " is preparing " + name);
      }
    }
  }
  std::vector<DeviceRef> children;
  for (const Vhcu& v : inventory.vhcus) {
    if (v.card_bdf == card.bdf) children.push_back(DeviceRef::OfVhcu(v));
  }
  for (const MigInstance& m : inventory.mig_instances) {
    if (m.card_bdf == card.bdf || m.card == card.index) children.push_back(DeviceRef::OfMig(m));
  }
  if (children.empty()) return d;
  const Holdings holdings = ReadHoldings();
  for (const DeviceRef& child : children) {
    Holders held = holdings.Of(child);
    if (held.certainty() == Certainty::kUnknown) {
      return FailedPreconditionError("whole card " + d.device + ": " + held.why());
    }
    if (held.certainty() == Certainty::kFound) {
      return FailedPreconditionError("whole card " + d.device + " is not free: " + child.Name() +
                                     " is held by " + held.Describe());
    }
  }
  return d;
}

StatusOr<PrepareAnswer> Preparer::Impl::Prepare(const ClaimRef& ref,
                                                std::optional<Clock::TimePoint> deadline) {
  HCUDP_RETURN_IF_ERROR(CheckClaimUid(ref.uid));
  // In flight from before the GET: an Unprepare of this claim while the GET
  // waits for the API server is told to retry, rather than answering "done"
  // and leaving what this call then makes to nobody.
  InFlight guard(this, ref.uid);
  if (!guard.ok()) return ErrorAnswer(Describe(ref) + ": another call for it is in progress");
  StatusOr<std::string> json = fetch_(ref, deadline);
  if (!json.ok()) {
    Status st = json.status().WithContext("GET " + Describe(ref));
    if (Retryable(json.status())) return ErrorAnswer(st.ToString());
    return st;
  }
  StatusOr<ParsedClaim> parsed = ParseResourceClaim(*json, o_.driver_name);
  if (!parsed.ok()) return parsed.status().WithContext(Describe(ref));
  if (parsed->uid != ref.uid) {
    return FailedPreconditionError(Describe(ref) + " was replaced: the API has UID " + parsed->uid);
  }
  if (!parsed->allocated) return FailedPreconditionError(Describe(ref) + " is not allocated");

  std::optional<PreparedClaim> known;  // prepared before (or recovered): no file read
  {
    MutexLock lock(mu_);
    auto it = claims_.find(ref.uid);
    // Not one an Unprepare left half-released ("preparing"): undone below.
    if (it != claims_.end() && it->second.state == ClaimState::kPrepared) known = it->second;
  }
  if (known) {
    if (!known->adopted_from.empty()) CompleteAdopted(&*known, *parsed);
    if (std::string changed = AllocationChanged(*known, *parsed, ref); !changed.empty()) {
      return ErrorAnswer(changed);
    }
    bool rewritten = false;
    Status st = EnsureClaimSpec(*known, &rewritten);
    if (!st.ok()) return ErrorAnswer(st.ToString());
    return Answer(*known);
  }
  StatusOr<PreparedClaim> existing = store_.Read(ref.uid);
  if (existing.ok() && existing->state == ClaimState::kPrepared) {
    if (std::string changed = AllocationChanged(*existing, *parsed, ref); !changed.empty()) {
      return ErrorAnswer(changed);
    }
    bool rewritten = false;
    Status st = EnsureClaimSpec(*existing, &rewritten);
    if (!st.ok()) return ErrorAnswer(st.ToString());
    {
      MutexLock lock(mu_);
      claims_[ref.uid] = *existing;
    }
    return Answer(*existing);
  }
  if (!existing.ok() && existing.status().code() != StatusCode::kNotFound) {
    return existing.status().WithContext("checkpoint of " + Describe(ref));
  }
  if (existing.ok()) {  // an earlier attempt stopped half-way: undo it first
    StatusOr<NodeInventory> inventory = InventoryToRelease(*existing);
    if (!inventory.ok()) return ErrorAnswer(inventory.status().ToString());
    Status st = AdoptUnrecordedMarks(&*existing, *inventory);
    if (st.ok()) st = Undo(*existing, *inventory, false);
    if (!st.ok()) return ErrorAnswer("undoing an earlier attempt: " + st.ToString());
  }
  return PrepareNew(*parsed);
}

StatusOr<PrepareAnswer> Preparer::Impl::PrepareNew(const ParsedClaim& claim) {
  PreparedClaim pc;
  pc.uid = claim.uid;
  pc.namespace_name = claim.namespace_name;
  pc.name = claim.name;
  pc.owner = claim.pod_uid.empty() ? claim.uid : claim.pod_uid;
  pc.boot_id = boot_id_;
  pc.state = ClaimState::kPreparing;
  // Devices are planned from the node as the daemon last saw it (Recover,
  // WriteWholeCardSpec on every inventory change); only a name it does not
  // know sends us to the node itself (the change may not have reached us
  // yet). A card gone from both is an error naming the device.
  std::optional<NodeInventory> cached = CachedInventory();
  StatusOr<NodeInventory> inventory =
      cached ? StatusOr<NodeInventory>(std::move(*cached)) : backend_->Discover();
  if (!inventory.ok()) return ErrorAnswer("discovering the node: " + inventory.status().ToString());
  bool fresh = !cached.has_value();
  for (size_t i = 0; i < claim.results.size(); ++i) {
    StatusOr<PreparedDevice> d = Plan(claim.results[i], *inventory);
    if (!fresh && !d.ok() && d.status().code() == StatusCode::kNotFound) {
      inventory = backend_->Discover();
      if (!inventory.ok()) {
        return ErrorAnswer("discovering the node: " + inventory.status().ToString());
      }
      fresh = true;
      pc.devices.clear();
      i = static_cast<size_t>(-1);  // plan every result again on the fresh inventory
      continue;
    }
    if (!d.ok() && (d.status().code() == StatusCode::kOutOfRange ||
                    d.status().code() == StatusCode::kFailedPrecondition)) {
      return ErrorAnswer(
          d.status().WithContext("claim " + claim.namespace_name + "/" + claim.name).message());
    }
    if (!d.ok()) return d.status().WithContext("claim " + claim.namespace_name + "/" + claim.name);
    pc.devices.push_back(std::move(*d));
  }
  // Pre-split vHCUs and MIG instances belong to one claim at a time: their
  // names are reserved now, under the lock, before the slow work, so that a
  // concurrent Prepare of another claim naming one of them fails here
  // instead of passing the check too. Released when this call returns
  // (claims_ holds them from then on, on success).
  Reservation reservation(this, pc.uid);
  if (Status st = reservation.Reserve(pc); !st.ok()) {
    return ErrorAnswer(
        st.WithContext("claim " + claim.namespace_name + "/" + claim.name).ToString());
  }
  // Without a vHCU to create, nothing can leak before the entry exists: it is
  // written "prepared" at once (names known in advance), and whatever a crash
  // leaves unwritten (a whole-card mark, the claim spec) is repaired by the
  // next Prepare or by Recover, or released by Unprepare. One durable write
  // fewer on the whole-card path; and since the durable entry names the mark
  // before it is written, the mark itself is not forced to disk (a power cut
  // that loses or empties it is repaired the same way: EnsureClaimSpec).
  const bool journal =
      std::any_of(pc.devices.begin(), pc.devices.end(),
                  [](const PreparedDevice& d) { return d.kind == PreparedKind::kDynamicVhcu; });
  if (!journal) {
    for (PreparedDevice& d : pc.devices) {
      if (d.kind != PreparedKind::kCard) continue;
      StatusOr<std::string> name = hami::FormatMarkFileName(
          {pc.owner, BaseRequestName(d.request), d.card, hami::kWholeCardVhcuId});
      if (!name.ok()) return name.status().WithContext("claim " + pc.uid);
      d.mark = *name;
    }
    SetCdiIds(&pc);
    pc.state = ClaimState::kPrepared;
  }
  Status st = store_.Write(pc);
  if (!st.ok()) return ErrorAnswer("checkpoint: " + st.ToString());
  if (Crash(PrepareStep::kCheckpointPreparing)) return AbortedError("crash after preparing");

  for (PreparedDevice& d : pc.devices) {
    const bool whole = d.kind == PreparedKind::kCard;
    if (d.kind != PreparedKind::kDynamicVhcu && !whole) continue;
    const VhcuOwner owner{pc.owner, BaseRequestName(d.request)};
    if (whole) {
      // The mark's name is in the entry (written durably above, or in the
      // "prepared" entry below) before Prepare answers: recoverable.
      StatusOr<MarkFile> mark =
          vhcus_->MarkWholeCard(owner, d.card, VhcuManager::MarkDurability::kRecoverable);
      if (mark.ok()) {
        d.mark = FileNameOf(mark->path);
      } else {
        st = mark.status();
      }
    } else {
      StatusOr<CreatedVhcu> made = vhcus_->CreateVhcu(owner, d.card, d.compute_units, d.memory_mib);
      if (made.ok()) {
        d.vhcu_id = made->vhcu.id;
        // The claim spec needs the new vHCU: it is added to our copy of
        // the node rather than discovering the node again.
        auto& vhcus = inventory->vhcus;
        vhcus.erase(std::remove_if(vhcus.begin(), vhcus.end(),
                                   [&](const Vhcu& v) { return v.id == made->vhcu.id; }),
                    vhcus.end());
        vhcus.push_back(made->vhcu);
        d.mark = FileNameOf(made->mark.path);
      } else {
        st = made.status();
      }
    }
    if (!st.ok()) break;
    if (Crash(PrepareStep::kDeviceMade)) return AbortedError("crash after a device");
  }
  SetCdiIds(&pc);
  if (st.ok()) {
    StatusOr<std::string> spec = BuildClaimSpec(o_.driver_name, pc, *inventory, builder_);
    st = spec.status();
    if (spec.ok() && !spec->empty()) {
      st = WriteSpecFile(CdiDir(), ClaimSpecFileName(o_.driver_name, pc.uid), *spec);
    }
  }
  if (st.ok() && Crash(PrepareStep::kClaimSpecWritten)) return AbortedError("crash after spec");
  if (st.ok() && journal) {
    pc.state = ClaimState::kPrepared;
    st = store_.Write(pc);
  }
  if (!st.ok()) {
    Status undone = Undo(pc, *inventory, false);
    if (!undone.ok())
      LOG(WARNING) << "claim " << pc.uid << ": undo incomplete: " << undone.ToString();
    Status failed = st.WithContext("preparing claim " + pc.namespace_name + "/" + pc.name);
    if (st.code() == StatusCode::kInvalidArgument) return failed;
    return ErrorAnswer(failed.ToString());
  }
  if (Crash(PrepareStep::kCheckpointPrepared)) return AbortedError("crash after prepared");
  {
    MutexLock lock(mu_);
    claims_[pc.uid] = pc;
  }
  LOG(INFO) << "prepared claim " << pc.namespace_name << "/" << pc.name << " (" << pc.uid
            << "): " << pc.devices.size() << " device(s)";
  Changed();
  return Answer(pc);
}

Preparer::Impl::Reservation::~Reservation() {
  if (names_.empty()) return;
  MutexLock lock(impl_->mu_);
  for (const std::string& name : names_) impl_->reserved_.erase(name);
}

Status Preparer::Impl::Reservation::Reserve(const PreparedClaim& claim) {
  MutexLock lock(impl_->mu_);
  for (const PreparedDevice& d : claim.devices) {
    if (d.kind != PreparedKind::kVhcu && d.kind != PreparedKind::kMig) continue;
    auto held = impl_->reserved_.find(d.device);
    if (held != impl_->reserved_.end() && held->second != uid_) {
      return FailedPreconditionError("device " + d.device + " is being prepared for claim " +
                                     held->second);
    }
    for (const auto& [uid, other] : impl_->claims_) {
      if (uid == uid_) continue;
      for (const PreparedDevice& o : other.devices) {
        if (o.device == d.device) {
          return FailedPreconditionError("device " + d.device + " is already prepared for claim " +
                                         other.namespace_name + "/" + other.name);
        }
      }
    }
  }
  for (const PreparedDevice& d : claim.devices) {
    if (d.kind != PreparedKind::kVhcu && d.kind != PreparedKind::kMig) continue;
    if (impl_->reserved_.emplace(d.device, uid_).second) names_.push_back(d.device);
  }
  return OkStatus();
}

std::optional<NodeInventory> Preparer::Impl::CachedInventory() const {
  MutexLock lock(mu_);
  return inventory_;
}

StatusOr<NodeInventory> Preparer::Impl::InventoryToRelease(const PreparedClaim& claim) {
  // Only a vHCU we made is checked against the node before it is destroyed
  // (its id may have been reused); marks of whole cards are just removed.
  for (const PreparedDevice& d : claim.devices) {
    if (d.kind == PreparedKind::kDynamicVhcu) return backend_->Discover();
  }
  return NodeInventory{};
}

Status Preparer::Impl::EnsureClaimSpec(const PreparedClaim& claim, bool* rewritten) {
  *rewritten = false;
  if (!claim.adopted_from.empty()) return OkStatus();  // its specs and marks are that driver's
  // A whole-card mark that a crash kept from being written, or that a power
  // cut lost or left empty (it is not forced to disk): written again.
  for (const PreparedDevice& d : claim.devices) {
    if (d.kind != PreparedKind::kCard || d.mark.empty()) continue;
    const std::string mark = fs_.Mark(d.mark);
    struct stat st {};
    if (::stat(mark.c_str(), &st) == 0 && st.st_size > 0) continue;
    HCUDP_RETURN_IF_ERROR(vhcus_
                              ->MarkWholeCard({claim.owner, BaseRequestName(d.request)}, d.card,
                                              VhcuManager::MarkDurability::kRecoverable)
                              .status());
  }
  const bool has_spec =
      std::any_of(claim.devices.begin(), claim.devices.end(),
                  [](const PreparedDevice& d) { return d.kind != PreparedKind::kCard; });
  if (!has_spec) return OkStatus();  // whole cards only: their spec is the node's
  const std::string path = ClaimSpecPath(claim.uid);
  if (::access(path.c_str(), F_OK) == 0) return OkStatus();
  // The node as last seen; a vHCU made since may be missing from it.
  std::optional<NodeInventory> cached = CachedInventory();
  StatusOr<std::string> spec = cached ? BuildClaimSpec(o_.driver_name, claim, *cached, builder_)
                                      : StatusOr<std::string>(NotFoundError("no inventory"));
  if (!spec.ok()) {
    HCUDP_ASSIGN_OR_RETURN(NodeInventory inventory, backend_->Discover());
    spec = BuildClaimSpec(o_.driver_name, claim, inventory, builder_);
  }
  HCUDP_RETURN_IF_ERROR(spec.status());
  if (spec->empty()) return OkStatus();
  HCUDP_RETURN_IF_ERROR(
      WriteSpecFile(CdiDir(), ClaimSpecFileName(o_.driver_name, claim.uid), *spec));
  *rewritten = true;
  return OkStatus();
}

std::map<std::string, std::string> Preparer::Impl::HeldCardEntries() {
  std::set<std::string> held;
  std::string previous;
  {
    MutexLock lock(mu_);
    for (const auto& [uid, claim] : claims_) {
      for (const PreparedDevice& d : claim.devices) {
        if (d.kind == PreparedKind::kCard) held.insert(d.device);
      }
    }
    previous = !wanted_spec_.empty() ? wanted_spec_ : whole_card_spec_;
  }
  if (held.empty()) return {};
  if (previous.empty()) {  // the first spec of this process: the one on disk
    StatusOr<std::string> on_disk =
        file_util::ReadFile(CdiDir() + "/" + WholeCardSpecFileName(o_.driver_name));
    if (on_disk.ok()) previous = std::move(*on_disk);
  }
  std::map<std::string, std::string> kept = WholeCardSpecEntries(previous);
  for (auto it = kept.begin(); it != kept.end();) {
    it = held.count(it->first) != 0 ? std::next(it) : kept.erase(it);
  }
  return kept;
}

Status Preparer::Impl::WriteWholeCardSpec(const NodeInventory& inventory) {
  // A card whose state is unknown keeps its entry (from its last known DRI
  // nodes, by its BDF), and so does a card a prepared claim holds while it
  // is missed or unknown (from the spec written before): a running pod's
  // container restart must still resolve it.
  const std::map<std::string, std::string> held = HeldCardEntries();
  std::vector<std::string> skipped;
  std::string spec = BuildWholeCardSpec(o_.driver_name, inventory, builder_, &skipped, held);
  for (const std::string& s : skipped) LOG(WARNING) << "whole-card CDI spec leaves out " << s;
  for (const auto& held_entry : held) {
    // Not a structured binding: clang 14 (the asan preset) cannot capture one.
    const std::string& name = held_entry.first;
    if (std::none_of(inventory.cards.begin(), inventory.cards.end(),
                     [&](const Card& c) { return CardDeviceName(c) == name; })) {
      VLOG(1) << "whole-card CDI spec keeps " << name
              << ": a prepared claim holds it, the node does not list it now";
    }
  }
  {
    MutexLock lock(mu_);
    inventory_ = inventory;  // Prepare plans from the newest at once
    wanted_spec_ = std::move(spec);
    ++spec_generation_;
    if (spec_writer_) return OkStatus();  // the writer at work writes ours next
    spec_writer_ = true;
  }
  const std::string path = CdiDir() + "/" + WholeCardSpecFileName(o_.driver_name);
  Status result;
  bool first = true;
  for (;;) {
    std::string want;
    uint64_t generation = 0;
    bool written = false;
    {
      MutexLock lock(mu_);
      want = wanted_spec_;
      generation = spec_generation_;
      written = want == whole_card_spec_;
    }
    result = OkStatus();
    if (!written || ::access(path.c_str(), F_OK) != 0) {
      result = WriteSpecFile(CdiDir(), WholeCardSpecFileName(o_.driver_name), want);
    }
    const bool stop = first && Crash(PrepareStep::kWholeCardSpecWritten);
    first = false;
    MutexLock lock(mu_);
    if (result.ok()) whole_card_spec_ = std::move(want);
    if (stop || generation == spec_generation_) {
      spec_writer_ = false;
      return stop ? AbortedError("stopped after the whole-card spec") : result;
    }
    // A newer inventory came while we wrote: write its spec too.
  }
}

}  // namespace hcudp::dra
