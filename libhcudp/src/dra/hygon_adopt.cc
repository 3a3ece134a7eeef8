// Migration from Hygon's k8s-hcu-dra-driver (doc/dra.md): the claims it left
// prepared become checkpoint entries at start, so that our Unprepare frees
// their vHCUs and a Prepare answers their devices; once one is unprepared it
// leaves Hygon's state file too, which therefore lists exactly the adopted
// claims still prepared (what a rollback to Hygon's driver must resume).
#include <sys/stat.h>

#include <set>

#include "dra/hygon_state.h"
#include "dra/prepare_impl.h"
#include "hcudp_internal/clock_wait.h"
#include "hcudp_internal/file_util.h"
#include "hcudp_internal/log.h"

namespace hcudp::dra {
namespace {

constexpr mode_t kHygonFileMode = 0644;

bool Exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

// Our entry for Hygon's record of a claim, checked against the node: every
// card where the record says (slice name and index agree), every vHCU on its
// card. FailedPrecondition naming what does not match: such a claim is not
// ours to free.
// `holdings`: the ledger; `adopted`: vHCU ids adopted since it was read.
StatusOr<PreparedClaim> AdoptedEntry(const HygonClaim& h, const NodeInventory& inventory,
                                     const Holdings& holdings, const std::set<int>& adopted) {
  PreparedClaim pc;
  pc.uid = h.uid;
  pc.state = ClaimState::kPrepared;
  pc.adopted_from = std::string(kHygonDriverId);
  pc.owner = h.devices.front().pod_uid.empty() ? h.uid : h.devices.front().pod_uid;
  for (const HygonDevice& hd : h.devices) {
    for (const UnknownCard& u : inventory.unknown_cards) {
      // A card that cannot be read now (or one never read, which may be
      // any): adopted once it reads, on a later tick.
      if (u.last_known.bdf.empty() || CardDeviceName(u.last_known.bdf) == hd.parent_device) {
        return UnavailableError("card " + hd.parent_device + " cannot be read now");
      }
    }
    StatusOr<DeviceTarget> target = ResolveDevice(inventory, hd.parent_device);
    if (!target.ok() || target->kind != PreparedKind::kCard) {
      return FailedPreconditionError("device " + hd.parent_device + " is not a card of this node");
    }
    if (target->card != hd.card) {
      return FailedPreconditionError("device " + hd.parent_device + " is card " +
                                     std::to_string(target->card) + " here, card " +
                                     std::to_string(hd.card) + " in the record");
    }
    const Card* card = inventory.FindCard(target->card);
    if (card == nullptr) return FailedPreconditionError("card " + hd.parent_device + " is gone");
    PreparedDevice d;
    d.request = hd.request;
    d.pool = hd.pool;
    d.device = hd.parent_device;
    d.card = card->index;
    d.card_bdf = card->bdf;
    d.mark = hd.mark;
    d.cdi_ids = {hd.cdi_id};
    if (!hd.whole_card) {
      Lookup<Vhcu> found = inventory.LookupVhcu(hd.vhcu_id);
      if (found.certainty() == Certainty::kUnknown) {
        // Left to the next start (Hygon's file is untouched until then).
        return UnavailableError("vHCU " + std::to_string(hd.vhcu_id) +
                                " cannot be read now: " + found.why());
      }
      if (found.certainty() != Certainty::kFound || found.value().card_bdf != card->bdf) {
        return FailedPreconditionError("vHCU " + std::to_string(hd.vhcu_id) + " is not on card " +
                                       card->bdf);
      }
      const Vhcu* v = &found.value();
      // Unprepare destroys a vHCU through its mark only.
      if (hd.mark.empty()) {
        return FailedPreconditionError("vHCU " + std::to_string(hd.vhcu_id) +
                                       " has no mark file recorded");
      }
      // Never a vHCU someone else holds (issue 28, repro 6): the id may have
      // been reused for one of our claims or a HAMi pod since Hygon's
      // driver recorded it; our Unprepare would destroy theirs. The ledger
      // says, this claim's own record and mark aside.
      if (adopted.count(v->id) != 0) {
        return FailedPreconditionError("vHCU " + std::to_string(v->id) +
                                       " was adopted for another claim");
      }
      Holders holders = holdings.Of(DeviceRef::OfVhcu(*v));
      if (holders.certainty() == Certainty::kUnknown) {
        return UnavailableError("vHCU " + std::to_string(v->id) + ": " + holders.why());
      }
      for (const Holder& other : holders.holders()) {
        const bool itself = (other.source == HolderSource::kHygonClaim && other.owner == h.uid) ||
                            (other.source == HolderSource::kHamiMark &&
                             other.path.substr(other.path.rfind('/') + 1) == hd.mark);
        if (!itself) {
          return FailedPreconditionError("vHCU " + std::to_string(v->id) + " is held by " +
                                         other.describe);
        }
      }
      d.kind = PreparedKind::kDynamicVhcu;
      d.vhcu_id = v->id;
      d.compute_units = v->compute_units;
      d.memory_mib = v->memory_mib;
    }
    pc.devices.push_back(std::move(d));
  }
  return pc;
}

}  // namespace

std::string Preparer::Impl::HygonStatePath() const {
  return CdiDir() + "/" + std::string(kHygonStateFileName);
}

bool Preparer::Impl::AdoptHygonClaims(const NodeInventory& inventory, RecoverResult* result,
                                      const std::string& only_uid) {
  const std::string path = HygonStatePath();
  StatusOr<std::string> text = ReadHygonState(path);
  if (!text.ok()) {
    if (text.status().code() != StatusCode::kNotFound) {
      LOG(ERROR) << "Hygon's DRA driver state not adopted: " << text.status().ToString()
                 << " (left as it is; nothing it names is destroyed)";
    }
    return false;
  }
  StatusOr<std::vector<HygonClaim>> claims = ParseHygonState(*text);
  if (!claims.ok()) {
    LOG(ERROR) << path << " not adopted: " << claims.status().message()
               << " (left as it is; nothing it names is destroyed)";
    return false;
  }
  // Who holds what (our checkpoint, marks, intents), read now: Recover runs
  // before the prepared claims are loaded.
  const Holdings holdings = ReadHoldings();
  std::set<int> held;  // vHCU ids adopted by this pass
  bool deferred = false;
  for (const HygonClaim& h : *claims) {
    if (h.devices.empty()) continue;  // nothing prepared, nothing to free
    if (!only_uid.empty() && h.uid != only_uid) continue;
    if (!h.rejected.empty()) {
      LOG(ERROR) << "claim " << h.uid << " of Hygon's DRA driver not adopted: " << h.rejected
                 << " (its devices are left as they are)";
      continue;
    }
    StatusOr<PreparedClaim> ours = store_.Read(h.uid);
    if (ours.ok()) continue;  // adopted at an earlier start (or ours)
    if (ours.status().code() != StatusCode::kNotFound) {
      LOG(ERROR) << "claim " << h.uid
                 << " of Hygon's DRA driver not adopted: " << ours.status().ToString();
      continue;
    }
    StatusOr<PreparedClaim> entry = AdoptedEntry(h, inventory, holdings, held);
    Status st = entry.status();
    if (st.ok()) {
      // A vHCU's mark lost (Hygon's driver rewrites them too): written
      // again, or our Unprepare would take the vHCU for released.
      for (const PreparedDevice& d : entry->devices) {
        const std::string mark = fs_.Mark(d.mark);
        if (d.kind != PreparedKind::kDynamicVhcu || Exists(mark)) continue;
        st = file_util::MakeDirs(file_util::ParentDir(mark), 0755);
        if (st.ok()) {
          st = file_util::WriteFileAtomic(mark, hami::FormatMarkFileTime(clock_.WallNow()),
                                          kHygonFileMode, file_util::Durability::kSyncFileAndDirectory);
        }
        if (!st.ok()) break;
        LOG(INFO) << "claim " << h.uid << ": mark " << d.mark << " written again";
      }
    }
    if (st.ok()) {
      entry->boot_id = boot_id_;
      st = store_.Write(*entry);
    }
    if (!st.ok()) {
      // Unknown now (a card or vHCU that cannot be read): every tick tries
      // again. Otherwise not ours to free: left as it is.
      if (st.code() == StatusCode::kUnavailable) deferred = true;
      LOG_EVERY_N(WARNING, 30) << "claim " << h.uid
                               << " of Hygon's DRA driver not adopted: " << st.message()
                               << (st.code() == StatusCode::kUnavailable
                                       ? " (tried again on every tick)"
                                       : " (its devices are left as they are)");
      continue;
    }
    for (const PreparedDevice& d : entry->devices) {
      if (d.vhcu_id >= 0) held.insert(d.vhcu_id);
    }
    ++result->adopted;
    {
      MutexLock lock(mu_);
      claims_[entry->uid] = *entry;
    }
    std::string ids;
    for (const PreparedDevice& d : entry->devices) ids += " " + d.cdi_ids.front();
    LOG(INFO) << "adopted claim " << h.uid << " from Hygon's DRA driver (" << path << "):" << ids;
  }
  return deferred;
}

Status Preparer::Impl::AdoptForUnprepare(const ClaimRef& ref) {
  std::optional<NodeInventory> cached = CachedInventory();
  StatusOr<NodeInventory> inventory =
      cached ? StatusOr<NodeInventory>(std::move(*cached)) : backend_->Discover();
  if (!inventory.ok())
    return UnavailableError("discovering the node: " + inventory.status().message());
  RecoverResult result;
  if (AdoptHygonClaims(*inventory, &result, ref.uid)) {
    return UnavailableError("claim " + ref.uid +
                            " of Hygon's DRA driver cannot be adopted yet (its devices are "
                            "unknown now); retried");
  }
  if (result.adopted == 0) {
    // Listed, but not ours to free (a device someone else holds, or not on
    // this node): kubelet is done with it, so it leaves Hygon's file only.
    return RewriteHygonState({ref.uid});
  }
  return OkStatus();
}

bool Preparer::Impl::HygonLists(const std::string& uid) const {
  StatusOr<std::string> text = ReadHygonState(HygonStatePath());
  if (!text.ok()) return false;
  StatusOr<std::vector<HygonClaim>> claims = ParseHygonState(*text);
  if (!claims.ok()) return false;
  for (const HygonClaim& h : *claims) {
    if (h.uid == uid) return true;
  }
  return false;
}

void Preparer::Impl::CompleteAdopted(PreparedClaim* claim, const ParsedClaim& parsed) {
  bool changed = false;
  if (claim->name.empty()) {
    claim->namespace_name = parsed.namespace_name;
    claim->name = parsed.name;
    changed = true;
  }
  // Hygon's driver recorded no shareID: the allocation's, result by result.
  std::vector<bool> used(parsed.results.size(), false);
  for (PreparedDevice& d : claim->devices) {
    if (!d.share_id.empty()) continue;
    for (size_t i = 0; i < parsed.results.size(); ++i) {
      const AllocatedDevice& r = parsed.results[i];
      if (used[i] || r.request != d.request || r.pool != d.pool || r.device != d.device) continue;
      used[i] = true;
      if (!r.share_id.empty()) {
        d.share_id = r.share_id;
        changed = true;
      }
      break;
    }
  }
  if (!changed) return;
  Status st = store_.Write(*claim);
  if (!st.ok()) {
    LOG(WARNING) << "claim " << claim->uid << ": checkpoint: " << st.ToString();
    return;
  }
  MutexLock lock(mu_);
  auto it = claims_.find(claim->uid);
  if (it != claims_.end() && it->second.state == ClaimState::kPrepared) it->second = *claim;
}

Status Preparer::Impl::ForgetHygonClaim(const PreparedClaim& claim) {
  if (claim.adopted_from != kHygonDriverId) return OkStatus();
  // Hygon's spec of each of its vHCUs: nobody may name that CDI ID any more.
  for (const PreparedDevice& d : claim.devices) {
    if (d.kind != PreparedKind::kDynamicVhcu || d.cdi_ids.empty()) continue;
    const std::string name = CdiDeviceNameOf(d.cdi_ids.front());
    if (name.empty()) continue;
    Status st = file_util::RemoveFile(CdiDir() + "/" + std::string(kHygonVhcuSpecPrefix) + name +
                                      std::string(kHygonSpecSuffix));
    if (!st.ok()) LOG(WARNING) << st.ToString();
  }
  // One rewriter at a time (outside the lock); it takes every claim queued
  // while it works, and tells each its outcome: the caller removes its
  // entry only once Hygon's file no longer lists the claim.
  uint64_t ticket;
  {
    MutexLock lock(mu_);
    hygon_forget_.push_back(claim.uid);
    ticket = ++hygon_queued_;
    if (hygon_writer_) {
      WaitUntil(clock_, mu_, hygon_cv_, clock_.Now() + std::chrono::seconds(10),
                [&]() HCUDP_REQUIRES(mu_) { return hygon_done_ >= ticket; });
      if (hygon_done_ < ticket) return UnavailableError(HygonStatePath() + ": rewrite pending");
      Status mine = hygon_status_[claim.uid];
      hygon_status_.erase(claim.uid);
      return mine;
    }
    hygon_writer_ = true;
  }
  for (;;) {
    std::vector<std::string> uids;
    uint64_t upto;
    {
      MutexLock lock(mu_);
      uids.swap(hygon_forget_);
      upto = hygon_queued_;
      if (uids.empty()) {
        hygon_writer_ = false;
        break;
      }
    }
    Status st = RewriteHygonState(uids);
    {
      MutexLock lock(mu_);
      for (const std::string& uid : uids) hygon_status_[uid] = st;
      hygon_done_ = upto;
    }
    hygon_cv_.notify_all();
  }
  MutexLock lock(mu_);
  Status mine = hygon_status_[claim.uid];
  hygon_status_.erase(claim.uid);
  return mine;
}

Status Preparer::Impl::RewriteHygonState(const std::vector<std::string>& uids) {
  const std::string path = HygonStatePath();
  StatusOr<std::string> text = ReadHygonState(path);
  if (!text.ok()) {
    if (text.status().code() == StatusCode::kNotFound) return OkStatus();
    LOG(WARNING) << text.status().ToString();
    return UnavailableError(path + ": " + text.status().message());
  }
  StatusOr<std::string> kept = RemoveHygonClaims(*text, uids);
  Status st = kept.status();
  if (st.ok() && *kept != *text) {
    st = file_util::WriteFileAtomic(path, *kept, kHygonFileMode,
                                    file_util::Durability::kSyncFileAndDirectory);
  }
  if (!st.ok()) {
    LOG(WARNING) << path << ": adopted claims not removed: " << st.message() << " (retried)";
    return UnavailableError(path + ": adopted claims not removed: " + st.message());
  }
  StatusOr<std::vector<HygonClaim>> left = ParseHygonState(*kept);
  if (!left.ok()) return OkStatus();
  for (const HygonClaim& c : *left) {
    if (!c.devices.empty()) return OkStatus();
  }
  // No claim names Hygon's whole-card spec any more (it carries /dev/mem):
  // removed. Hygon's driver writes it again at its start on a rollback.
  st = file_util::RemoveFile(CdiDir() + "/" + std::string(kHygonCardSpecFileName));
  if (!st.ok()) LOG(WARNING) << st.ToString();
  return OkStatus();
}

}  // namespace hcudp::dra
