// Kubernetes Events about our Node (DESIGN.md §10, doc/events.md):
// events.k8s.io/v1 Events, recorded without blocking and sent by one
// background thread, with client-go's rate limiting and series aggregation.
//
// Record() only queues (a bounded queue; full: the event is dropped and
// counted). The thread turns occurrences into API calls:
//   - Isomorphic occurrences (same type, reason, action, controller,
//     instance, regarding — client-go's key — and, here, the same note, so
//     that two cards never fold into one event) form a series: the first is
//     created as a singleton (POST), the second turns it into a series
//     (PATCH series.count=2), later ones only count in memory. An active
//     series is PATCHed with its count every `heartbeat` (30 min), and once
//     more when nothing new came for `series_finish` (6 min); the next
//     occurrence after that starts a new event.
//   - Every POST and PATCH that an occurrence causes takes a token from a
//     bucket per event type (client-go's spam filter: burst 25, one token
//     back per 300 s); without a token the occurrence is dropped and counted.
//     The recorder's own writes take none: heartbeats, the final PATCH of a
//     series, and re-creating an Event the server dropped (TTL).
//   - A call that cannot reach the server (connection failure, 429, 5xx,
//     timeout) is retried up to max_tries times in all, retry_delay apart,
//     and no retry starts more than give_up_after after the first attempt;
//     then the occurrence is dropped and counted. This is the only retry
//     layer: each call asks the client for no retries of its own
//     (CallOptions::max_retries = 0), so one occurrence costs at most
//     give_up_after plus one request timeout of the client. While it
//     waits, new occurrences queue behind it.
// Stop() cancels a call in flight (~50 ms) and joins: a silent API server
// never holds up shutdown, and what was still queued is dropped.
//
// The Event: namespace `default`, name "<node>.<hex nanoseconds>" (the node
// part cut to keep it within 253 characters),
// regarding {kind Node, apiVersion v1, name and uid = node name} (the
// kubelet's convention, which `kubectl describe node` finds), eventTime now
// (microseconds), note cut to 1024 bytes.
#ifndef HCUDP_NODE_EVENTS_H_
#define HCUDP_NODE_EVENTS_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "hcudp/clock.h"
#include "hcudp/export.h"
#include "hcudp/kube_client.h"
#include "hcudp/options.h"
#include "hcudp/status.h"

namespace hcudp {

// "auto" | "true" | "false"; InvalidArgument naming the accepted values.
HCUDP_EXPORT StatusOr<EventsMode> ParseEventsMode(std::string_view text);
HCUDP_EXPORT std::string_view EventsModeName(EventsMode mode);

enum class EventType { kNormal, kWarning };

// Reasons and actions the plugin reports (DESIGN.md §10).
inline constexpr char kReasonHcuUnhealthy[] = "HCUUnhealthy";
inline constexpr char kReasonHcuHealthy[] = "HCUHealthy";
inline constexpr char kReasonVhcuRecovered[] = "VhcuRecovered";
inline constexpr char kActionHealthCheck[] = "HealthCheck";
inline constexpr char kActionRecover[] = "Recover";

struct EventRecorderOptions {
  // Our Node (required) and the API client (required; not owned, outlives
  // the recorder).
  std::string node_name;
  KubeClient* client = nullptr;
  std::string namespace_name = "default";
  std::string reporting_controller = "hygon.com/hcu-device-plugin";
  // Default (empty): "<reporting_controller>-<node_name>", cut to 128.
  std::string reporting_instance;
  size_t queue_size = 1000;
  int burst = 25;
  std::chrono::seconds refill{300};
  std::chrono::seconds heartbeat{1800};
  std::chrono::seconds series_finish{360};
  int max_tries = 12;  // attempts in all, first one included
  std::chrono::seconds retry_delay{10};
  std::chrono::seconds give_up_after{120};
  // --events=auto: an API answer refusing the credentials (401, 403) turns
  // the recorder off for good, with one warning; later Record()s are
  // dropped. Otherwise each refused event is logged and dropped alone.
  bool off_when_refused = false;
  size_t max_series = 4096;  // remembered keys (oldest forgotten first)
};

// What the recorder did so far.
struct EventRecorderStats {
  uint64_t recorded = 0;      // accepted by Record()
  uint64_t dropped_full = 0;  // the queue was full (or the recorder stopped, or is off)
  uint64_t rate_limited = 0;  // no token
  uint64_t created = 0;       // POSTs that succeeded
  uint64_t patched = 0;       // PATCHes that succeeded
  uint64_t failed = 0;        // calls given up after max_tries
};

class HCUDP_EXPORT EventRecorder {
 public:
  // `clock` times the token bucket, series and retries and stamps the
  // events (its wall time). Not owned.
  explicit EventRecorder(EventRecorderOptions options, Clock& clock = Clock::Real());
  ~EventRecorder();  // Stop()s
  EventRecorder(const EventRecorder&) = delete;
  EventRecorder& operator=(const EventRecorder&) = delete;

  // InvalidArgument without a node name or client; then starts the thread.
  Status Start();
  // Queues one occurrence; never blocks on I/O. False when it was dropped
  // (queue full, or not running).
  bool Record(EventType type, std::string_view reason, std::string_view action,
              std::string_view note);
  // Cancels a call in flight and joins the thread. Idempotent.
  void Stop();

  EventRecorderStats stats() const;
  // Waits (real time, up to `timeout`) until the queue is empty and no call
  // is in flight; true when it is. For tests and benchmarks.
  bool WaitIdle(std::chrono::milliseconds timeout) const;

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace hcudp

#endif  // HCUDP_NODE_EVENTS_H_
