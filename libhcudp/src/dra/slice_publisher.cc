// SlicePublisher: the worker that keeps the pool published (see the header).
#include "hcudp/dra/slice_publisher.h"

#include <glog/logging.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <optional>
#include <thread>
#include <utility>

#include "dra/slice_sync.h"
#include "hcudp_internal/clock_wait.h"
#include "hcudp_internal/thread_annotations.h"

namespace hcudp::dra {

class SlicePublisher::Impl {
 public:
  Impl(KubeClient& client, SlicePublisherOptions options)
      : client_(client),
        options_(std::move(options)),
        clock_(options_.clock != nullptr ? *options_.clock : Clock::Real()) {}

  ~Impl() { Stop(); }

  Status SyncNow(const NodeInventory& inventory) {
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

  uint64_t SetInventory(NodeInventory inventory) {
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
  Status RunSync(const NodeInventory& inventory, SyncMemory memory, Clock::TimePoint deadline,
                 uint64_t sequence) HCUDP_EXCLUDES(mu_) {
    CallOptions call;
    call.deadline = deadline;
    call.cancel = &cancel_;
    StatusOr<SyncResult> result = SyncPool(client_, inventory, options_.params, memory, call);
    {
      MutexLock lock(mu_);
      syncing_ = false;
      memory_ = memory;
      ++state_.syncs;
      state_.taints_dropped = memory.taints_dropped;
      state_.consumable_capacity_dropped = memory.consumable_capacity_dropped;
      if (result.ok()) {
        state_.generation = result->generation;
        state_.slice_count = result->slices;
        state_.device_count = result->devices;
        state_.writes += static_cast<uint64_t>(result->writes);
        state_.synced_sequence = std::max(state_.synced_sequence, sequence);
        state_.last_status = OkStatus();
      } else {
        state_.last_status = result.status();
      }
    }
    cv_.notify_all();
    if (!result.ok()) {
      LOG(WARNING) << "ResourceSlice sync failed: " << result.status().ToString();
      return result.status();
    }
    if (result->writes > 0) {
      LOG(INFO) << "published ResourceSlice pool " << options_.params.node_name << " generation "
                << result->generation << ": " << result->devices << " devices in " << result->slices
                << " slice(s)";
    }
    return OkStatus();
  }

  // Watches the node's slices; a deletion (kubelet restarted, or anyone
  // else) asks for a resync. Re-watches from the last resourceVersion, from
  // scratch after 410 Gone, with backoff after errors.
  void WatchLoop() {
    ListOptions list;
    list.field_selector = "spec.nodeName=" + options_.params.node_name +
                          ",spec.driver=" + options_.params.driver_name;
    list.allow_watch_bookmarks = true;
    std::chrono::milliseconds backoff = options_.retry_initial;
    for (;;) {
      bool any_event = false;
      std::optional<int> retry_after_s;
      Status s = client_.Watch(
          ResourceSlicesPath(), list,
          [&](const WatchEvent& e) {
            any_event = true;
            if (!e.resource_version.empty()) list.resource_version = e.resource_version;
            if (e.type == WatchEventType::kDeleted) RequestResync();
            return true;
          },
          &cancel_, &retry_after_s);
      if (IsGone(s)) list.resource_version.clear();
      // A watch the server ended without a single event (not even the
      // bookmark asked for) is no sign of health: a proxy or a broken server
      // that closes every stream at once would otherwise be watched again
      // in a tight loop. It waits the backoff like an error.
      const bool healthy = (s.ok() && any_event) || IsGone(s);
      if (healthy) {
        backoff = options_.retry_initial;
      } else if (s.ok()) {
        VLOG(1) << "ResourceSlice watch ended without an event";
      } else if (s.code() != StatusCode::kCancelled) {
        VLOG(1) << "ResourceSlice watch ended: " << s.ToString();
      }
      // A healthy stream that ended is watched again at once. A server
      // shedding load (429, 503) says when to come back; at most retry_max,
      // as the publisher's own backoff.
      const std::chrono::milliseconds pause =
          PauseForRetryAfter(s.ok() && any_event ? std::chrono::milliseconds(0) : backoff,
                             retry_after_s, options_.retry_max);
      MutexLock lock(mu_);
      const Clock::TimePoint until = clock_.Now() + pause;
      WaitUntil(clock_, mu_, cv_, until, [&]() HCUDP_REQUIRES(mu_) { return stop_; });
      if (stop_) return;
      if (!s.ok() || !any_event) backoff = std::min(backoff * 2, options_.retry_max);
    }
  }

  void Loop() {
    std::chrono::milliseconds backoff = options_.retry_initial;
    Clock::TimePoint next = clock_.Now();
    for (;;) {
      std::optional<NodeInventory> inventory;
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
      Status status = RunSync(*inventory, memory, start + options_.sync_timeout, sequence);
      if (status.ok()) {
        backoff = options_.retry_initial;
        next = clock_.Now() + options_.resync_interval;
      } else {
        next = clock_.Now() + backoff;
        backoff = std::min(backoff * 2, options_.retry_max);
      }
    }
  }

  KubeClient& client_;
  const SlicePublisherOptions options_;
  Clock& clock_;
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
  std::optional<NodeInventory> inventory_ HCUDP_GUARDED_BY(mu_);
  SyncMemory memory_ HCUDP_GUARDED_BY(mu_);
  PublisherState state_ HCUDP_GUARDED_BY(mu_);
};

StatusOr<std::unique_ptr<SlicePublisher>> SlicePublisher::New(KubeClient& client,
                                                              SlicePublisherOptions options) {
  // A plan of an empty node checks the names without touching the network.
  auto plan = BuildPoolPlan(NodeInventory{}, options.params);
  if (!plan.ok()) return plan.status();
  if (options.sync_timeout.count() <= 0 || options.retry_initial.count() <= 0 ||
      options.retry_max < options.retry_initial || options.resync_interval.count() <= 0) {
    return InvalidArgumentError(
        "SlicePublisher: sync_timeout, retry_initial and resync_interval must be positive and "
        "retry_max >= retry_initial");
  }
  return std::unique_ptr<SlicePublisher>(
      new SlicePublisher(std::make_unique<Impl>(client, std::move(options))));
}

SlicePublisher::SlicePublisher(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
SlicePublisher::~SlicePublisher() = default;

Status SlicePublisher::SyncNow(const NodeInventory& inventory) { return impl_->SyncNow(inventory); }
void SlicePublisher::Start() { impl_->Start(); }
void SlicePublisher::Stop() { impl_->Stop(); }
uint64_t SlicePublisher::SetInventory(NodeInventory inventory) {
  return impl_->SetInventory(std::move(inventory));
}
void SlicePublisher::RequestResync() { impl_->RequestResync(); }
bool SlicePublisher::WaitSynced(uint64_t sequence, Clock::TimePoint deadline) {
  return impl_->WaitSynced(sequence, deadline);
}
PublisherState SlicePublisher::state() const { return impl_->state(); }

}  // namespace hcudp::dra
