// The dynamic-vHCU lifecycle; the state machine is documented in
// hcudp/vhcu_manager.h.
#include "hcudp/vhcu_manager.h"

#include <algorithm>

#include "hcudp/backend.h"
#include "hcudp_internal/file_util.h"
#include "hcudp_internal/log.h"
#include "vhcu/intent_record.h"
#include "vhcu/vhcu_manager_impl.h"

namespace hcudp {
namespace {

using internal::IntentRecord;

constexpr mode_t kDirMode = 0755;
constexpr mode_t kFileMode = 0644;

std::string Describe(const hami::MarkFileName& m) {
  return "pod " + m.pod_uid + " container " + m.container + " card " + std::to_string(m.card);
}

}  // namespace

StatusOr<std::vector<MarkFile>> ListMarkFiles(const std::string& host_root,
                                              std::vector<std::string>* unparsable) {
  std::string dir = internal::HostFs(host_root).MarkDir();
  HCUDP_ASSIGN_OR_RETURN(std::vector<std::string> names, file_util::ListFileNames(dir));
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

VhcuManager::VhcuManager(Backend* backend, VhcuManagerOptions options, Clock& clock)
    : impl_(std::make_unique<Impl>(backend, std::move(options), clock)) {}
VhcuManager::~VhcuManager() = default;

StatusOr<VhcuSweepResult> VhcuManager::Recover(const PodLivenessFn& is_allocating) {
  return impl_->Recover(is_allocating);
}
StatusOr<CreatedVhcu> VhcuManager::CreateVhcu(const VhcuOwner& owner, int card, int compute_units,
                                              uint64_t memory_mib) {
  return impl_->CreateVhcu(owner, card, compute_units, memory_mib);
}
StatusOr<MarkFile> VhcuManager::MarkWholeCard(const VhcuOwner& owner, int card,
                                              MarkDurability durability) {
  return impl_->WriteMark({owner.pod_uid, owner.container, card, hami::kWholeCardVhcuId},
                          durability);
}
Status VhcuManager::Release(const hami::MarkFileName& mark) { return impl_->Release(mark); }
StatusOr<VhcuSweepResult> VhcuManager::Reconcile(const PodLivenessFn& is_live) {
  return impl_->Reconcile(is_live);
}
StatusOr<VhcuSweepResult> VhcuManager::Reconcile(const std::set<std::string>& live_pod_uids) {
  return impl_->Reconcile([&](const std::string& uid) { return live_pod_uids.count(uid) > 0; });
}
void VhcuManager::ForgetFresh(const std::string& pod_uid) { impl_->ForgetFresh(pod_uid); }
VhcuSweepResult VhcuManager::Tick() { return impl_->Tick(); }

VhcuManager::Impl::Impl(Backend* backend, VhcuManagerOptions options, Clock& clock)
    : backend_(backend), options_(std::move(options)), clock_(clock) {}

bool VhcuManager::Impl::CrashAfter(VhcuCreateStep step) const {
  return options_.crash_after && options_.crash_after(step);
}

std::string VhcuManager::Impl::MarkDir() const { return fs_.MarkDir(); }

std::string VhcuManager::Impl::IntentDirPath() const { return fs_.IntentDir(); }

StatusOr<VhcuHostLock> VhcuManager::Impl::Lock(std::chrono::milliseconds timeout) const {
  // In real time whatever clock_ is: the holder lets go in real time.
  return VhcuHostLock::Acquire(options_.host_root, timeout, [](const std::string& holder) {
    LOG(INFO) << "waiting for the host-wide vHCU lock, held by " << holder;
  });
}

StatusOr<MarkFile> VhcuManager::Impl::WriteMark(const hami::MarkFileName& name,
                                                MarkDurability durability) {
  HCUDP_ASSIGN_OR_RETURN(std::string file_name, hami::FormatMarkFileName(name));
  HCUDP_RETURN_IF_ERROR(
      file_util::MakeDirs(MarkDir(), kDirMode, file_util::Durability::kSyncFileAndDirectory));
  MarkFile mark{name, MarkDir() + "/" + file_name};
  const std::string content = hami::FormatMarkFileTime(clock_.WallNow());
  HCUDP_RETURN_IF_ERROR(file_util::WriteFileInPlace(
      mark.path, content, kFileMode,
      durability == MarkDurability::kDurable ? file_util::Durability::kSyncFileAndDirectory
                                             : file_util::Durability::kNoSync));
  MutexLock lock(mu_);
  fresh_pods_[name.pod_uid] = clock_.Now();
  return mark;
}

StatusOr<std::vector<VhcuManager::Impl::Intent>> VhcuManager::Impl::ReadIntents() {
  HCUDP_ASSIGN_OR_RETURN(auto journal, internal::ReadIntentJournal(IntentDirPath()));
  std::vector<Intent> intents;
  for (auto& [record, path] : journal) intents.push_back({std::move(record), std::move(path)});
  return intents;
}

// ------------------------------------------------------------- create ----

StatusOr<CreatedVhcu> VhcuManager::Impl::CreateVhcu(const VhcuOwner& owner, int card,
                                                    int compute_units, uint64_t memory_mib) {
  HCUDP_RETURN_IF_ERROR(
      hami::FormatMarkFileName({owner.pod_uid, owner.container, card, 0}).status());
  if (compute_units <= 0) {
    return InvalidArgumentError("vHCU needs at least one compute unit, got " +
                                std::to_string(compute_units));
  }
  HCUDP_ASSIGN_OR_RETURN(VhcuHostLock host_lock, Lock(options_.lock_timeout));
  HCUDP_ASSIGN_OR_RETURN(NodeInventory before, backend_->Discover());
  const Card* parent = before.FindCard(card);
  if (parent == nullptr) return NotFoundError("no card " + std::to_string(card) + " on the node");

  Intent intent;
  intent.record = {owner.pod_uid, owner.container, card, parent->bdf,
                   compute_units, memory_mib,      {},   {}};
  for (const Vhcu& v : before.vhcus) intent.record.prior_vhcu_ids.insert(v.id);
  HCUDP_RETURN_IF_ERROR(
      file_util::MakeDirs(IntentDirPath(), kDirMode, file_util::Durability::kSyncFileAndDirectory));
  std::string attempt;
  {
    MutexLock lock(mu_);
    attempt = std::to_string(clock_.WallNow().time_since_epoch().count()) + "-" +
              std::to_string(++attempts_);
  }
  intent.path = IntentDirPath() + "/" + internal::IntentFileName(intent.record, attempt);
  HCUDP_RETURN_IF_ERROR(
      file_util::WriteFileAtomic(intent.path, internal::FormatIntentRecord(intent.record),
                                 kFileMode, file_util::Durability::kSyncFileAndDirectory));
  if (CrashAfter(VhcuCreateStep::kIntentRecorded)) return AbortedError("crash after intent");

  StatusOr<Vhcu> vhcu = backend_->CreateVhcu(card, compute_units, memory_mib);
  if (!vhcu.ok()) {
    LOG(WARNING) << "creating a vHCU (" << compute_units << " CU, " << memory_mib << " MiB) for "
                 << DescribeIntent(intent.record) << " failed: " << vhcu.status().ToString()
                 << "; cleaning up what it may have left";
    StatusOr<NodeInventory> after = backend_->Discover();
    StatusOr<std::vector<MarkFile>> marks = ListMarkFiles(options_.host_root, nullptr);
    if (after.ok() && marks.ok()) {
      VhcuSweepResult ignored;
      ResolveIntent(
          intent, *after, *marks, {}, [](const std::string&) { return false; }, &ignored);
    }
    return vhcu.status();
  }
  if (CrashAfter(VhcuCreateStep::kVhcuCreated)) return AbortedError("crash after create");

  intent.record.vhcu_id = vhcu->id;
  VhcuSweepResult undo;
  // Not forced to disk: if a crash loses it, the intent is resolved by the
  // snapshot (or, once the mark exists, dropped) — the same outcome.
  Status recorded =
      file_util::WriteFileAtomic(intent.path, internal::FormatIntentRecord(intent.record),
                                 kFileMode, file_util::Durability::kSyncFile);
  if (!recorded.ok()) {
    DestroyOrQueue(*vhcu, std::nullopt, intent.path, &undo);
    return recorded.WithContext("recording vHCU " + std::to_string(vhcu->id));
  }
  if (CrashAfter(VhcuCreateStep::kIdRecorded)) return AbortedError("crash after id");

  StatusOr<MarkFile> mark = WriteMark({owner.pod_uid, owner.container, card, vhcu->id});
  if (!mark.ok()) {
    DestroyOrQueue(*vhcu, std::nullopt, intent.path, &undo);
    return mark.status().WithContext("writing the mark file of vHCU " + std::to_string(vhcu->id));
  }
  if (CrashAfter(VhcuCreateStep::kMarkWritten)) return AbortedError("crash after mark");

  // Not forced to disk either: an intent whose vHCU is marked is dropped.
  Status completed = file_util::RemoveFile(intent.path);
  if (!completed.ok()) {
    LOG(WARNING) << "vHCU " << vhcu->id
                 << " is marked but its intent stays: " << completed.ToString()
                 << " (the next Reconcile drops it)";
  }
  LOG(INFO) << "created vHCU " << vhcu->id << " (" << compute_units << " CU, " << memory_mib
            << " MiB) for " << DescribeIntent(intent.record) << ", mark " << mark->path;
  return CreatedVhcu{*vhcu, *mark};
}

// ------------------------------------------------------------ destroy ----

void VhcuManager::Impl::DestroyOrQueue(const Vhcu& vhcu, const std::optional<MarkFile>& mark,
                                       const std::string& intent_path, VhcuSweepResult* result) {
  const int id = vhcu.id;
  Status st = id >= 0 ? backend_->DestroyVhcu(id) : OkStatus();
  if (st.ok() || st.code() == StatusCode::kNotFound) {
    if (st.ok() && id >= 0) {
      ++result->destroyed;
      LOG(INFO) << "destroyed vHCU " << id
                << (mark ? " of " + Describe(mark->name) : std::string());
    }
    {
      MutexLock lock(mu_);
      retries_.erase(id);
    }
    if (mark) {
      Status removed =
          file_util::RemoveFile(mark->path, file_util::Durability::kSyncFileAndDirectory);
      if (removed.ok()) {
        ++result->marks_removed;
      } else {
        LOG(WARNING) << "vHCU " << id << " is gone but its mark stays: " << removed.ToString();
      }
    }
    if (!intent_path.empty()) {
      Status removed =
          file_util::RemoveFile(intent_path, file_util::Durability::kSyncFileAndDirectory);
      if (!removed.ok()) LOG(WARNING) << "intent stays: " << removed.ToString();
    }
    return;
  }
  Retry retry;
  retry.vhcu_id = id;
  retry.card_bdf = vhcu.card_bdf;
  retry.compute_units = vhcu.compute_units;
  retry.memory_mib = vhcu.memory_mib;
  retry.mark = mark;
  retry.intent_path = intent_path;
  Queue(std::move(retry), st, result);
}

void VhcuManager::Impl::Queue(Retry retry, const Status& why, VhcuSweepResult* result) {
  MutexLock lock(mu_);
  auto it = retries_.find(retry.vhcu_id);
  if (it != retries_.end()) {
    retry.failures = it->second.failures;
    if (!retry.mark) retry.mark = it->second.mark;
    if (retry.intent_path.empty()) retry.intent_path = it->second.intent_path;
  }
  ++retry.failures;
  auto delay = options_.initial_retry_delay;
  for (int i = 1; i < retry.failures && delay < options_.max_retry_delay; ++i) delay *= 2;
  delay = std::min(delay, options_.max_retry_delay);
  retry.due = clock_.Now() + delay;
  LOG(WARNING) << "destroying vHCU " << retry.vhcu_id << " failed (attempt " << retry.failures
               << "): " << why.ToString() << "; retrying in " << delay.count() << " ms";
  retries_[retry.vhcu_id] = std::move(retry);
  ++result->queued;
}

bool VhcuManager::Impl::IsQueued(int vhcu_id) const {
  MutexLock lock(mu_);
  return retries_.count(vhcu_id) > 0;
}

Status VhcuManager::Impl::Release(const hami::MarkFileName& name) {
  HCUDP_ASSIGN_OR_RETURN(std::string file_name, hami::FormatMarkFileName(name));
  MarkFile mark{name, MarkDir() + "/" + file_name};
  VhcuSweepResult result;
  Vhcu vhcu;
  vhcu.id = name.vhcu_id;
  vhcu.card = name.card;
  StatusOr<VhcuHostLock> host_lock = Lock(options_.lock_timeout);
  StatusOr<NodeInventory> inventory =
      host_lock.ok() ? backend_->Discover() : StatusOr<NodeInventory>(host_lock.status());
  std::optional<Lookup<Vhcu>> now;
  if (inventory.ok() && name.vhcu_id >= 0) {
    now = inventory->LookupVhcu(name.vhcu_id);
    if (now->certainty() == Certainty::kFound) vhcu = now->value();
  }
  if (!inventory.ok() || (now && now->certainty() == Certainty::kUnknown)) {
    // Not destroyed on what cannot be read: the mark stays, Tick retries.
    Retry retry;
    retry.vhcu_id = name.vhcu_id;
    retry.mark = mark;
    Queue(std::move(retry), inventory.ok() ? UnavailableError(now->why()) : inventory.status(),
          &result);
  } else {
    DestroyOrQueue(vhcu, mark, "", &result);
  }
  if (result.queued > 0) {
    return UnavailableError("vHCU " + std::to_string(name.vhcu_id) +
                            " could not be destroyed yet; retrying in the background");
  }
  return OkStatus();
}

StatusOr<VhcuSweepResult> VhcuManager::Impl::Reconcile(const PodLivenessFn& is_live) {
  HCUDP_ASSIGN_OR_RETURN(VhcuHostLock host_lock, Lock(options_.sweep_lock_timeout));
  HCUDP_ASSIGN_OR_RETURN(std::vector<Intent> intents, ReadIntents());
  std::vector<std::string> unparsable;
  HCUDP_ASSIGN_OR_RETURN(std::vector<MarkFile> marks,
                         ListMarkFiles(options_.host_root, &unparsable));
  for (const std::string& name : unparsable) {
    LOG_EVERY_N(WARNING, 100) << "ignoring " << MarkDir() << "/" << name
                              << ": not a mark file name";
  }
  HCUDP_ASSIGN_OR_RETURN(NodeInventory inventory, backend_->Discover());

  VhcuSweepResult result;
  // Never adopting here: a create of this process that failed was reported
  // to its caller, who retries.
  ResolveIntents(
      intents, inventory, marks, [](const std::string&) { return false; }, &result);

  const auto now = clock_.Now();
  std::set<std::string> fresh;
  {
    MutexLock lock(mu_);
    for (auto it = fresh_pods_.begin(); it != fresh_pods_.end();) {
      it = now - it->second >= options_.fresh_mark_grace ? fresh_pods_.erase(it) : std::next(it);
    }
    for (const auto& [uid, when] : fresh_pods_) fresh.insert(uid);
  }
  // vHCU ids a live (or fresh) pod's mark holds: never destroyed through
  // another, stale mark of the same id (its vHCU went, the id was reused).
  std::set<int> held;
  for (const MarkFile& mark : marks) {
    const hami::MarkFileName& m = mark.name;
    if (!m.whole_card() && (fresh.count(m.pod_uid) > 0 || is_live(m.pod_uid))) {
      held.insert(m.vhcu_id);
    }
  }
  std::set<int> marked;
  for (const MarkFile& mark : marks) {
    const hami::MarkFileName& m = mark.name;
    if (!m.whole_card()) marked.insert(m.vhcu_id);
    if (is_live(m.pod_uid)) continue;
    if (fresh.count(m.pod_uid) > 0) {
      VLOG(1) << "mark " << mark.path << " is fresh; not reclaimed yet";
      ++result.left_alone;
      continue;
    }
    if (m.whole_card()) {
      if (file_util::RemoveFile(mark.path, file_util::Durability::kSyncFileAndDirectory).ok())
        ++result.marks_removed;
      continue;
    }
    if (IsQueued(m.vhcu_id)) continue;
    if (held.count(m.vhcu_id) > 0) {
      LOG(WARNING) << "mark " << mark.path << " names vHCU " << m.vhcu_id
                   << ", which a live pod's mark holds (the id was reused): removing the stale "
                   << "mark, keeping the vHCU";
      if (file_util::RemoveFile(mark.path, file_util::Durability::kSyncFileAndDirectory).ok())
        ++result.marks_removed;
      continue;
    }
    Lookup<Vhcu> found = inventory.LookupVhcu(m.vhcu_id);
    if (found.certainty() == Certainty::kUnknown) {
      // Not gone: its conf could not be read in this pass. Removing the mark
      // would leak the vHCU for good.
      LOG_EVERY_N(WARNING, 100) << "mark " << mark.path << " names vHCU " << m.vhcu_id << ": "
                                << found.why() << "; left alone until it reads";
      ++result.left_alone;
      continue;
    }
    const Vhcu* vhcu = found.certainty() == Certainty::kFound ? &found.value() : nullptr;
    std::string why;
    const Certainty names = vhcu != nullptr
                                ? internal::MarkNamesVhcu(options_.host_root, m, *vhcu, &why)
                                : Certainty::kAbsent;
    if (vhcu != nullptr && names == Certainty::kUnknown) {
      // Whether the mark still names it cannot be told in this pass (its
      // card not discovered, its conf unreadable). Removing the mark would
      // leak the vHCU for good.
      LOG_EVERY_N(WARNING, 100) << "mark " << mark.path << " names vHCU " << m.vhcu_id << ": "
                                << why << "; left alone until it can be told";
      ++result.left_alone;
      continue;
    }
    if (vhcu != nullptr && names == Certainty::kAbsent) {
      LOG(WARNING) << "mark " << mark.path << " names vHCU " << m.vhcu_id << " on card " << m.card
                   << " but " << why
                   << " (node reset?): removing the stale mark, keeping the vHCU";
      vhcu = nullptr;
    } else if (vhcu != nullptr && vhcu->card != m.card) {
      LOG(INFO) << "mark " << mark.path << " names vHCU " << m.vhcu_id << ", " << why;
    } else if (vhcu == nullptr) {
      LOG(INFO) << "vHCU " << m.vhcu_id << " of " << Describe(m) << " is already gone";
    }
    if (vhcu == nullptr) {
      if (file_util::RemoveFile(mark.path, file_util::Durability::kSyncFileAndDirectory).ok())
        ++result.marks_removed;
      continue;
    }
    DestroyOrQueue(*vhcu, mark, "", &result);
  }
  for (const Vhcu& v : inventory.vhcus) {
    if (marked.count(v.id) == 0 && !IsQueued(v.id)) {
      VLOG(2) << "vHCU " << v.id << " on card " << v.card
              << " has no mark file: not created by this plugin, left alone";
    }
  }
  return result;
}

VhcuSweepResult VhcuManager::Impl::Tick() {
  VhcuSweepResult result;
  std::vector<Retry> due;
  {
    MutexLock lock(mu_);
    const auto now = clock_.Now();
    for (const auto& [id, retry] : retries_) {
      if (retry.due <= now) due.push_back(retry);
    }
  }
  if (due.empty()) return result;
  StatusOr<VhcuHostLock> host_lock = Lock(options_.sweep_lock_timeout);
  StatusOr<NodeInventory> inventory =
      host_lock.ok() ? backend_->Discover() : StatusOr<NodeInventory>(host_lock.status());
  StatusOr<std::vector<MarkFile>> marks = inventory.ok()
                                              ? ListMarkFiles(options_.host_root, nullptr)
                                              : StatusOr<std::vector<MarkFile>>(inventory.status());
  for (const Retry& retry : due) {
    if (!marks.ok()) {
      Queue(retry, marks.status(), &result);
      continue;
    }
    // Another owner's mark names the id: the vHCU went meanwhile and the id
    // was given to theirs. Only this retry's files are left to remove.
    const bool taken_over = std::any_of(marks->begin(), marks->end(), [&retry](const MarkFile& m) {
      return !m.name.whole_card() && m.name.vhcu_id == retry.vhcu_id &&
             !(retry.mark && m.name == retry.mark->name);
    });
    Lookup<Vhcu> found = taken_over ? Lookup<Vhcu>::Absent() : inventory->LookupVhcu(retry.vhcu_id);
    if (taken_over) {
      LOG(WARNING) << "vHCU " << retry.vhcu_id << " whose destroy was queued went meanwhile; "
                   << "its id now belongs to another pod's vHCU: left alone";
    } else if (found.certainty() == Certainty::kUnknown) {
      Queue(retry, UnavailableError(found.why()), &result);
      continue;
    }
    const Vhcu* now = found.certainty() == Certainty::kFound ? &found.value() : nullptr;
    Vhcu gone;
    gone.id = -1;  // nothing to destroy: just the files
    if (now != nullptr && !retry.card_bdf.empty() &&
        (now->card_bdf != retry.card_bdf || now->compute_units != retry.compute_units ||
         now->memory_mib != retry.memory_mib)) {
      LOG(WARNING) << "vHCU " << retry.vhcu_id << " is no longer the one whose destroy was queued ("
                   << "someone else destroyed it and the id was reused): left alone";
      now = nullptr;
    }
    if (now == nullptr) {  // already gone: only its files are left to remove
      MutexLock lock(mu_);
      retries_.erase(retry.vhcu_id);
    }
    DestroyOrQueue(now != nullptr ? *now : gone, retry.mark, retry.intent_path, &result);
  }
  return result;
}

void VhcuManager::Impl::ForgetFresh(const std::string& pod_uid) {
  MutexLock lock(mu_);
  fresh_pods_.erase(pod_uid);
}

size_t VhcuManager::Impl::pending_destroys() const {
  MutexLock lock(mu_);
  return retries_.size();
}

std::optional<Clock::TimePoint> VhcuManager::Impl::next_retry_time() const {
  MutexLock lock(mu_);
  std::optional<Clock::TimePoint> next;
  for (const auto& [id, retry] : retries_) {
    if (!next || retry.due < *next) next = retry.due;
  }
  return next;
}

}  // namespace hcudp
