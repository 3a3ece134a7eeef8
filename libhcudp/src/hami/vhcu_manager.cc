// The dynamic-vHCU lifecycle; the state machine is documented in
// hcudp/vhcu_manager.h.
#include "hcudp/vhcu_manager.h"

#include <glog/logging.h>

#include <algorithm>

#include "hami/durable_file.h"
#include "hami/intent_record.h"
#include "hcudp/backend.h"

namespace hcudp {
namespace {

using internal::IntentRecord;

constexpr mode_t kDirMode = 0755;
constexpr mode_t kFileMode = 0644;

std::string Describe(const hami::MarkFileName& m) {
  return "pod " + m.pod_uid + " container " + m.container + " card " + std::to_string(m.card);
}

std::string Describe(const IntentRecord& r) {
  return "pod " + r.pod_uid + " container " + r.container + " card " + std::to_string(r.card);
}

bool EndsWith(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

struct VhcuManager::Intent {
  IntentRecord record;
  std::string path;
};

StatusOr<std::vector<MarkFile>> ListMarkFiles(const std::string& host_root,
                                              std::vector<std::string>* unparsable) {
  std::string dir = HostPath(host_root, std::string(hami::kMarkFileDir));
  HCUDP_ASSIGN_OR_RETURN(std::vector<std::string> names, internal::ListFileNames(dir));
  std::vector<MarkFile> marks;
  for (const std::string& name : names) {
    StatusOr<hami::MarkFileName> parsed = hami::ParseMarkFileName(name);
    if (!parsed.ok()) {
      if (unparsable != nullptr) unparsable->push_back(name);
      continue;
    }
    std::string path = dir;
    path += '/';
    path += name;
    marks.push_back({*parsed, std::move(path)});
  }
  return marks;
}

VhcuManager::VhcuManager(Backend* backend, VhcuManagerOptions options)
    : backend_(backend), options_(std::move(options)) {}

std::chrono::system_clock::time_point VhcuManager::Now() const {
  return options_.now ? options_.now() : std::chrono::system_clock::now();
}

bool VhcuManager::CrashAfter(VhcuCreateStep step) const {
  return options_.crash_after && options_.crash_after(step);
}

std::string VhcuManager::MarkDir() const {
  return HostPath(options_.host_root, std::string(hami::kMarkFileDir));
}

std::string VhcuManager::IntentDirPath() const {
  return HostPath(options_.host_root, std::string(kVhcuIntentDir));
}

StatusOr<MarkFile> VhcuManager::WriteMarkLocked(const hami::MarkFileName& name) {
  HCUDP_ASSIGN_OR_RETURN(std::string file_name, hami::FormatMarkFileName(name));
  HCUDP_RETURN_IF_ERROR(internal::EnsureDirectory(MarkDir(), kDirMode));
  MarkFile mark{name, MarkDir() + "/" + file_name};
  HCUDP_RETURN_IF_ERROR(
      internal::WriteFileDurably(mark.path, hami::FormatMarkFileTime(Now()), kFileMode));
  fresh_pods_[name.pod_uid] = Now();
  return mark;
}

// ------------------------------------------------------------- create ----

StatusOr<CreatedVhcu> VhcuManager::CreateVhcu(const VhcuOwner& owner, int card, int compute_units,
                                              uint64_t memory_mib) {
  std::lock_guard<std::mutex> lock(mu_);
  HCUDP_RETURN_IF_ERROR(
      hami::FormatMarkFileName({owner.pod_uid, owner.container, card, 0}).status());
  if (compute_units <= 0) {
    return InvalidArgumentError("vHCU needs at least one compute unit, got " +
                                std::to_string(compute_units));
  }
  HCUDP_ASSIGN_OR_RETURN(NodeInventory before, backend_->Discover());

  Intent intent;
  intent.record = {owner.pod_uid, owner.container, card, compute_units, memory_mib, {}, {}};
  for (const Vhcu& v : before.vhcus) intent.record.prior_vhcu_ids.insert(v.id);
  HCUDP_RETURN_IF_ERROR(internal::EnsureDirectory(IntentDirPath(), kDirMode));
  intent.path = IntentDirPath() + "/" + internal::IntentFileName(intent.record);
  if (internal::FileExists(intent.path)) {
    return AlreadyExistsError("an unresolved vHCU intent exists for " + Describe(intent.record) +
                              ": " + intent.path);
  }
  HCUDP_RETURN_IF_ERROR(internal::ReplaceFileDurably(
      intent.path, internal::FormatIntentRecord(intent.record), kFileMode));
  if (CrashAfter(VhcuCreateStep::kIntentRecorded)) return AbortedError("crash after intent");

  StatusOr<Vhcu> vhcu = backend_->CreateVhcu(card, compute_units, memory_mib);
  if (!vhcu.ok()) {
    LOG(WARNING) << "creating a vHCU (" << compute_units << " CU, " << memory_mib << " MiB) for "
                 << Describe(intent.record) << " failed: " << vhcu.status().ToString()
                 << "; cleaning up what it may have left";
    StatusOr<NodeInventory> after = backend_->Discover();
    StatusOr<std::vector<MarkFile>> marks = ListMarkFiles(options_.host_root, nullptr);
    if (after.ok() && marks.ok()) {
      VhcuSweepResult ignored;
      ResolveIntentLocked(
          intent, *after, *marks, {}, [](const std::string&) { return false; }, &ignored);
    }
    return vhcu.status();
  }
  if (CrashAfter(VhcuCreateStep::kVhcuCreated)) return AbortedError("crash after create");

  intent.record.vhcu_id = vhcu->id;
  VhcuSweepResult undo;
  // Not forced to disk: if a crash loses it, Recover finds the vHCU by the
  // snapshot (or, once the mark exists, drops the intent) — the same outcome.
  Status recorded = internal::ReplaceFileAtomically(
      intent.path, internal::FormatIntentRecord(intent.record), kFileMode);
  if (!recorded.ok()) {
    DestroyOrQueueLocked(vhcu->id, std::nullopt, intent.path, &undo);
    return recorded.WithContext("recording vHCU " + std::to_string(vhcu->id));
  }
  if (CrashAfter(VhcuCreateStep::kIdRecorded)) return AbortedError("crash after id");

  StatusOr<MarkFile> mark = WriteMarkLocked({owner.pod_uid, owner.container, card, vhcu->id});
  if (!mark.ok()) {
    DestroyOrQueueLocked(vhcu->id, std::nullopt, intent.path, &undo);
    return mark.status().WithContext("writing the mark file of vHCU " + std::to_string(vhcu->id));
  }
  if (CrashAfter(VhcuCreateStep::kMarkWritten)) return AbortedError("crash after mark");

  // Not forced to disk either: an intent whose vHCU is marked is dropped by
  // Recover.
  Status completed = internal::RemoveFile(intent.path);
  if (!completed.ok()) {
    LOG(WARNING) << "vHCU " << vhcu->id
                 << " is marked but its intent stays: " << completed.ToString()
                 << " (Recover drops it)";
  }
  LOG(INFO) << "created vHCU " << vhcu->id << " (" << compute_units << " CU, " << memory_mib
            << " MiB) for " << Describe(intent.record) << ", mark " << mark->path;
  return CreatedVhcu{*vhcu, *mark};
}

StatusOr<MarkFile> VhcuManager::MarkWholeCard(const VhcuOwner& owner, int card) {
  std::lock_guard<std::mutex> lock(mu_);
  return WriteMarkLocked({owner.pod_uid, owner.container, card, hami::kWholeCardVhcuId});
}

// ------------------------------------------------------------ destroy ----

void VhcuManager::DestroyOrQueueLocked(int vhcu_id, const std::optional<MarkFile>& mark,
                                       const std::string& intent_path, VhcuSweepResult* result) {
  Status st = vhcu_id >= 0 ? backend_->DestroyVhcu(vhcu_id) : OkStatus();
  if (st.ok() || st.code() == StatusCode::kNotFound) {
    if (st.ok() && vhcu_id >= 0) {
      ++result->destroyed;
      LOG(INFO) << "destroyed vHCU " << vhcu_id
                << (mark ? " of " + Describe(mark->name) : std::string());
    }
    retries_.erase(vhcu_id);
    if (mark) {
      Status removed = internal::RemoveFileDurably(mark->path);
      if (removed.ok()) {
        ++result->marks_removed;
      } else {
        LOG(WARNING) << "vHCU " << vhcu_id << " is gone but its mark stays: " << removed.ToString();
      }
    }
    if (!intent_path.empty()) {
      Status removed = internal::RemoveFileDurably(intent_path);
      if (!removed.ok()) LOG(WARNING) << "intent stays: " << removed.ToString();
    }
    return;
  }
  Retry retry;
  auto it = retries_.find(vhcu_id);
  if (it != retries_.end()) retry = it->second;
  retry.vhcu_id = vhcu_id;
  if (mark) retry.mark = mark;
  if (!intent_path.empty()) retry.intent_path = intent_path;
  ++retry.failures;
  auto delay = options_.initial_retry_delay;
  for (int i = 1; i < retry.failures && delay < options_.max_retry_delay; ++i) delay *= 2;
  delay = std::min(delay, options_.max_retry_delay);
  retry.due = Now() + delay;
  LOG(WARNING) << "destroying vHCU " << vhcu_id << " failed (attempt " << retry.failures
               << "): " << st.ToString() << "; retrying in " << delay.count() << " ms";
  retries_[vhcu_id] = retry;
  ++result->queued;
}

bool VhcuManager::IsQueuedLocked(int vhcu_id) const { return retries_.count(vhcu_id) > 0; }

Status VhcuManager::Release(const hami::MarkFileName& name) {
  std::lock_guard<std::mutex> lock(mu_);
  HCUDP_ASSIGN_OR_RETURN(std::string file_name, hami::FormatMarkFileName(name));
  MarkFile mark{name, MarkDir() + "/" + file_name};
  VhcuSweepResult result;
  DestroyOrQueueLocked(name.vhcu_id, mark, "", &result);
  if (result.queued > 0) {
    return UnavailableError("vHCU " + std::to_string(name.vhcu_id) +
                            " could not be destroyed yet; retrying in the background");
  }
  return OkStatus();
}

StatusOr<VhcuSweepResult> VhcuManager::Reconcile(const std::set<std::string>& live_pod_uids) {
  return Reconcile([&](const std::string& uid) { return live_pod_uids.count(uid) > 0; });
}

StatusOr<VhcuSweepResult> VhcuManager::Reconcile(const PodLivenessFn& is_live) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> unparsable;
  HCUDP_ASSIGN_OR_RETURN(std::vector<MarkFile> marks,
                         ListMarkFiles(options_.host_root, &unparsable));
  for (const std::string& name : unparsable) {
    LOG(WARNING) << "ignoring " << MarkDir() << "/" << name << ": not a mark file name";
  }
  HCUDP_ASSIGN_OR_RETURN(NodeInventory inventory, backend_->Discover());

  const auto now = Now();
  for (auto it = fresh_pods_.begin(); it != fresh_pods_.end();) {
    it = now - it->second >= options_.fresh_mark_grace ? fresh_pods_.erase(it) : std::next(it);
  }

  VhcuSweepResult result;
  std::set<int> marked;
  for (const MarkFile& mark : marks) {
    const hami::MarkFileName& m = mark.name;
    if (!m.whole_card()) marked.insert(m.vhcu_id);
    if (is_live(m.pod_uid)) continue;
    if (fresh_pods_.count(m.pod_uid) > 0) {
      VLOG(1) << "mark " << mark.path << " is fresh; not reclaimed yet";
      ++result.left_alone;
      continue;
    }
    if (m.whole_card()) {
      if (internal::RemoveFileDurably(mark.path).ok()) ++result.marks_removed;
      continue;
    }
    if (IsQueuedLocked(m.vhcu_id)) continue;
    const Vhcu* vhcu = inventory.FindVhcu(m.vhcu_id);
    if (vhcu != nullptr && vhcu->card != m.card) {
      LOG(WARNING) << "mark " << mark.path << " names vHCU " << m.vhcu_id << " on card " << m.card
                   << " but it is on card " << vhcu->card
                   << " now (node reset?): removing the stale mark, keeping the vHCU";
      vhcu = nullptr;
    } else if (vhcu == nullptr) {
      LOG(INFO) << "vHCU " << m.vhcu_id << " of " << Describe(m) << " is already gone";
    }
    if (vhcu == nullptr) {
      if (internal::RemoveFileDurably(mark.path).ok()) ++result.marks_removed;
      continue;
    }
    DestroyOrQueueLocked(m.vhcu_id, mark, "", &result);
  }
  for (const Vhcu& v : inventory.vhcus) {
    if (marked.count(v.id) == 0 && !IsQueuedLocked(v.id)) {
      VLOG(2) << "vHCU " << v.id << " on card " << v.card
              << " has no mark file: not created by this plugin, left alone";
    }
  }
  return result;
}

VhcuSweepResult VhcuManager::Tick() {
  std::lock_guard<std::mutex> lock(mu_);
  VhcuSweepResult result;
  const auto now = Now();
  std::vector<Retry> due;
  for (const auto& [id, retry] : retries_) {
    if (retry.due <= now) due.push_back(retry);
  }
  for (const Retry& retry : due) {
    DestroyOrQueueLocked(retry.vhcu_id, retry.mark, retry.intent_path, &result);
  }
  return result;
}

void VhcuManager::ForgetFresh(const std::string& pod_uid) {
  std::lock_guard<std::mutex> lock(mu_);
  fresh_pods_.erase(pod_uid);
}

size_t VhcuManager::pending_destroys() const {
  std::lock_guard<std::mutex> lock(mu_);
  return retries_.size();
}

std::optional<std::chrono::system_clock::time_point> VhcuManager::next_retry_time() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::optional<std::chrono::system_clock::time_point> next;
  for (const auto& [id, retry] : retries_) {
    if (!next || retry.due < *next) next = retry.due;
  }
  return next;
}

// ------------------------------------------------------------ recover ----

StatusOr<VhcuSweepResult> VhcuManager::Recover(const PodLivenessFn& is_allocating) {
  std::lock_guard<std::mutex> lock(mu_);
  VhcuSweepResult result;
  HCUDP_ASSIGN_OR_RETURN(std::vector<std::string> names, internal::ListFileNames(IntentDirPath()));
  std::vector<Intent> intents;
  for (const std::string& name : names) {
    std::string path = IntentDirPath() + "/" + name;
    if (EndsWith(name, ".tmp")) {  // a crash inside ReplaceFileDurably
      Status removed = internal::RemoveFileDurably(path);
      (void)removed;
      continue;
    }
    StatusOr<std::string> text = internal::ReadSmallFile(path);
    StatusOr<IntentRecord> record =
        text.ok() ? internal::ParseIntentRecord(*text) : StatusOr<IntentRecord>(text.status());
    if (!record.ok()) {
      LOG(ERROR) << "unreadable vHCU intent " << path << ": " << record.status().ToString()
                 << "; left for an administrator";
      continue;
    }
    intents.push_back({*record, path});
  }
  if (intents.empty()) return result;

  HCUDP_ASSIGN_OR_RETURN(NodeInventory inventory, backend_->Discover());
  HCUDP_ASSIGN_OR_RETURN(std::vector<MarkFile> marks, ListMarkFiles(options_.host_root, nullptr));
  std::set<int> claimed_by_intents;
  for (const Intent& i : intents) {
    if (i.record.vhcu_id) claimed_by_intents.insert(*i.record.vhcu_id);
  }
  for (const Intent& intent : intents) {
    ResolveIntentLocked(intent, inventory, marks, claimed_by_intents, is_allocating, &result);
  }
  return result;
}

void VhcuManager::ResolveIntentLocked(const Intent& intent, const NodeInventory& inventory,
                                      const std::vector<MarkFile>& marks,
                                      const std::set<int>& claimed_by_intents,
                                      const PodLivenessFn& is_allocating, VhcuSweepResult* result) {
  const IntentRecord& r = intent.record;
  auto drop_intent = [&] {
    Status removed = internal::RemoveFileDurably(intent.path);
    if (!removed.ok()) LOG(WARNING) << "intent stays: " << removed.ToString();
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
    const Vhcu* vhcu = inventory.FindVhcu(id);
    if (has_mark || vhcu == nullptr) {
      drop_intent();  // the mark owns it, or nothing is left
      return;
    }
    if (vhcu->card != r.card) {
      LOG(WARNING) << "intent " << intent.path << " names vHCU " << id << " on card " << r.card
                   << " but it is on card " << vhcu->card << ": left alone";
      ++result->left_alone;
      drop_intent();
      return;
    }
    if (is_allocating(r.pod_uid)) {
      StatusOr<MarkFile> mark = WriteMarkLocked(own);
      if (mark.ok()) {
        LOG(INFO) << "adopted vHCU " << id << " for allocating " << Describe(r);
        ++result->adopted;
        drop_intent();
        return;
      }
      LOG(WARNING) << "cannot adopt vHCU " << id << ": " << mark.status().ToString()
                   << "; destroying it instead";
    }
    LOG(INFO) << "vHCU " << id << " of " << Describe(r) << " was never handed over: destroying";
    DestroyOrQueueLocked(id, std::nullopt, intent.path, result);
    return;
  }

  std::vector<const Vhcu*> candidates;
  for (const Vhcu& v : inventory.vhcus) {
    if (v.card == r.card && r.prior_vhcu_ids.count(v.id) == 0 && marked.count(v.id) == 0 &&
        claimed_by_intents.count(v.id) == 0 && !IsQueuedLocked(v.id)) {
      candidates.push_back(&v);
    }
  }
  if (candidates.size() > 1) {  // prefer the exact size asked for
    std::vector<const Vhcu*> exact;
    for (const Vhcu* v : candidates) {
      if (v->compute_units == r.compute_units && v->memory_mib == r.memory_mib) exact.push_back(v);
    }
    candidates = exact;
  }
  if (candidates.empty()) {
    VLOG(1) << "intent " << intent.path << ": no vHCU was created";
    drop_intent();
    return;
  }
  if (candidates.size() > 1) {
    std::string ids;
    for (const Vhcu* v : candidates) ids += " " + std::to_string(v->id);
    LOG(ERROR) << "intent " << intent.path << ": several unowned new vHCUs on card " << r.card
               << " (" << ids << " ) could be the one created for " << Describe(r)
               << "; destroying none";
    result->left_alone += static_cast<int>(candidates.size());
    drop_intent();
    return;
  }
  LOG(INFO) << "vHCU " << candidates[0]->id << " was created for " << Describe(r)
            << " but never recorded: destroying";
  DestroyOrQueueLocked(candidates[0]->id, std::nullopt, intent.path, result);
}

}  // namespace hcudp
