// Preparer::Unprepare and the undo of a Prepare: release what is provably
// ours, remove the claim's CDI spec, then its checkpoint entry.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "dra/dra_cdi_spec.h"
#include "dra/prepare_impl.h"
#include "hcudp_internal/file_util.h"
#include "hcudp_internal/log.h"

namespace hcudp::dra {

Status Preparer::Impl::ReleaseDevice(const PreparedDevice& d, const NodeInventory& inventory) {
  if (d.mark.empty()) return OkStatus();
  const std::string path = fs_.Mark(d.mark);
  if (::access(path.c_str(), F_OK) != 0) {
    // Only "no such file" says it was released before. Anything else (the
    // mark directory replaced by a file, EACCES, EIO) cannot tell: the claim
    // keeps its record and the caller retries, or the mark would leak.
    const int err = errno;
    if (err == ENOENT) return OkStatus();
    return UnavailableError("mark " + path + ": " + std::strerror(err) +
                            "; cannot tell whether it was released (retried once it reads)");
  }
  HCUDP_ASSIGN_OR_RETURN(hami::MarkFileName mark, hami::ParseMarkFileName(d.mark));
  if (mark.whole_card()) {  // nothing to destroy: the mark only
    return file_util::RemoveFile(path, file_util::Durability::kSyncFileAndDirectory);
  }
  if (mark.vhcu_id >= 0) {
    Lookup<Vhcu> now = inventory.LookupVhcu(mark.vhcu_id);
    switch (now.certainty()) {
      case Certainty::kUnknown:
        // Never destroyed nor unmarked on what cannot be read: the caller
        // retries (kubelet's Unprepare, Tick).
        return UnavailableError("mark " + path + ": " + now.why() +
                                "; kept, not destroyed (retried once it reads)");
      case Certainty::kAbsent:  // gone: only our mark goes
        return file_util::RemoveFile(path, file_util::Durability::kSyncFileAndDirectory);
      case Certainty::kFound: {
        const Vhcu& v = now.value();
        if (v.card_bdf == d.card_bdf && v.compute_units == d.compute_units &&
            v.memory_mib == d.memory_mib) {
          break;
        }
        // The id now names someone else's vHCU: only our mark goes.
        LOG(WARNING) << "vHCU " << mark.vhcu_id << " of mark " << d.mark
                     << " is no longer the one we made (card " << v.card_bdf << ", "
                     << v.compute_units << " CU, " << v.memory_mib
                     << " MiB): not destroyed, mark removed";
        return file_util::RemoveFile(path, file_util::Durability::kSyncFileAndDirectory);
      }
    }
  }
  return vhcus_->Release(mark);
}

Status Preparer::Impl::AdoptUnrecordedMarks(PreparedClaim* claim, const NodeInventory& inventory) {
  std::set<std::string> recorded;
  {
    MutexLock lock(mu_);
    for (const auto& [uid, other] : claims_) {
      if (uid == claim->uid) continue;
      for (const PreparedDevice& d : other.devices) recorded.insert(d.mark);
    }
  }
  for (const PreparedDevice& d : claim->devices) recorded.insert(d.mark);
  HCUDP_ASSIGN_OR_RETURN(std::vector<MarkFile> marks, ListMarkFiles(o_.host_root, nullptr));
  for (PreparedDevice& d : claim->devices) {
    if (!d.mark.empty()) continue;
    const std::string request = BaseRequestName(d.request);
    for (const MarkFile& m : marks) {
      const std::string file = FileNameOf(m.path);
      if (recorded.count(file) > 0 || m.name.pod_uid != claim->owner ||
          m.name.container != request || m.name.card != d.card) {
        continue;
      }
      if (d.kind == PreparedKind::kCard && m.name.whole_card()) {
        d.mark = file;
      } else if (d.kind == PreparedKind::kDynamicVhcu && !m.name.whole_card()) {
        Lookup<Vhcu> v = inventory.LookupVhcu(m.name.vhcu_id);
        if (v.certainty() == Certainty::kUnknown) {
          // It may be this claim's vHCU: undoing without it would leak it.
          return UnavailableError("claim " + claim->uid + ": mark " + m.path + ": " + v.why());
        }
        if (v.certainty() == Certainty::kAbsent || v.value().compute_units != d.compute_units ||
            v.value().memory_mib != d.memory_mib) {
          continue;
        }
        d.mark = file;
        d.vhcu_id = m.name.vhcu_id;
      }
      if (!d.mark.empty()) {
        recorded.insert(file);
        break;
      }
    }
  }
  return OkStatus();
}

Status Preparer::Impl::Undo(PreparedClaim claim, const NodeInventory& inventory,
                            bool unprepare_hooks) {
  // Once one device is released the entry no longer describes a prepared
  // claim: a vHCU may be destroyed (the driver may give its index to another
  // claim's vHCU) while the next one fails to go. So before the first
  // release it is made "preparing", durably, like a Prepare that never
  // answered: a Prepare of the claim undoes the rest and prepares anew
  // rather than answering its CDI IDs, Recover rolls it back, kubelet's
  // Unprepare retry finishes it.
  // A vHCU whose state is unknown stops the undo before anything changes:
  // the entry stays "prepared" and the caller retries.
  for (const PreparedDevice& d : claim.devices) {
    if (d.mark.empty() || d.vhcu_id < 0) continue;
    if (Lookup<Vhcu> v = inventory.LookupVhcu(d.vhcu_id); v.certainty() == Certainty::kUnknown) {
      return UnavailableError("claim " + claim.namespace_name + "/" + claim.name + ": " + v.why() +
                              "; nothing released, retried once it reads");
    }
  }
  if (claim.state == ClaimState::kPrepared &&
      std::any_of(claim.devices.begin(), claim.devices.end(),
                  [](const PreparedDevice& d) { return !d.mark.empty(); })) {
    claim.state = ClaimState::kPreparing;
    HCUDP_RETURN_IF_ERROR(store_.Write(claim));
    MutexLock lock(mu_);
    auto it = claims_.find(claim.uid);
    if (it != claims_.end()) it->second.state = ClaimState::kPreparing;
  }
  Status failed;
  for (const PreparedDevice& d : claim.devices) {
    Status st = ReleaseDevice(d, inventory);
    if (!st.ok()) {
      LOG(WARNING) << "claim " << claim.uid << ": releasing " << d.device << ": " << st.ToString();
      if (failed.ok()) failed = st;
      continue;
    }
    if (unprepare_hooks && Crash(PrepareStep::kUnprepareDeviceFreed)) {
      return AbortedError("crash after a device was freed");
    }
  }
  if (!failed.ok()) {
    return UnavailableError("claim " + claim.namespace_name + "/" + claim.name +
                            ": a device could not be released yet: " + failed.message());
  }
  HCUDP_RETURN_IF_ERROR(file_util::RemoveFile(ClaimSpecPath(claim.uid),
                                              file_util::Durability::kSyncFileAndDirectory));
  if (unprepare_hooks && Crash(PrepareStep::kUnprepareSpecRemoved)) {
    return AbortedError("crash after the spec was removed");
  }
  // An adopted claim leaves Hygon's state file first: were our entry gone
  // and the rewrite failed, the next start would adopt it again.
  if (Status st = ForgetHygonClaim(claim); !st.ok()) {
    return UnavailableError("claim " + claim.uid + ": " + st.message() + "; retried");
  }
  HCUDP_RETURN_IF_ERROR(store_.Remove(claim.uid));
  bool changed = false;
  {
    MutexLock lock(mu_);
    changed = claims_.erase(claim.uid) > 0;
    pending_.erase(claim.uid);
    unknown_.erase(claim.uid);
  }
  if (changed) Changed();
  return OkStatus();
}

Status Preparer::Impl::Unprepare(const ClaimRef& ref) {
  HCUDP_RETURN_IF_ERROR(CheckClaimUid(ref.uid));
  InFlight guard(this, ref.uid);
  if (!guard.ok()) return UnavailableError("claim " + ref.uid + ": another call is in progress");
  StatusOr<PreparedClaim> entry = store_.Read(ref.uid);
  if (!entry.ok() && entry.status().code() == StatusCode::kNotFound && HygonLists(ref.uid)) {
    // Hygon's driver prepared it and it was not adopted yet (a card unknown
    // at start): adopted now, then released below.
    HCUDP_RETURN_IF_ERROR(AdoptForUnprepare(ref));
    entry = store_.Read(ref.uid);
  }
  if (!entry.ok() && entry.status().code() == StatusCode::kNotFound) {
    MutexLock lock(mu_);
    claims_.erase(ref.uid);
    return OkStatus();  // never prepared here, or already unprepared
  }
  // An entry that will never decode must not block the pod's deletion.
  if (!entry.ok() && IsUndecodableEntry(entry.status())) {
    return UnprepareUndecodable(ref, entry.status());
  }
  if (!entry.ok()) return entry.status();
  StatusOr<NodeInventory> inventory = InventoryToRelease(*entry);
  if (!inventory.ok())
    return UnavailableError("discovering the node: " + inventory.status().message());
  if (entry->state == ClaimState::kPreparing) {
    HCUDP_RETURN_IF_ERROR(AdoptUnrecordedMarks(&*entry, *inventory));
  }
  HCUDP_RETURN_IF_ERROR(Undo(*entry, *inventory, true));
  LOG(INFO) << "unprepared claim " << entry->namespace_name << "/" << entry->name << " ("
            << entry->uid << ")";
  return OkStatus();
}

}  // namespace hcudp::dra
