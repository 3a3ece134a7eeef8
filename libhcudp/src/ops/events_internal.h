// Internals of the event recorder (hcudp/node_events.h): the Event JSON and
// client-go's token bucket, exposed for the unit tests.
#ifndef HCUDP_SRC_OPS_EVENTS_INTERNAL_H_
#define HCUDP_SRC_OPS_EVENTS_INTERNAL_H_

#include <cstdint>
#include <string>

#include "hcudp/clock.h"
#include "hcudp/node_events.h"

namespace hcudp::internal {

// "2026-12-01T20:10:00.123456Z" (a MicroTime, UTC).
std::string FormatMicroTime(Clock::WallTime time);

struct EventObject {
  std::string name;
  std::string namespace_name;
  std::string node_name;
  EventType type = EventType::kNormal;
  std::string reason;
  std::string action;
  std::string note;
  std::string reporting_controller;
  std::string reporting_instance;
  Clock::WallTime event_time;
  // 0: a singleton; >= 2: series with this count and last observation.
  int64_t series_count = 0;
  Clock::WallTime last_observed;
};

// The events.k8s.io/v1 Event as JSON (note cut to 1024 bytes, instance to
// 128, at a UTF-8 character boundary).
std::string EventJson(const EventObject& event);
// The strategic merge patch that sets series {count, lastObservedTime}.
std::string SeriesPatchJson(int64_t count, Clock::WallTime last_observed);
// Cuts `text` to at most `max_bytes`, never inside a UTF-8 sequence.
std::string CutUtf8(std::string text, size_t max_bytes);

// client-go's spam filter bucket: `burst` tokens, one back every `refill`.
class TokenBucket {
 public:
  TokenBucket(int burst, std::chrono::nanoseconds refill, Clock::TimePoint now)
      : burst_(burst), refill_(refill), tokens_(burst), last_(now) {}
  // Takes one token if there is one.
  bool Take(Clock::TimePoint now);

 private:
  double burst_;
  std::chrono::nanoseconds refill_;
  double tokens_;
  Clock::TimePoint last_;
};

}  // namespace hcudp::internal

#endif  // HCUDP_SRC_OPS_EVENTS_INTERNAL_H_
