// Preparer::Recover and Tick: the checkpoint against the node and the API
// after a restart or a reboot.

#include <algorithm>

#include "dra/dra_cdi_spec.h"
#include "dra/prepare_impl.h"
#include "hcudp/dra/agent.h"
#include "hcudp_internal/file_util.h"
#include "hcudp_internal/log.h"

namespace hcudp::dra {
namespace {

// The claim's devices by the one verdict (PreparedDeviceHealth): kUnknown
// when the node cannot say for one of them (a card whose queries failed or
// that discovery missed, a torn conf, /etc/vdev unreadable); kAbsent when
// one is gone; kFound otherwise. Only for what Recover and Tick keep and
// log: a device gone never unprepares its claim (kubelet's Unprepare or
// the API server does), it is Unhealthy in the health stream.
Certainty StillThere(const PreparedClaim& claim, const NodeInventory& inventory, std::string* why) {
  std::string gone;
  for (const PreparedDevice& d : claim.devices) {
    DeviceHealth h = PreparedDeviceHealth(d, inventory);
    if (h.health == DeviceHealthStatus::kUnknown) {
      *why = h.message;
      return Certainty::kUnknown;
    }
    if (gone.empty() && h.message.find("no longer on the node") != std::string::npos) {
      gone = h.message;
    }
  }
  if (gone.empty()) return Certainty::kFound;
  *why = gone;
  return Certainty::kAbsent;
}

// A 404 that says this claim does not exist ("resourceclaims... \"<name>\" not
// found"). A 404 without it (an API server that does not serve
// resource.k8s.io/v1, a proxy's page) says nothing about the claim: deleting
// on it would unprepare every claim of the node.
bool ClaimIsGone(const Status& status, const ClaimRef& ref) {
  return IsNotFound(status) &&
         status.message().find("\"" + ref.name + "\" not found") != std::string::npos;
}

// Temp files of atomic writes a crash interrupted (".<name>.<pid>.<n>.tmp",
// file_util) whose <name> starts with `prefix`: nobody else writes them.
void RemoveTempLeftovers(const std::string& dir, const std::string& prefix) {
  StatusOr<std::vector<std::string>> names = file_util::ListFileNames(dir);
  if (!names.ok()) return;
  for (const std::string& name : *names) {
    const std::string_view suffix = file_util::kTempSuffix;
    if (name.rfind("." + prefix, 0) != 0 || name.size() <= suffix.size() ||
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) {
      continue;
    }
    Status st = file_util::RemoveFile(dir + "/" + name);
    if (st.ok()) {
      LOG(INFO) << "removed " << dir << "/" << name << " (an interrupted write)";
    } else {
      LOG(WARNING) << st.ToString();
    }
  }
}

}  // namespace

void Preparer::Impl::AddPending(const ClaimRef& ref) {
  MutexLock lock(mu_);
  Pending& p = pending_[ref.uid];
  p.ref = ref;
  p.delay =
      p.delay.count() == 0 ? o_.recheck_initial_delay : std::min(p.delay * 2, o_.recheck_max_delay);
  p.due = clock_.Now() + p.delay;
}

// One recorded claim against the API: gone (404, or replaced) → unprepare.
void Preparer::Impl::Check(const ClaimRef& ref, RecoverResult* result, bool* api_down) {
  if (ref.name.empty()) {
    // Adopted, and no call has named it yet: it cannot be asked for, and
    // kubelet's Unprepare is what frees it.
    ++result->kept;
    MutexLock lock(mu_);
    pending_.erase(ref.uid);
    return;
  }
  StatusOr<std::string> json = fetch_(ref, std::nullopt);
  bool gone = false;
  if (json.ok()) {
    StatusOr<ParsedClaim> parsed = ParseResourceClaim(*json, o_.driver_name);
    if (!parsed.ok()) {
      // Not a claim (a proxy's page, a broken answer): it tells nothing
      // about this one, which is asked again later, neither kept for good
      // nor unprepared.
      LOG(WARNING) << "claim " << ref.namespace_name << "/" << ref.name
                   << " could not be checked: " << parsed.status().ToString()
                   << " (asked again later)";
      ++result->pending;
      AddPending(ref);
      return;
    }
    gone = parsed->uid != ref.uid;
  } else if (ClaimIsGone(json.status(), ref)) {
    gone = true;
  } else {
    LOG(WARNING) << "claim " << ref.namespace_name << "/" << ref.name
                 << " could not be checked: " << json.status().ToString() << " (asked again later)";
    if (Retryable(json.status())) *api_down = true;
    ++result->pending;
    AddPending(ref);
    return;
  }
  if (!gone) {
    ++result->kept;
    MutexLock lock(mu_);
    pending_.erase(ref.uid);
    return;
  }
  Status st = Unprepare(ref);
  if (st.ok()) {
    ++result->unprepared;
    LOG(INFO) << "claim " << ref.namespace_name << "/" << ref.name << " (" << ref.uid
              << ") no longer exists: unprepared";
  } else {
    LOG(WARNING) << "claim " << ref.uid << " no longer exists; unprepare: " << st.ToString();
    ++result->pending;
    AddPending(ref);
  }
}

StatusOr<RecoverResult> Preparer::Impl::Recover() {
  RecoverResult result;
  StatusOr<std::string> boot = ReadBootId(o_.host_root);
  if (boot.ok()) {
    boot_id_ = *boot;
  } else {
    LOG(WARNING) << "no boot ID: " << boot.status().ToString()
                 << " (reboots are told by the node instead)";
  }
  HCUDP_RETURN_IF_ERROR(vhcus_->Recover([](const std::string&) { return false; }).status());
  HCUDP_ASSIGN_OR_RETURN(NodeInventory inventory, backend_->Discover());
  RemoveTempLeftovers(store_.dir(), "");
  RemoveTempLeftovers(CdiDir(), o_.driver_name + "-");
  if (AdoptHygonClaims(inventory, &result)) {  // migration from Hygon's DRA driver
    MutexLock lock(mu_);
    hygon_retry_ = true;  // some wait for a device to read again: every Tick tries
  }
  HCUDP_ASSIGN_OR_RETURN(std::vector<PreparedClaim> entries, store_.ReadAll(&result.bad_entries));
  for (const std::string& bad : result.bad_entries) {
    LOG(ERROR) << "DRA checkpoint entry ignored (left in place for inspection): " << bad;
  }
  {
    MutexLock lock(mu_);
    for (const PreparedClaim& c : entries) {
      if (c.state == ClaimState::kPrepared) claims_[c.uid] = c;
    }
  }
  // Once the prepared claims are known: a card one holds that this start
  // misses keeps its entry from the spec on disk.
  Status spec = WriteWholeCardSpec(inventory);
  if (!spec.ok()) LOG(WARNING) << spec.ToString();
  std::vector<ClaimRef> to_check;
  for (PreparedClaim& c : entries) {
    const ClaimRef ref{c.namespace_name, c.name, c.uid};
    if (c.state == ClaimState::kPreparing) {
      // A Prepare that never answered: kubelet asks again if it still wants it.
      Status st = AdoptUnrecordedMarks(&c, inventory);
      if (st.ok()) st = Undo(c, inventory, false);
      if (st.ok()) {
        ++result.rolled_back;
      } else {
        LOG(WARNING) << "rolling back claim " << c.uid << ": " << st.ToString();
        ++result.pending;
        AddPending(ref);
      }
      continue;
    }
    std::string why;
    const Certainty there = StillThere(c, inventory, &why);
    if (there == Certainty::kUnknown) {
      // Not gone: unreadable now. The entry, its marks and its CDI spec stay;
      // every Tick looks again.
      ++result.unknown;
      KeepUnknown(ref, why);
      to_check.push_back(ref);
      continue;
    }
    if (there == Certainty::kAbsent) {
      // Gone (a reboot, a card missing from this start's discovery): the
      // claim stays prepared, its devices Unhealthy, until kubelet's
      // Unprepare or the API server says it is gone (issue 28, repro 2).
      LOG(WARNING) << "claim " << c.uid << ": " << why
                   << "; kept prepared (Unhealthy) until kubelet unprepares it";
    }
    bool rewritten = false;
    Status st = EnsureClaimSpec(c, &rewritten);
    if (!st.ok()) LOG(WARNING) << "claim " << c.uid << ": CDI spec: " << st.ToString();
    if (rewritten) ++result.specs_rewritten;
    if (!boot_id_.empty() && c.boot_id != boot_id_) {
      c.boot_id = boot_id_;
      Status written = store_.Write(c);
      if (!written.ok())
        LOG(WARNING) << "claim " << c.uid << ": checkpoint: " << written.ToString();
      MutexLock lock(mu_);
      claims_[c.uid] = c;
    }
    to_check.push_back(ref);
  }
  // The API last: specs are back before any GET can block.
  bool api_down = false;
  for (const ClaimRef& ref : to_check) {
    if (api_down) {  // one timeout is enough to know: the rest wait for Tick
      ++result.pending;
      AddPending(ref);
      continue;
    }
    Check(ref, &result, &api_down);
  }
  LOG(INFO) << "DRA recovery: " << result.kept << " kept, " << result.specs_rewritten
            << " CDI specs rewritten, " << result.rolled_back << " rolled back, "
            << result.unprepared << " unprepared, " << result.pending << " pending, "
            << result.unknown << " on unknown devices";
  return result;
}

void Preparer::Impl::KeepUnknown(const ClaimRef& ref, const std::string& why) {
  const Clock::TimePoint now = clock_.Now();
  bool log = false;
  {
    MutexLock lock(mu_);
    Unknown& u = unknown_[ref.uid];
    u.ref = ref;
    // Once per claim and reason, then at most every kUnknownLogEvery.
    log = u.why != why || u.logged == Clock::TimePoint{} || now - u.logged >= kUnknownLogEvery;
    if (log) u.logged = now;
    u.why = why;
  }
  if (log) {
    LOG(WARNING) << "claim " << ref.namespace_name << "/" << ref.name << " (" << ref.uid
                 << "): " << why << "; kept prepared (mark, CDI spec and checkpoint stay), "
                 << "checked again on every tick";
  }
}

void Preparer::Impl::RecheckUnknown(RecoverResult* result) {
  std::vector<ClaimRef> refs;
  {
    MutexLock lock(mu_);
    for (const auto& [uid, u] : unknown_) refs.push_back(u.ref);
  }
  if (refs.empty()) return;
  // The node as the watcher last published it (WriteWholeCardSpec): a
  // re-check is no discovery of its own, so it never counts as a look at
  // a missing card (issue 28).
  std::optional<NodeInventory> inventory = CachedInventory();
  if (!inventory) {
    result->unknown += static_cast<int>(refs.size());
    return;
  }
  for (const ClaimRef& ref : refs) {
    InFlight guard(this, ref.uid);
    if (!guard.ok()) {  // a Prepare/Unprepare of it runs: next tick
      ++result->unknown;
      continue;
    }
    StatusOr<PreparedClaim> entry = store_.Read(ref.uid);
    if (!entry.ok() && entry.status().code() == StatusCode::kNotFound) {
      MutexLock lock(mu_);
      unknown_.erase(ref.uid);  // unprepared meanwhile
      continue;
    }
    if (!entry.ok() || entry->state != ClaimState::kPrepared) {
      ++result->unknown;
      continue;
    }
    std::string why;
    switch (StillThere(*entry, *inventory, &why)) {
      case Certainty::kUnknown:
        ++result->unknown;
        KeepUnknown(ref, why);
        break;
      case Certainty::kFound:
      case Certainty::kAbsent: {
        {
          MutexLock lock(mu_);
          unknown_.erase(ref.uid);
        }
        // Gone is no reason to unprepare: the health stream says Unhealthy.
        LOG(INFO) << "claim " << ref.namespace_name << "/" << ref.name << " (" << ref.uid
                  << "): its devices are readable again" << (why.empty() ? "" : " (" + why + ")")
                  << "; kept";
        bool rewritten = false;
        Status st = EnsureClaimSpec(*entry, &rewritten);
        if (!st.ok()) LOG(WARNING) << "claim " << ref.uid << ": CDI spec: " << st.ToString();
        if (rewritten) ++result->specs_rewritten;
        ++result->kept;
        break;
      }
    }
  }
  if (result->kept > 0) Changed();
}

RecoverResult Preparer::Impl::Tick() {
  RecoverResult result;
  RecheckUnknown(&result);
  bool adopt_again;
  {
    MutexLock lock(mu_);
    adopt_again = hygon_retry_;
  }
  if (std::optional<NodeInventory> inventory = CachedInventory(); adopt_again && inventory) {
    const bool still = AdoptHygonClaims(*inventory, &result);
    {
      MutexLock lock(mu_);
      hygon_retry_ = still;
    }
    if (result.adopted > 0) Changed();
  }
  std::vector<ClaimRef> due;
  {
    MutexLock lock(mu_);
    const Clock::TimePoint now = clock_.Now();
    for (const auto& [uid, p] : pending_) {
      if (p.due <= now) due.push_back(p.ref);
    }
  }
  bool api_down = false;
  for (const ClaimRef& ref : due) {
    if (api_down) {
      ++result.pending;
      AddPending(ref);
      continue;
    }
    StatusOr<PreparedClaim> entry = store_.Read(ref.uid);
    if (!entry.ok() && entry.status().code() == StatusCode::kNotFound) {
      MutexLock lock(mu_);
      pending_.erase(ref.uid);
      continue;
    }
    if (entry.ok() && entry->state == ClaimState::kPreparing) {
      Status st = Unprepare(ref);  // a roll-back that failed before
      if (st.ok()) {
        ++result.rolled_back;
      } else {
        ++result.pending;
        AddPending(ref);
      }
      continue;
    }
    Check(ref, &result, &api_down);
  }
  return result;
}

}  // namespace hcudp::dra
