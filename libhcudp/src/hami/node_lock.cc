// hami.io/mutex.lock (§5.5) and hami.io/node-handshake-hcu (§5.2).
#include "hami/text_util.h"
#include "hami/time_text.h"
#include "hcudp/hami_codec.h"

namespace hcudp::hami {
namespace {

using internal::ParseInt;
using internal::Quote;
using internal::Split;

}  // namespace

StatusOr<std::chrono::system_clock::time_point> ParseRfc3339(std::string_view text) {
  auto base = internal::ParseCivil(text, 'T');
  if (!base) {
    return InvalidArgumentError("time " + Quote(text) +
                                " is not RFC3339 (2006-01-02T15:04:05Z07:00)");
  }
  size_t pos = 19;
  if (pos < text.size() && text[pos] == '.') {
    size_t digits = 0;
    while (pos + 1 + digits < text.size() && text[pos + 1 + digits] >= '0' &&
           text[pos + 1 + digits] <= '9') {
      ++digits;
    }
    if (digits == 0 || digits > 9) {
      return InvalidArgumentError("time " + Quote(text) + " has a malformed fraction");
    }
    pos += 1 + digits;
  }
  std::string_view zone = text.substr(pos);
  if (zone == "Z") return *base;
  if (zone.size() == 6 && (zone[0] == '+' || zone[0] == '-') && zone[3] == ':') {
    auto hh = ParseInt(zone.substr(1, 2), 0, 23);
    auto mm = ParseInt(zone.substr(4, 2), 0, 59);
    if (hh && mm && zone[1] != '-' && zone[4] != '-') {
      auto offset = std::chrono::seconds(*hh * 3600 + *mm * 60);
      return zone[0] == '+' ? *base - offset : *base + offset;
    }
  }
  return InvalidArgumentError("time " + Quote(text) + " has no valid zone (Z or +hh:mm)");
}

std::string FormatRfc3339Utc(std::chrono::system_clock::time_point time) {
  return internal::FormatCivil(time, 'T', /*local=*/false) + "Z";
}

StatusOr<std::string> FormatNodeLock(std::chrono::system_clock::time_point time,
                                     std::string_view pod_namespace, std::string_view pod_name) {
  for (std::string_view part : {pod_namespace, pod_name}) {
    if (part.empty() || part.find(',') != std::string_view::npos) {
      return InvalidArgumentError(
          "node lock: namespace and pod name must be non-empty and "
          "free of ',', got " +
          Quote(part));
    }
  }
  return FormatRfc3339Utc(time) + "," + std::string(pod_namespace) + "," + std::string(pod_name);
}

StatusOr<NodeLock> ParseNodeLock(std::string_view value) {
  std::vector<std::string_view> f = Split(value, ',');
  if (f.size() != 3) {
    return InvalidArgumentError("node lock " + Quote(value) + " has " + std::to_string(f.size()) +
                                " comma fields, want 3 (<RFC3339>,<namespace>,<pod>)");
  }
  StatusOr<std::chrono::system_clock::time_point> time = ParseRfc3339(f[0]);
  if (!time.ok()) return time.status().WithContext("node lock");
  if (f[1].empty()) return InvalidArgumentError("node lock " + Quote(value) + ": empty namespace");
  if (f[2].empty()) return InvalidArgumentError("node lock " + Quote(value) + ": empty pod name");
  NodeLock lock;
  lock.time = *time;
  lock.time_text = std::string(f[0]);
  lock.pod_namespace = std::string(f[1]);
  lock.pod_name = std::string(f[2]);
  return lock;
}

bool NodeLockHeldBy(const NodeLock& lock, std::string_view pod_namespace,
                    std::string_view pod_name) {
  return lock.pod_namespace == pod_namespace && lock.pod_name == pod_name;
}

std::string_view HandshakeStateName(HandshakeState state) {
  switch (state) {
    case HandshakeState::kReported:
      return "Reported";
    case HandshakeState::kRequesting:
      return "Requesting";
    case HandshakeState::kDeleted:
      return "Deleted";
  }
  return "Reported";
}

std::string FormatHandshakeReported(std::chrono::system_clock::time_point time) {
  return "Reported " + FormatRfc3339Utc(time);
}

StatusOr<Handshake> ParseHandshake(std::string_view value) {
  Handshake h;
  if (value.empty()) return InvalidArgumentError("handshake is empty");
  for (HandshakeState state : {HandshakeState::kRequesting, HandshakeState::kDeleted}) {
    std::string_view name = HandshakeStateName(state);
    size_t pos = value.find(name);
    if (pos == std::string_view::npos) continue;
    h.state = state;
    size_t underscore = value.find('_', pos + name.size());
    if (underscore != std::string_view::npos) {
      h.time_text = std::string(value.substr(underscore + 1));
      std::string_view t = h.time_text;
      if (t.size() == 19) h.time = internal::ParseCivil(t, ' ');
    }
    return h;
  }
  constexpr std::string_view kReported = "Reported ";
  if (value.substr(0, kReported.size()) != kReported) {
    return InvalidArgumentError("handshake " + Quote(value) +
                                " is none of Reported <time>, Requesting_<time>, "
                                "Deleted_<time>");
  }
  h.state = HandshakeState::kReported;
  h.time_text = std::string(value.substr(kReported.size()));
  StatusOr<std::chrono::system_clock::time_point> t = ParseRfc3339(h.time_text);
  if (t.ok()) h.time = *t;
  return h;
}

}  // namespace hcudp::hami
