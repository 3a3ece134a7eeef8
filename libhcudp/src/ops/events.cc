// EventRecorder: the bounded queue, series cache and sender thread
// (hcudp/node_events.h).

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <optional>
#include <thread>
#include <tuple>

#include "hcudp_internal/clock_wait.h"
#include "hcudp_internal/log.h"
#include "hcudp_internal/thread_annotations.h"
#include "ops/events_internal.h"

namespace hcudp {

using internal::EventObject;
using internal::TokenBucket;

namespace {

struct Occurrence {
  EventType type = EventType::kNormal;
  std::string reason;
  std::string action;
  std::string note;
  Clock::WallTime wall;
};

// Controller and instance are the recorder's, regarding is our Node: the
// rest of client-go's isomorphic key, plus the note.
using SeriesKey = std::tuple<EventType, std::string, std::string, std::string>;

struct Series {
  std::string name;
  EventObject object;  // as created
  int64_t count = 1;
  int64_t sent_count = 1;  // the count the API server holds
  Clock::TimePoint last_seen;
  Clock::TimePoint last_sent;
  uint64_t order = 0;  // creation order, for forgetting the oldest
};

// Only a failure to reach the server is worth another try (a connection
// failure, 429, 5xx, a timeout: node_events.h); an answer (403, 422...) will
// be the same next time (client-go: "will not retry"). The client maps 429 to
// ResourceExhausted and 500 to Internal.
bool Retriable(const Status& st) {
  return st.code() == StatusCode::kUnavailable || st.code() == StatusCode::kDeadlineExceeded ||
         st.code() == StatusCode::kResourceExhausted || st.code() == StatusCode::kInternal;
}

}  // namespace

class EventRecorder::Impl {
 public:
  Impl(EventRecorderOptions options, Clock& clock) : options_(std::move(options)), clock_(clock) {
    if (options_.reporting_instance.empty()) {
      options_.reporting_instance = options_.reporting_controller + "-" + options_.node_name;
    }
    options_.reporting_instance = internal::CutUtf8(options_.reporting_instance, 128);
    if (options_.client != nullptr) backoff_ = options_.client->retry_policy().NewBackoff();
  }

  Status Start() {
    if (options_.node_name.empty() || options_.client == nullptr) {
      return InvalidArgumentError("--events: needs --node-name and cluster credentials");
    }
    {
      MutexLock lock(mu_);
      running_ = true;
    }
    thread_ = std::thread([this] { Loop(); });
    return OkStatus();
  }

  bool Record(EventType type, std::string_view reason, std::string_view action,
              std::string_view note) {
    {
      MutexLock lock(mu_);
      if (!running_ || stopping_ || refused_ || queue_.size() >= options_.queue_size) {
        ++stats_.dropped_full;
        return false;
      }
      queue_.push_back(Occurrence{type, std::string(reason), std::string(action), std::string(note),
                                  clock_.WallNow()});
      ++stats_.recorded;
    }
    cv_.notify_all();
    return true;
  }

  void Stop() {
    {
      MutexLock lock(mu_);
      stopping_ = true;
      queue_.clear();
    }
    cancel_ = true;
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
    idle_cv_.notify_all();
  }

  EventRecorderStats stats() const {
    MutexLock lock(mu_);
    return stats_;
  }

  bool WaitIdle(std::chrono::milliseconds timeout) const {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    MutexLock lock(mu_);
    while (!(queue_.empty() && !busy_)) {
      if (idle_cv_.wait_until(mu_, deadline) == std::cv_status::timeout) {
        return queue_.empty() && !busy_;
      }
    }
    return true;
  }

 private:
  void Loop() {
    for (;;) {
      std::optional<Occurrence> next;
      {
        MutexLock lock(mu_);
        busy_ = false;
        idle_cv_.notify_all();
        WaitUntil(clock_, mu_, cv_,
                  std::min(NextHousekeeping(), clock_.Now() + std::chrono::hours(1)),
                  [this]() HCUDP_REQUIRES(mu_) { return !queue_.empty() || stopping_; });
        if (stopping_) return;
        busy_ = true;
        if (!queue_.empty()) {
          next = std::move(queue_.front());
          queue_.pop_front();
        }
      }
      if (next) Handle(*next);
      Housekeeping();
      if (Refused()) series_.clear();  // nothing more is sent
    }
  }

  // When a series needs a heartbeat or its end, or a singleton is forgotten.
  Clock::TimePoint NextHousekeeping() const {
    Clock::TimePoint next = Clock::TimePoint::max();
    for (const auto& [key, s] : series_) {
      next = std::min(next, s.last_seen + options_.series_finish);
      if (s.count >= 2) next = std::min(next, s.last_sent + options_.heartbeat);
    }
    return next;
  }

  void Handle(const Occurrence& o) {
    const Clock::TimePoint now = clock_.Now();
    SeriesKey key{o.type, o.reason, o.action, o.note};
    auto it = series_.find(key);
    if (it != series_.end()) {
      Series& s = it->second;
      s.count++;
      s.last_seen = now;
      s.object.last_observed = o.wall;
      if (s.count != 2) return;  // later ones count in memory (client-go)
      if (!TakeToken(o.type, now)) {
        s.count--;
        return;
      }
      SendSeries(s);
      return;
    }
    if (!TakeToken(o.type, now)) return;
    EventObject e;
    e.name = NewName(o.wall);
    e.namespace_name = options_.namespace_name;
    e.node_name = options_.node_name;
    e.type = o.type;
    e.reason = o.reason;
    e.action = o.action;
    e.note = o.note;
    e.reporting_controller = options_.reporting_controller;
    e.reporting_instance = options_.reporting_instance;
    e.event_time = o.wall;
    e.last_observed = o.wall;
    if (!Create(e)) return;
    Series s;
    s.name = e.name;
    s.object = e;
    s.last_seen = now;
    s.last_sent = now;
    s.order = ++order_;
    series_[key] = std::move(s);
    Forget();
  }

  void Housekeeping() {
    const Clock::TimePoint now = clock_.Now();
    for (auto it = series_.begin(); it != series_.end();) {
      Series& s = it->second;
      const bool finished = now >= s.last_seen + options_.series_finish;
      if (s.count >= 2 && (finished || now >= s.last_sent + options_.heartbeat)) {
        if (s.count != s.sent_count || !finished) SendSeries(s);
        s.last_sent = now;
      }
      if (finished) {
        it = series_.erase(it);
      } else {
        ++it;
      }
      if (Stopping() || Refused()) return;
    }
  }

  // PATCH the series count; an event the server no longer has (TTL) is
  // created again, with its series.
  void SendSeries(Series& s) {
    ResourcePath path{"/apis/events.k8s.io/v1", "events", options_.namespace_name, s.name, ""};
    const std::string patch = internal::SeriesPatchJson(s.count, s.object.last_observed);
    Status st = Try([&](const CallOptions& call) {
      return options_.client->Patch(path, PatchType::kStrategicMerge, patch, call).status();
    });
    if (st.ok()) {
      s.sent_count = s.count;
      Count(&EventRecorderStats::patched);
      return;
    }
    if (IsNotFound(st)) {
      EventObject again = s.object;
      again.name = NewName(clock_.WallNow());
      again.series_count = s.count;
      if (Create(again)) {
        s.name = again.name;
        s.sent_count = s.count;
      }
      return;
    }
    LOG(WARNING) << "event " << s.name << ": series update failed: " << st.ToString();
  }

  bool Create(const EventObject& e) {
    ResourcePath path{"/apis/events.k8s.io/v1", "events", options_.namespace_name, "", ""};
    const std::string body = internal::EventJson(e);
    Status st = Try([&](const CallOptions& call) {
      return options_.client->Create(path, body, call).status();
    });
    if (st.ok()) {
      Count(&EventRecorderStats::created);
      VLOG(2) << "event " << e.reason << " created: " << e.name;
      return true;
    }
    if (!Stopping()) LOG(WARNING) << "event " << e.reason << " not sent: " << st.ToString();
    return false;
  }

  // The recorder's one retry layer (each call asks the client for no
  // retries of its own): up to max_tries attempts, retry_delay apart, while
  // the server is unreachable, and none started later than give_up_after
  // after the first; a stop ends the wait at once and a call in flight
  // within ~50 ms (cancel_).
  template <typename F>
  Status Try(const F& call) {
    CallOptions options;
    options.cancel = &cancel_;
    options.max_retries = 0;
    std::optional<int> retry_after_s;
    options.retry_after_s = &retry_after_s;
    const Clock::TimePoint give_up = clock_.Now() + options_.give_up_after;
    Status st;
    for (int attempt = 1; attempt <= options_.max_tries; ++attempt) {
      st = call(options);
      // A retried POST meeting AlreadyExists: the attempt whose answer was
      // lost created it (the name is this recorder's alone).
      if (attempt > 1 && IsAlreadyExists(st)) st = OkStatus();
      if (st.ok() || !Retriable(st) || attempt == options_.max_tries) break;
      // At least retry_delay, spread at random so that a fleet whose Events
      // all failed in one outage does not retry them all together, and the
      // pause of the Events loop's own ladder (under the process's budget,
      // raised to the server's Retry-After) when that is longer.
      RetryPolicy& policy = options_.client->retry_policy();
      const std::chrono::milliseconds pause = std::max<std::chrono::milliseconds>(
          policy.Spread(options_.retry_delay), backoff_->Pause(retry_after_s));
      const Clock::TimePoint next = clock_.Now() + pause;
      if (next > give_up) break;
      MutexLock lock(mu_);
      WaitUntil(clock_, mu_, cv_, next, [this]() HCUDP_REQUIRES(mu_) { return stopping_; });
      if (stopping_) break;
    }
    if (!st.ok() && !IsNotFound(st)) Count(&EventRecorderStats::failed);
    const bool refused =
        st.code() == StatusCode::kUnauthenticated || st.code() == StatusCode::kPermissionDenied;
    if (refused && options_.off_when_refused) TurnOff(st);
    return st;
  }

  // The credentials were refused (--events=auto): no more events.
  void TurnOff(const Status& st) {
    {
      MutexLock lock(mu_);
      if (refused_) return;
      refused_ = true;
      stats_.dropped_full += queue_.size();
      queue_.clear();
    }
    LOG(WARNING) << "--events=auto: the API server refused the credentials, running without "
                    "Kubernetes Events from now on: "
                 << st.ToString();
  }

  bool TakeToken(EventType type, Clock::TimePoint now) {
    auto it = buckets_.find(type);
    if (it == buckets_.end()) {
      it = buckets_.emplace(type, TokenBucket(options_.burst, options_.refill, now)).first;
    }
    if (it->second.Take(now)) return true;
    Count(&EventRecorderStats::rate_limited);
    return false;
  }

  // Forgets the first-created series beyond max_series (client-go: an LRU
  // cache of the same size).
  void Forget() {
    while (series_.size() > options_.max_series) {
      auto oldest = series_.begin();
      for (auto it = series_.begin(); it != series_.end(); ++it) {
        if (it->second.order < oldest->second.order) oldest = it;
      }
      series_.erase(oldest);
    }
  }

  // "<node>.<hex nanoseconds>", unique within this recorder. A DNS
  // subdomain of at most 253 characters, as the API server requires: a node
  // name too long for that is cut, and the cut's end trimmed back to a
  // letter or digit (a node name is a DNS subdomain itself).
  std::string NewName(Clock::WallTime wall) {
    uint64_t ns = static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(wall.time_since_epoch()).count());
    if (ns <= last_name_ns_) ns = last_name_ns_ + 1;
    last_name_ns_ = ns;
    char hex[32];
    std::snprintf(hex, sizeof hex, "%llx", static_cast<unsigned long long>(ns));  // NOLINT
    constexpr size_t kMaxName = 253;
    std::string node = options_.node_name;
    const size_t room = kMaxName - 1 - std::strlen(hex);
    if (node.size() > room) {
      node.resize(room);
      while (!node.empty() && (node.back() == '-' || node.back() == '.')) node.pop_back();
    }
    return node + "." + hex;
  }

  bool Stopping() const {
    MutexLock lock(mu_);
    return stopping_;
  }
  bool Refused() const {
    MutexLock lock(mu_);
    return refused_;
  }

  void Count(uint64_t EventRecorderStats::*field) {
    MutexLock lock(mu_);
    ++(stats_.*field);
  }

  EventRecorderOptions options_;
  Clock& clock_;
  // The Events loop's own ladder (retry_policy.h); set when there is a client.
  std::unique_ptr<Backoff> backoff_;
  mutable Mutex mu_;  // a leaf: no call is made and nothing else is locked under it
  std::condition_variable cv_;
  mutable std::condition_variable_any idle_cv_;
  std::deque<Occurrence> queue_ HCUDP_GUARDED_BY(mu_);
  EventRecorderStats stats_ HCUDP_GUARDED_BY(mu_);
  bool running_ HCUDP_GUARDED_BY(mu_) = false;
  bool stopping_ HCUDP_GUARDED_BY(mu_) = false;
  bool busy_ HCUDP_GUARDED_BY(mu_) = false;
  bool refused_ HCUDP_GUARDED_BY(mu_) = false;  // off_when_refused fired
  std::atomic<bool> cancel_{false};
  // The sender thread's own state.
  std::map<SeriesKey, Series> series_;
  std::map<EventType, TokenBucket> buckets_;
  uint64_t order_ = 0;
  uint64_t last_name_ns_ = 0;
  std::thread thread_;
};

EventRecorder::EventRecorder(EventRecorderOptions options, Clock& clock)
    : impl_(std::make_unique<Impl>(std::move(options), clock)) {}
EventRecorder::~EventRecorder() { Stop(); }
Status EventRecorder::Start() { return impl_->Start(); }
bool EventRecorder::Record(EventType type, std::string_view reason, std::string_view action,
                           std::string_view note) {
  return impl_->Record(type, reason, action, note);
}
void EventRecorder::Stop() { impl_->Stop(); }
EventRecorderStats EventRecorder::stats() const { return impl_->stats(); }
bool EventRecorder::WaitIdle(std::chrono::milliseconds timeout) const {
  return impl_->WaitIdle(timeout);
}

}  // namespace hcudp
