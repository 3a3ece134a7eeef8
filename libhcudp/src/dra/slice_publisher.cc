// SlicePublisher: the worker that keeps the pool published (see the header).
#include "hcudp/dra/slice_publisher.h"

#include <rapidjson/document.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <optional>
#include <thread>
#include <utility>

#include "dra/slice_sync.h"
#include "dra/slice_watch.h"
#include "hcudp/kube_ops.h"
#include "hcudp_internal/clock_wait.h"
#include "hcudp_internal/log.h"
#include "hcudp_internal/thread_annotations.h"

namespace hcudp::dra {
namespace {

// GET /version: a non-resource URL that every authenticated client may read
// (the system:public-info-viewer ClusterRole), so it needs no grant of ours.
ResourcePath ServerVersionPath() {
  ResourcePath path;
  path.api_prefix = "";
  path.resource = "version";
  return path;
}

// gitVersion of a /version answer.
StatusOr<std::string> GitVersionOf(const std::string& json) {
  rapidjson::Document doc;
  doc.Parse(json.data(), json.size());
  if (doc.HasParseError() || !doc.IsObject()) return InternalError("not a JSON object");
  auto v = doc.FindMember("gitVersion");
  if (v == doc.MemberEnd() || !v->value.IsString()) return InternalError("no gitVersion");
  return std::string(v->value.GetString(), v->value.GetStringLength());
}

}  // namespace

class SlicePublisher::Impl {
 public:
  Impl(KubeClient& client, SlicePublisherOptions options)
      : client_(client),
        options_(std::move(options)),
        clock_(options_.clock != nullptr ? *options_.clock : Clock::Real()),
        watch_backoff_(client_.retry_policy().NewBackoff()),
        sync_backoff_(client_.retry_policy().NewBackoff()),
        node_uid_(options_.params.node_uid) {}

  ~Impl() { Stop(); }

  Status SyncNow(const SliceOffer& inventory) {
    const Clock::TimePoint deadline = clock_.Now() + options_.sync_timeout;
    SyncMemory memory;
    {
      MutexLock lock(mu_);
      if (!WaitUntil(clock_, mu_, cv_, deadline,
                     [this]() HCUDP_REQUIRES(mu_) { return !syncing_ || stop_; })) {
        return DeadlineExceededError("ResourceSlice sync: another sync still runs");
      }
      if (stop_) return CancelledStatus();
      syncing_ = true;
      memory = memory_;
    }
    return RunSync(inventory, memory, deadline, 0);
  }

  void Start() {
    MutexLock lock(mu_);
    if (started_ || stop_) return;
    started_ = true;
    worker_ = std::thread([this] { Loop(); });
    if (options_.watch) watcher_ = std::thread([this] { WatchLoop(); });
  }

  void Stop() {
    {
      MutexLock lock(mu_);
      stop_ = true;
    }
    cancel_.store(true);
    cv_.notify_all();
    if (worker_.joinable()) worker_.join();
    if (watcher_.joinable()) watcher_.join();
  }

  uint64_t SetInventory(SliceOffer inventory) {
    uint64_t seq;
    {
      MutexLock lock(mu_);
      inventory_ = std::move(inventory);
      seq = ++sequence_;
      dirty_ = true;
    }
    cv_.notify_all();
    return seq;
  }

  void RequestResync() {
    {
      MutexLock lock(mu_);
      dirty_ = true;
    }
    cv_.notify_all();
  }

  bool WaitSynced(uint64_t sequence, Clock::TimePoint deadline) {
    MutexLock lock(mu_);
    return WaitUntil(clock_, mu_, cv_, deadline,
                     [&]() HCUDP_REQUIRES(mu_) { return state_.synced_sequence >= sequence; });
  }

  PublisherState state() const {
    MutexLock lock(mu_);
    return state_;
  }

 private:
  static Status CancelledStatus() { return Status(StatusCode::kCancelled, "publisher stopped"); }

  // Runs one sync without the lock; `syncing_` is set by the caller and
  // cleared here. `sequence` is the inventory's (0: not the worker's).
  // `retry_after_s` receives a refusal's Retry-After.
  Status RunSync(const SliceOffer& inventory, SyncMemory memory, Clock::TimePoint deadline,
                 uint64_t sequence, std::optional<int>* retry_after_s = nullptr)
      HCUDP_EXCLUDES(mu_) {
    CallOptions call;
    call.deadline = deadline;
    call.cancel = &cancel_;
    call.retry_after_s = retry_after_s;
    SliceParams params = options_.params;
    params.node_uid = OwnerUid(call);
    // The watched copy stands in for the LIST, unless the last sync failed:
    // a write whose answer was lost (a POST the server may have applied) is
    // looked up on the server before anything is written again.
    std::optional<std::string> snapshot;
    bool trust_snapshot;
    {
      MutexLock lock(mu_);
      trust_snapshot = options_.watch && last_sync_ok_;
    }
    if (trust_snapshot) snapshot = watched_.Snapshot();
    if (Latched(memory) && TakeServerCheck()) RecheckServer(memory, call);
    SyncResult result;
    Status st = SyncPool(client_, inventory, params, memory, call, snapshot, result);
    if (Latched(memory) && memory.server_version.empty()) {
      StatusOr<std::string> version = ServerVersion(call);
      if (version.ok()) memory.server_version = *version;
    }
    for (const auto& [name, json] : result.written) watched_.ApplyWrite(name, json);
    {
      MutexLock lock(mu_);
      syncing_ = false;
      last_sync_ok_ = st.ok();
      memory_ = memory;
      ++state_.syncs;
      if (!snapshot) ++state_.lists;
      state_.taints_dropped = memory.taints_dropped;
      state_.consumable_capacity_dropped = memory.consumable_capacity_dropped;
      state_.writes += static_cast<uint64_t>(result.written.size());
      if (st.ok()) {
        state_.generation = result.generation;
        state_.slice_count = result.slices;
        state_.device_count = result.devices;
        state_.synced_sequence = std::max(state_.synced_sequence, sequence);
        state_.last_status = OkStatus();
      } else {
        state_.last_status = st;
      }
    }
    cv_.notify_all();
    if (!st.ok()) {
      LOG(WARNING) << "ResourceSlice sync failed: " << st.ToString();
      return st;
    }
    if (result.writes > 0) {
      LOG(INFO) << "published ResourceSlice pool " << options_.params.node_name << " generation "
                << result.generation << ": " << result.devices << " devices in " << result.slices
                << " slice(s)";
    }
    return OkStatus();
  }

  static bool Latched(const SyncMemory& m) {
    return m.taints_dropped || m.consumable_capacity_dropped;
  }

  bool TakeServerCheck() HCUDP_EXCLUDES(mu_) {
    MutexLock lock(mu_);
    return std::exchange(server_check_due_, false);
  }

  // The API server's gitVersion (GET /version).
  StatusOr<std::string> ServerVersion(const CallOptions& call) {
    HCUDP_ASSIGN_OR_RETURN(std::string json, client_.Get(ServerVersionPath(), call));
    StatusOr<std::string> version = GitVersionOf(json);
    if (!version.ok()) return version.status().WithContext("GET /version");
    return version;
  }

  // "The server drops taints / consumable capacity" holds for one server
  // version: after a watch ended (a restart, perhaps an upgrade) a server
  // that reports another version is asked again (the next write shows it).
  void RecheckServer(SyncMemory& memory, const CallOptions& call) {
    StatusOr<std::string> version = ServerVersion(call);
    if (!version.ok() || *version == memory.server_version) return;
    LOG(INFO) << "API server version " << memory.server_version << " -> " << *version
              << ": checking again whether it keeps device taints and consumable capacity";
    memory.taints_dropped = false;
    memory.consumable_capacity_dropped = false;
    memory.server_version.clear();
  }

  // The Node UID the slices name as their owner (owned_by_node). Read again
  // when it is not known (a failed read: at most once per resync_interval)
  // and after a slice of the pool was deleted (GC, when the Node was
  // re-created under the same name).
  std::string OwnerUid(const CallOptions& call) HCUDP_EXCLUDES(mu_) {
    if (!options_.owned_by_node) return options_.params.node_uid;
    const Clock::TimePoint now = clock_.Now();
    {
      MutexLock lock(mu_);
      const bool due = owner_check_due_ ||
                       (node_uid_.empty() && (owner_checked_at_ == Clock::TimePoint{} ||
                                              now - owner_checked_at_ >= options_.resync_interval));
      if (!due) return node_uid_;
      owner_checked_at_ = now;
    }
    StatusOr<NodeObject> node = GetNode(client_, options_.params.node_name, call);
    MutexLock lock(mu_);
    if (node.ok() || IsNotFound(node.status())) {
      const std::string uid = node.ok() ? node->metadata.uid : "";
      if (uid != node_uid_) {
        LOG(INFO) << "ResourceSlices of node " << options_.params.node_name << ": owner "
                  << (uid.empty() ? "none (no such Node)" : "Node uid " + uid);
      }
      node_uid_ = uid;
      owner_check_due_ = false;
    } else {
      LOG(WARNING) << "ResourceSlices: reading node " << options_.params.node_name
                   << " for its UID failed: " << node.status().ToString();
    }
    return node_uid_;
  }

  // Waits `pause` on the clock; false when stopped.
  bool PauseFor(std::chrono::milliseconds pause) HCUDP_EXCLUDES(mu_) {
    MutexLock lock(mu_);
    const Clock::TimePoint until = clock_.Now() + pause;
    WaitUntil(clock_, mu_, cv_, until, [&]() HCUDP_REQUIRES(mu_) { return stop_; });
    return !stop_;
  }

  // Failures after which the watch can go on from its last resourceVersion.
  static bool Resumable(const Status& s) {
    return s.code() == StatusCode::kUnavailable || s.code() == StatusCode::kDeadlineExceeded ||
           s.code() == StatusCode::kResourceExhausted;
  }

  // LIST, then WATCH the node's slices from the list's resourceVersion, into
  // `watched_` (what a resync compares against); a deletion (kubelet
  // restarted, GC, anyone else) asks for a resync. A cleanly ended watch is
  // re-opened from the last resourceVersion; a transient failure is watched
  // again from there after the process's retry pause (raised to a
  // Retry-After); only 410 Gone or an error the watch cannot resume from
  // makes it LIST again.
  void WatchLoop() {
    ListOptions list;
    list.field_selector = "spec.nodeName=" + options_.params.node_name +
                          ",spec.driver=" + options_.params.driver_name;
    Backoff& policy = *watch_backoff_;  // this loop's own ladder
    std::string version;
    bool listed = false;
    bool just_listed = false;  // no watch has accepted the last LIST's version yet
    for (;;) {
      if (!listed) {
        CallOptions call;
        call.cancel = &cancel_;
        call.deadline = clock_.Now() + options_.sync_timeout;
        std::optional<int> retry_after_s;
        call.retry_after_s = &retry_after_s;
        // From the API server's watch cache, as client-go's reflector asks.
        ListOptions from_cache = list;
        from_cache.resource_version = "0";
        StatusOr<std::string> json = client_.List(ResourceSlicesPath(), from_cache, call);
        StatusOr<std::string> listed_version =
            json.ok() ? watched_.ApplyList(*json) : StatusOr<std::string>(json.status());
        if (!listed_version.ok()) {
          if (listed_version.status().code() != StatusCode::kCancelled) {
            VLOG(1) << "ResourceSlice list failed: " << listed_version.status().ToString();
          }
          if (!PauseFor(policy.Pause(retry_after_s))) return;
          continue;
        }
        version = *listed_version;
        listed = true;
        just_listed = true;
        // What changed while the watch was down (kubelet deleted the
        // slices?) is in the fresh copy: compare against it now, locally.
        RequestResync();
      }
      ListOptions watch = list;
      watch.resource_version = version;
      watch.allow_watch_bookmarks = true;
      bool any_event = false;
      std::optional<int> retry_after_s;
      Status s = client_.Watch(
          ResourceSlicesPath(), watch,
          [&](const WatchEvent& e) {
            any_event = true;
            if (!e.resource_version.empty()) version = e.resource_version;
            watched_.ApplyEvent(e);
            if (e.type == WatchEventType::kDeleted) SliceDeleted();
            return true;
          },
          &cancel_, &retry_after_s);
      {
        MutexLock lock(mu_);
        if (stop_) return;
        server_check_due_ = true;  // the server may have restarted (an upgrade?)
      }
      // Gone from the version of the LIST just made is no expiry: listing
      // again at once would only repeat it.
      const bool gone_right_after_list = just_listed && !any_event;
      just_listed = false;
      if (s.ok() && any_event) continue;  // a healthy stream ended: on from `version`
      if (IsGone(s) && !gone_right_after_list) {
        // The version expired: LIST again, at once.
        VLOG(1) << "ResourceSlice watch: " << s.message() << "; listing again";
        watched_.Invalidate();
        listed = false;
        continue;
      }
      // A watch the server ended without a single event (not even the
      // bookmark asked for) is no sign of health: a proxy or a broken server
      // that closes every stream at once would otherwise be watched again
      // in a tight loop. It waits the pause like an error.
      if (s.ok()) {
        VLOG(1) << "ResourceSlice watch ended without an event";
      } else {
        VLOG(1) << "ResourceSlice watch ended: " << s.ToString();
        if (!Resumable(s)) {
          watched_.Invalidate();
          listed = false;
        }
      }
      if (!PauseFor(policy.Pause(retry_after_s))) return;
    }
  }

  void SliceDeleted() {
    {
      MutexLock lock(mu_);
      dirty_ = true;
      owner_check_due_ = options_.owned_by_node;
    }
    cv_.notify_all();
  }

  void Loop() {
    Clock::TimePoint next = clock_.Now();
    for (;;) {
      std::optional<SliceOffer> inventory;
      uint64_t sequence = 0;
      SyncMemory memory;
      {
        MutexLock lock(mu_);
        // Wait for a reason to sync: a change, a resync request, the resync
        // or retry time; and for a SyncNow on another thread to finish.
        for (;;) {
          if (stop_) return;
          const bool due = inventory_.has_value() && (dirty_ || clock_.Now() >= next);
          if (due && !syncing_) break;
          Clock::TimePoint until =
              syncing_ || !inventory_ ? clock_.Now() + std::chrono::hours(1) : next;
          WaitUntil(clock_, mu_, cv_, until, [&]() HCUDP_REQUIRES(mu_) {
            return stop_ ||
                   (inventory_.has_value() && !syncing_ && (dirty_ || clock_.Now() >= next));
          });
        }
        dirty_ = false;
        syncing_ = true;
        inventory = inventory_;
        sequence = sequence_;
        memory = memory_;
      }
      const Clock::TimePoint start = clock_.Now();
      std::optional<int> retry_after_s;
      Status status =
          RunSync(*inventory, memory, start + options_.sync_timeout, sequence, &retry_after_s);
      // After a failure, the process's retry pause (a 429's Retry-After
      // included); after a success, the resync: against the watched copy, no
      // request unless something differs.
      next = clock_.Now() + (status.ok() ? options_.resync_interval
                                         : std::chrono::duration_cast<std::chrono::milliseconds>(
                                               sync_backoff_->Pause(retry_after_s)));
    }
  }

  KubeClient& client_;
  const SlicePublisherOptions options_;
  Clock& clock_;
  // One ladder per loop (retry_policy.h): the watch's and the sync's.
  const std::unique_ptr<Backoff> watch_backoff_;
  const std::unique_ptr<Backoff> sync_backoff_;
  std::atomic<bool> cancel_{false};
  std::thread worker_;
  std::thread watcher_;

  mutable Mutex mu_;
  std::condition_variable cv_;
  bool started_ HCUDP_GUARDED_BY(mu_) = false;
  bool stop_ HCUDP_GUARDED_BY(mu_) = false;
  bool syncing_ HCUDP_GUARDED_BY(mu_) = false;
  bool dirty_ HCUDP_GUARDED_BY(mu_) = false;
  uint64_t sequence_ HCUDP_GUARDED_BY(mu_) = 0;
  std::optional<SliceOffer> inventory_ HCUDP_GUARDED_BY(mu_);
  SyncMemory memory_ HCUDP_GUARDED_BY(mu_);
  PublisherState state_ HCUDP_GUARDED_BY(mu_);
  bool last_sync_ok_ HCUDP_GUARDED_BY(mu_) = false;
  // The owner (owned_by_node): the Node's UID as last read.
  std::string node_uid_ HCUDP_GUARDED_BY(mu_);
  bool owner_check_due_ HCUDP_GUARDED_BY(mu_) = false;
  bool server_check_due_ HCUDP_GUARDED_BY(mu_) = false;
  Clock::TimePoint owner_checked_at_ HCUDP_GUARDED_BY(mu_);
  WatchedSlices watched_;  // its own lock
};

StatusOr<std::unique_ptr<SlicePublisher>> SlicePublisher::New(KubeClient& client,
                                                              SlicePublisherOptions options) {
  // A plan of an empty node checks the names without touching the network.
  auto plan = BuildPoolPlan(NodeInventory{}, options.params);
  if (!plan.ok()) return plan.status();
  if (options.sync_timeout.count() <= 0 || options.resync_interval.count() <= 0) {
    return InvalidArgumentError(
        "SlicePublisher: sync_timeout and resync_interval must be positive");
  }
  return std::unique_ptr<SlicePublisher>(
      new SlicePublisher(std::make_unique<Impl>(client, std::move(options))));
}

SlicePublisher::SlicePublisher(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
SlicePublisher::~SlicePublisher() = default;

Status SlicePublisher::SyncNow(const SliceOffer& inventory) { return impl_->SyncNow(inventory); }
void SlicePublisher::Start() { impl_->Start(); }
void SlicePublisher::Stop() { impl_->Stop(); }
uint64_t SlicePublisher::SetInventory(SliceOffer inventory) {
  return impl_->SetInventory(std::move(inventory));
}
void SlicePublisher::RequestResync() { impl_->RequestResync(); }
bool SlicePublisher::WaitSynced(uint64_t sequence, Clock::TimePoint deadline) {
  return impl_->WaitSynced(sequence, deadline);
}
PublisherState SlicePublisher::state() const { return impl_->state(); }

}  // namespace hcudp::dra
