// The Event object and the token bucket of the recorder (events_internal.h).
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <cstdio>

#include "hcudp/hami/rfc3339.h"
#include "ops/events_internal.h"

namespace hcudp {

StatusOr<EventsMode> ParseEventsMode(std::string_view text) {
  if (text == "auto") return EventsMode::kAuto;
  if (text == "true") return EventsMode::kTrue;
  if (text == "false") return EventsMode::kFalse;
  return InvalidArgumentError("events mode \"" + std::string(text) +
                              "\": accepted values are auto, true, false");
}

std::string_view EventsModeName(EventsMode mode) {
  switch (mode) {
    case EventsMode::kAuto:
      return "auto";
    case EventsMode::kTrue:
      return "true";
    case EventsMode::kFalse:
      return "false";
  }
  return "false";
}

namespace internal {

std::string FormatMicroTime(Clock::WallTime time) {
  auto secs = std::chrono::floor<std::chrono::seconds>(time);
  auto micros = std::chrono::duration_cast<std::chrono::microseconds>(time - secs).count();
  std::string text = hami::FormatRfc3339Utc(secs);  // "...:05Z"
  char frac[32];
  std::snprintf(frac, sizeof frac, ".%06lldZ", static_cast<long long>(micros));  // NOLINT
  text.pop_back();
  return text + frac;
}

std::string CutUtf8(std::string text, size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  size_t cut = max_bytes;
  // Back off continuation bytes (10xxxxxx) so no sequence is split.
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  text.resize(cut);
  return text;
}

namespace {

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

void Str(Writer& w, const char* key, const std::string& value) {
  w.Key(key);
  w.String(value.c_str(), static_cast<rapidjson::SizeType>(value.size()));
}

void WriteSeries(Writer& w, int64_t count, Clock::WallTime last_observed) {
  w.Key("series");
  w.StartObject();
  w.Key("count");
  w.Int64(count);
  Str(w, "lastObservedTime", FormatMicroTime(last_observed));
  w.EndObject();
}

}  // namespace

std::string EventJson(const EventObject& e) {
  rapidjson::StringBuffer buf;
  Writer w(buf);
  w.StartObject();
  Str(w, "apiVersion", "events.k8s.io/v1");
  Str(w, "kind", "Event");
  w.Key("metadata");
  w.StartObject();
  Str(w, "name", e.name);
  Str(w, "namespace", e.namespace_name);
  w.EndObject();
  Str(w, "eventTime", FormatMicroTime(e.event_time));
  Str(w, "reportingController", e.reporting_controller);
  Str(w, "reportingInstance", CutUtf8(e.reporting_instance, 128));
  Str(w, "action", CutUtf8(e.action, 128));
  Str(w, "reason", CutUtf8(e.reason, 128));
  w.Key("regarding");
  w.StartObject();
  Str(w, "kind", "Node");
  Str(w, "apiVersion", "v1");
  Str(w, "name", e.node_name);
  Str(w, "uid", e.node_name);
  w.EndObject();
  Str(w, "note", CutUtf8(e.note, 1024));
  Str(w, "type", e.type == EventType::kWarning ? "Warning" : "Normal");
  if (e.series_count >= 2) WriteSeries(w, e.series_count, e.last_observed);
  w.EndObject();
  return std::string(buf.GetString(), buf.GetSize());
}

std::string SeriesPatchJson(int64_t count, Clock::WallTime last_observed) {
  rapidjson::StringBuffer buf;
  Writer w(buf);
  w.StartObject();
  WriteSeries(w, count, last_observed);
  w.EndObject();
  return std::string(buf.GetString(), buf.GetSize());
}

bool TokenBucket::Take(Clock::TimePoint now) {
  if (now > last_ && refill_.count() > 0) {
    tokens_ = std::min(
        burst_,
        tokens_ + static_cast<double>(
                      std::chrono::duration_cast<std::chrono::nanoseconds>(now - last_).count()) /
                      static_cast<double>(refill_.count()));
  }
  last_ = std::max(last_, now);
  if (tokens_ < 1.0) return false;
  tokens_ -= 1.0;
  return true;
}

}  // namespace internal
}  // namespace hcudp
