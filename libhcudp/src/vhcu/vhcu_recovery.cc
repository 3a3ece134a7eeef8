// Intent resolution of the vHCU manager (Recover, and every Reconcile) and
// the claims hcuctl checks before a destroy; the state table is in
// hcudp/vhcu_manager.h.

#include <algorithm>

#include "hcudp/backend.h"
#include "hcudp/vdev_conf.h"
#include "hcudp/vhcu_manager.h"
#include "hcudp_internal/file_util.h"
#include "hcudp_internal/log.h"
#include "vhcu/intent_record.h"
#include "vhcu/vhcu_manager_impl.h"

namespace hcudp {
namespace {

using internal::IntentRecord;
using internal::OfIntentSize;
using internal::OnIntentCard;

bool EndsWith(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

namespace internal {

Certainty MarkNamesVhcu(const std::string& host_root, const hami::MarkFileName& mark,
                        const Vhcu& vhcu, std::string* why) {
  if (vhcu.card < 0) {
    *why = "its card (" + vhcu.card_bdf + ") was not discovered";
    return Certainty::kUnknown;
  }
  if (mark.card == vhcu.card) return Certainty::kFound;
  const internal::HostFs fs(host_root);
  const std::string conf_path =
      vhcu.conf_path.empty() ? fs.VdevConf(vhcu.id) : fs.Path(vhcu.conf_path);
  StatusOr<std::string> text = file_util::ReadFile(conf_path);
  StatusOr<VdevConf> conf =
      text.ok() ? ParseVdevConf(*text) : StatusOr<VdevConf>(text.status());
  if (!conf.ok()) {
    *why = "its card is index " + std::to_string(vhcu.card) + " now and its conf cannot be read (" +
           conf.status().message() + ")";
    return Certainty::kUnknown;
  }
  if (conf->pci_bus_id != vhcu.card_bdf) {
    *why = "its conf changed since it was read (card " + conf->pci_bus_id + ", was " +
           vhcu.card_bdf + ")";
    return Certainty::kUnknown;
  }
  if (conf->device_id == mark.card) {
    *why = "made on " + vhcu.card_bdf + " when it was card " + std::to_string(mark.card) +
           " (index " + std::to_string(vhcu.card) + " now: the cards were renumbered)";
    return Certainty::kFound;
  }
  *why = "it is on card " + std::to_string(vhcu.card) + " (" + vhcu.card_bdf +
         ") and was made on card " + std::to_string(conf->device_id);
  return Certainty::kAbsent;
}

}  // namespace internal

StatusOr<std::vector<VhcuClaim>> FindVhcuClaims(const std::string& host_root, const Vhcu& vhcu) {
  std::vector<VhcuClaim> claims;
  // Card unknown (its conf unreadable, its card not discovered): by id alone.
  const bool card_known = vhcu.card >= 0;
  HCUDP_ASSIGN_OR_RETURN(std::vector<MarkFile> marks, ListMarkFiles(host_root, nullptr));
  for (const MarkFile& m : marks) {
    if (m.name.whole_card() || m.name.vhcu_id != vhcu.id) continue;
    // By the card's identity, not its index alone (the cards may have been
    // renumbered since the mark was written); unknown counts as a claim.
    std::string why;
    if (internal::MarkNamesVhcu(host_root, m.name, vhcu, &why) != Certainty::kAbsent) {
      claims.push_back({m.name.pod_uid, m.name.container, m.path});
    }
  }
  auto journal = internal::ReadIntentJournal(internal::HostFs(host_root).IntentDir());
  if (journal.ok()) {
    for (const auto& [r, path] : *journal) {
      bool claimed = r.vhcu_id ? *r.vhcu_id == vhcu.id && (!card_known || OnIntentCard(vhcu, r))
                               : card_known && OnIntentCard(vhcu, r) && OfIntentSize(vhcu, r) &&
                                     r.prior_vhcu_ids.count(vhcu.id) == 0;
      if (claimed) claims.push_back({r.pod_uid, r.container, path, r.vhcu_id.has_value()});
    }
  }
  return claims;
}

Status ExcludeFromIntents(const std::string& host_root, const Vhcu& vhcu) {
  HCUDP_ASSIGN_OR_RETURN(
      auto journal, internal::ReadIntentJournal(internal::HostFs(host_root).IntentDir()));
  for (auto& [r, path] : journal) {
    if (r.vhcu_id || !r.prior_vhcu_ids.insert(vhcu.id).second) continue;
    HCUDP_RETURN_IF_ERROR(
        file_util::WriteFileAtomic(path, internal::FormatIntentRecord(r), 0644,
                                   file_util::Durability::kSyncFileAndDirectory)
            .WithContext("excluding vHCU " + std::to_string(vhcu.id) + " from intent " + path));
  }
  return OkStatus();
}

StatusOr<std::vector<std::string>> RemoveStaleMarksOf(const std::string& host_root,
                                                      const Vhcu& vhcu) {
  HCUDP_ASSIGN_OR_RETURN(std::vector<MarkFile> marks, ListMarkFiles(host_root, nullptr));
  std::vector<std::string> removed;
  for (const MarkFile& m : marks) {
    if (m.name.whole_card() || m.name.vhcu_id != vhcu.id) continue;
    HCUDP_RETURN_IF_ERROR(
        file_util::RemoveFile(m.path, file_util::Durability::kSyncFileAndDirectory));
    removed.push_back(m.path);
  }
  return removed;
}

StatusOr<VhcuSweepResult> VhcuManager::Impl::Recover(const PodLivenessFn& is_allocating) {
  VhcuSweepResult result;
  HCUDP_ASSIGN_OR_RETURN(VhcuHostLock host_lock, Lock(options_.lock_timeout));
  HCUDP_ASSIGN_OR_RETURN(std::vector<std::string> names, file_util::ListFileNames(IntentDirPath()));
  for (const std::string& name : names) {
    if (EndsWith(name, ".tmp")) {  // a crash inside an atomic write
      Status removed = file_util::RemoveFile(IntentDirPath() + "/" + name,
                                             file_util::Durability::kSyncFileAndDirectory);
      (void)removed;
    }
  }
  HCUDP_ASSIGN_OR_RETURN(std::vector<Intent> intents, ReadIntents());
  if (intents.empty()) return result;
  HCUDP_ASSIGN_OR_RETURN(NodeInventory inventory, backend_->Discover());
  HCUDP_ASSIGN_OR_RETURN(std::vector<MarkFile> marks, ListMarkFiles(options_.host_root, nullptr));
  ResolveIntents(intents, inventory, marks, is_allocating, &result);
  return result;
}

void VhcuManager::Impl::ResolveIntents(const std::vector<Intent>& intents,
                                       const NodeInventory& inventory,
                                       const std::vector<MarkFile>& marks,
                                       const PodLivenessFn& is_allocating,
                                       VhcuSweepResult* result) {
  std::set<int> claimed_by_intents;
  for (const Intent& i : intents) {
    if (i.record.vhcu_id) claimed_by_intents.insert(*i.record.vhcu_id);
  }
  for (const Intent& intent : intents) {
    ResolveIntent(intent, inventory, marks, claimed_by_intents, is_allocating, result);
  }
}

void VhcuManager::Impl::ResolveIntent(const Intent& intent, const NodeInventory& inventory,
                                      const std::vector<MarkFile>& marks,
                                      const std::set<int>& claimed_by_intents,
                                      const PodLivenessFn& is_allocating, VhcuSweepResult* result) {
  const IntentRecord& r = intent.record;
  auto drop_intent = [&] {
    Status removed =
        file_util::RemoveFile(intent.path, file_util::Durability::kSyncFileAndDirectory);
    if (!removed.ok()) LOG(WARNING) << "intent stays: " << removed.ToString();
    MutexLock lock(mu_);
    reported_.erase(intent.path);
  };
  std::set<int> marked;
  for (const MarkFile& m : marks) {
    if (!m.name.whole_card()) marked.insert(m.name.vhcu_id);
  }

  if (r.vhcu_id) {
    const int id = *r.vhcu_id;
    const hami::MarkFileName own{r.pod_uid, r.container, r.card, id};
    bool has_mark =
        std::any_of(marks.begin(), marks.end(), [&](const MarkFile& m) { return m.name == own; });
    Lookup<Vhcu> found = inventory.LookupVhcu(id);
    if (!has_mark && found.certainty() == Certainty::kUnknown) {
      ++result->left_alone;  // not gone: unreadable in this pass; the intent stays
      return;
    }
    const Vhcu* vhcu = found.certainty() == Certainty::kFound ? &found.value() : nullptr;
    if (has_mark || vhcu == nullptr) {
      drop_intent();  // the mark owns it, or nothing is left
      return;
    }
    if (IsQueued(id)) return;  // a destroy is pending; the retry removes the intent
    if (!OnIntentCard(*vhcu, r) || !OfIntentSize(*vhcu, r)) {
      LOG(WARNING) << "intent " << intent.path << " names vHCU " << id << " of " << r.compute_units
                   << " CU, " << r.memory_mib << " MiB on " << DescribeIntent(r) << " but vHCU "
                   << id << " is now " << vhcu->compute_units << " CU, " << vhcu->memory_mib
                   << " MiB on card " << vhcu->card << " (" << vhcu->card_bdf
                   << "): not ours, left alone";
      ++result->left_alone;
      drop_intent();
      return;
    }
    if (is_allocating(r.pod_uid)) {
      StatusOr<MarkFile> mark = WriteMark(own);
      if (mark.ok()) {
        LOG(INFO) << "adopted vHCU " << id << " for allocating " << DescribeIntent(r);
        ++result->adopted;
        drop_intent();
        return;
      }
      LOG(WARNING) << "cannot adopt vHCU " << id << ": " << mark.status().ToString()
                   << "; destroying it instead";
    }
    LOG(INFO) << "vHCU " << id << " of " << DescribeIntent(r)
              << " was never handed over: destroying";
    DestroyOrQueue(*vhcu, std::nullopt, intent.path, result);
    return;
  }

  // No id recorded: only a vHCU that can be nothing but the one this create
  // made is ours — same card (by BDF), exactly the size asked for, created
  // after the snapshot, claimed by nobody else.
  if (!inventory.vhcu_gaps.empty()) {
    // What cannot be read may be the vHCU this create made (or another
    // candidate): decide in a pass that reads everything.
    VLOG(1) << "intent " << intent.path << ": vHCU state partly unreadable; kept";
    ++result->left_alone;
    return;
  }
  std::vector<const Vhcu*> candidates;
  for (const Vhcu& v : inventory.vhcus) {
    if (OnIntentCard(v, r) && OfIntentSize(v, r) && r.prior_vhcu_ids.count(v.id) == 0 &&
        marked.count(v.id) == 0 && claimed_by_intents.count(v.id) == 0) {
      candidates.push_back(&v);
    }
  }
  for (const Vhcu* v : candidates) {
    if (IsQueued(v->id)) return;  // its destroy is pending; the retry removes the intent
  }
  if (candidates.empty()) {
    VLOG(1) << "intent " << intent.path << ": no vHCU was created";
    drop_intent();
    return;
  }
  if (candidates.size() > 1) {
    bool first_time;
    {
      MutexLock lock(mu_);
      first_time = reported_.insert(intent.path).second;
    }
    if (first_time) {
      std::string ids;
      for (const Vhcu* v : candidates) ids += " " + std::to_string(v->id);
      LOG(ERROR) << "intent " << intent.path << ": several unowned new vHCUs of " << r.compute_units
                 << " CU, " << r.memory_mib << " MiB on " << DescribeIntent(r) << " (" << ids
                 << " ) could be the one created for it; destroying none. The intent "
                 << "stays until they are gone or an administrator removes it";
    }
    result->left_alone += static_cast<int>(candidates.size());
    return;
  }
  LOG(INFO) << "vHCU " << candidates[0]->id << " was created for " << DescribeIntent(r)
            << " but never recorded: destroying";
  DestroyOrQueue(*candidates[0], std::nullopt, intent.path, result);
}

}  // namespace hcudp
