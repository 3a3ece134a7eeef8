// PodCache: LIST + WATCH reflector for pods.
#include "hcudp/pod_cache.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <optional>
#include <random>
#include <thread>

#include "hcudp/kube_ops.h"
#include "hcudp_internal/clock_wait.h"
#include "hcudp_internal/log.h"
#include "hcudp_internal/thread_annotations.h"

namespace hcudp {
namespace {

std::string Key(const std::string& ns, const std::string& name) { return ns + "/" + name; }
std::string Key(const Pod& pod) { return Key(pod.metadata.namespace_name, pod.metadata.name); }

}  // namespace

class PodCache::Impl {
 public:
  Impl(KubeClient* client, PodCacheOptions options)
      : client_(client),
        options_(std::move(options)),
        clock_(options_.clock != nullptr ? *options_.clock : Clock::Real()),
        backoff_(client_->retry_policy().NewBackoff()),
        rng_(std::random_device{}()) {}

  ~Impl() { Stop(); }

  void Start() {
    MutexLock lock(mu_);
    if (thread_.joinable() || stop_.load()) return;
    thread_ = std::thread([this] { Run(); });
  }

  void Stop() {
    {
      MutexLock lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

  bool HasSynced() const {
    MutexLock lock(mu_);
    return synced_;
  }

  bool Current() const {
    MutexLock lock(mu_);
    return synced_ && !history_lost_;
  }

  std::optional<Pod> Get(const std::string& ns, const std::string& name) const {
    MutexLock lock(mu_);
    auto it = pods_.find(Key(ns, name));
    if (it == pods_.end()) return std::nullopt;
    return it->second;
  }

  std::vector<Pod> List() const {
    MutexLock lock(mu_);
    std::vector<Pod> out;
    out.reserve(pods_.size());
    for (const auto& [key, pod] : pods_) out.push_back(pod);
    return out;
  }

  std::string ResourceVersion() const {
    MutexLock lock(mu_);
    return resource_version_;
  }

 private:
  // The cache thread's loop: list, then watch until an error; see pod_cache.h.
  void Run() {
    bool need_list = true;
    bool just_listed = false;  // no watch has accepted the last LIST's version yet
    int quick_ends = 0;
    while (!stopping()) {
      if (need_list) {
        Status s = Relist();
        if (!s.ok()) {
          PauseAfter(s, std::nullopt, "list failed", "listing again");
          continue;
        }
        need_list = false;
        just_listed = true;
      }
      const Clock::TimePoint start = clock_.Now();
      int64_t events = 0;
      std::optional<int> retry_after_s;
      Status s = WatchOnce(&events, &retry_after_s);
      if (stopping()) break;
      // Gone from the version of the LIST just made is no expiry: relisting
      // at once would only repeat it, a LIST storm on the API server.
      const bool gone_right_after_list = just_listed && events == 0;
      just_listed = false;
      if (s.ok()) {
        // The server ended the stream (timeout): resume from where we are.
        // A server that keeps closing at once gets the process's backoff,
        // not a hot loop.
        bool quick = events == 0 && clock_.Now() - start < std::chrono::seconds(1);
        quick_ends = quick ? quick_ends + 1 : 0;
        if (quick_ends >= 3) PauseAfter(s, std::nullopt, "watch keeps ending at once", "watching");
        continue;
      }
      if (IsGone(s) && !gone_right_after_list) {
        // Events may have been missed: the contents are not current until
        // the relist. A fleet meets this together (an API server restart):
        // spread the relists.
        SetHistoryLost();
        const auto spread = RelistSpread();
        VLOG(2) << "pod cache: " << s.message() << "; relisting in " << spread.count() << " ms";
        SleepMs(static_cast<int>(spread.count()));
        need_list = true;
        continue;
      }
      // A transient failure (the server unreachable or shedding load, a
      // stalled stream) leaves the cache current to its last version: it
      // watches again from there after the pause. A LIST would only add load,
      // on an overloaded server the heaviest request of all.
      if (Resumable(s) && !IsGone(s)) {
        PauseAfter(s, retry_after_s, "watch failed", "watching again");
        continue;
      }
      need_list = true;
      SetHistoryLost();
      PauseAfter(s, retry_after_s, "watch failed", "relisting");
    }
  }

  // Failures after which a watch from the last version can still succeed.
  static bool Resumable(const Status& s) {
    return s.code() == StatusCode::kUnavailable || s.code() == StatusCode::kDeadlineExceeded ||
           s.code() == StatusCode::kResourceExhausted;
  }

  void SetHistoryLost() {
    MutexLock lock(mu_);
    history_lost_ = true;
  }

  std::chrono::milliseconds RelistSpread() {
    if (options_.relist_jitter.count() <= 0) return std::chrono::milliseconds(0);
    return std::chrono::milliseconds(
        std::uniform_int_distribution<int64_t>(1, options_.relist_jitter.count())(rng_));
  }

  // Waits the pause of the cache's own ladder (raised to a Retry-After)
  // after `s`.
  void PauseAfter(const Status& s, const std::optional<int>& retry_after_s, const char* what,
                  const char* next) {
    const std::chrono::milliseconds pause = backoff_->Pause(retry_after_s);
    LOG(WARNING) << "pod cache: " << what << (s.ok() ? "" : ": " + s.ToString()) << "; " << next
                 << " in " << pause.count() << " ms";
    SleepMs(static_cast<int>(pause.count()));
  }

  bool stopping() const { return stop_.load(); }

  void SleepMs(int ms) {
    MutexLock lock(mu_);
    WaitUntil(clock_, mu_, cv_, clock_.Now() + std::chrono::milliseconds(ms),
              [this] { return stop_.load(); });
  }

  ListOptions BaseOptions() const {
    ListOptions o;
    o.field_selector = options_.field_selector;
    o.label_selector = options_.label_selector;
    return o;
  }

  // Replaces the contents with a fresh LIST and reports the difference.
  Status Relist() {
    ListOptions o = BaseOptions();
    // From the API server's watch cache, as client-go's reflector asks (the
    // server then serves it whole: no paging at resourceVersion=0).
    o.resource_version = "0";
    o.limit = options_.page_size;
    CallOptions call;
    call.cancel = &stop_;           // Stop() aborts a LIST in flight
    HCUDP_ASSIGN_OR_RETURN(PodList list, ListPods(*client_, options_.namespace_name, o, call));
    std::map<std::string, Pod> fresh;
    for (Pod& pod : list.items) fresh.emplace(Key(pod), std::move(pod));
    std::vector<PodEvent> events;
    {
      MutexLock lock(mu_);
      for (const auto& [key, pod] : fresh) {
        auto old = pods_.find(key);
        if (old == pods_.end()) {
          events.push_back({PodEvent::Type::kAdded, std::nullopt, pod});
        } else if (old->second.metadata.resource_version != pod.metadata.resource_version) {
          events.push_back({PodEvent::Type::kUpdated, old->second, pod});
        }
      }
      for (const auto& [key, pod] : pods_) {
        if (fresh.count(key) == 0) events.push_back({PodEvent::Type::kDeleted, pod, std::nullopt});
      }
      pods_ = std::move(fresh);
      resource_version_ = list.resource_version;
      history_lost_ = false;
    }
    Emit(events);
    {
      // Synced only once the handlers have seen the initial state.
      MutexLock lock(mu_);
      synced_ = true;
    }
    cv_.notify_all();
    return OkStatus();
  }

  Status WatchOnce(int64_t* events_seen, std::optional<int>* retry_after_s) {
    ListOptions o = BaseOptions();
    o.resource_version = ResourceVersion();
    o.allow_watch_bookmarks = true;
    o.timeout_seconds = options_.watch_timeout_s;
    Status apply_error;
    Status s = client_->Watch(
        PodsPath(options_.namespace_name), o,
        [&](const WatchEvent& e) {
          ++*events_seen;
          apply_error = Apply(e);
          return apply_error.ok();
        },
        &stop_, retry_after_s);
    if (!apply_error.ok()) return apply_error;
    return s;
  }

  Status Apply(const WatchEvent& e) {
    if (e.type == WatchEventType::kBookmark) {
      MutexLock lock(mu_);
      if (!e.resource_version.empty()) resource_version_ = e.resource_version;
      return OkStatus();
    }
    StatusOr<Pod> pod = ParsePod(e.object_json);
    if (!pod.ok()) return pod.status().WithContext("pod cache: watch event");
    std::vector<PodEvent> events;
    {
      MutexLock lock(mu_);
      const std::string key = Key(*pod);
      auto old = pods_.find(key);
      if (e.type == WatchEventType::kDeleted) {
        if (old != pods_.end()) {
          events.push_back({PodEvent::Type::kDeleted, std::move(old->second), std::nullopt});
          pods_.erase(old);
        }
      } else if (old == pods_.end()) {
        events.push_back({PodEvent::Type::kAdded, std::nullopt, *pod});
        pods_.emplace(key, *pod);
      } else {
        events.push_back({PodEvent::Type::kUpdated, old->second, *pod});
        old->second = *pod;
      }
      if (!e.resource_version.empty()) resource_version_ = e.resource_version;
    }
    Emit(events);
    return OkStatus();
  }

  void Emit(const std::vector<PodEvent>& events) {
    if (!options_.on_event) return;
    for (const PodEvent& e : events) options_.on_event(e);
  }

  KubeClient* const client_;
  const PodCacheOptions options_;
  Clock& clock_;
  mutable Mutex mu_;  // a leaf: handlers run and the API server is called outside it
  mutable std::condition_variable cv_;
  std::map<std::string, Pod> pods_ HCUDP_GUARDED_BY(mu_);  // key "ns/name"
  std::string resource_version_ HCUDP_GUARDED_BY(mu_);
  bool synced_ HCUDP_GUARDED_BY(mu_) = false;
  // A 410 (or an error that needs a relist) until the relist is applied.
  bool history_lost_ HCUDP_GUARDED_BY(mu_) = false;
  // The cache's own ladder (retry_policy.h); the cache thread's.
  const std::unique_ptr<Backoff> backoff_;
  std::minstd_rand rng_;  // the cache thread's: the relist spread
  // Set under mu_ (for cv_ waiters); read without it, and by
  // KubeClient::Watch as its cancel flag.
  std::atomic<bool> stop_{false};
  std::thread thread_;  // owned by the caller of Start/Stop
};

PodCache::PodCache(KubeClient* client, PodCacheOptions options)
    : impl_(std::make_unique<Impl>(client, std::move(options))) {}
PodCache::~PodCache() { Stop(); }
void PodCache::Start() { impl_->Start(); }
void PodCache::Stop() { impl_->Stop(); }
bool PodCache::HasSynced() const { return impl_->HasSynced(); }
bool PodCache::Current() const { return impl_->Current(); }
std::optional<Pod> PodCache::Get(const std::string& ns, const std::string& name) const {
  return impl_->Get(ns, name);
}
std::vector<Pod> PodCache::List() const { return impl_->List(); }
std::string PodCache::ResourceVersion() const { return impl_->ResourceVersion(); }

}  // namespace hcudp
