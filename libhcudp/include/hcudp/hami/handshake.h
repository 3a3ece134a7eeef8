// The node handshake hami.io/node-handshake-hcu (§5.2).
// Part of the HAMi codec (hcudp/hami/*.h; the rules for all of it are in
// hcudp/hami/keys.h).
#ifndef HCUDP_HAMI_HANDSHAKE_H_
#define HCUDP_HAMI_HANDSHAKE_H_

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "hcudp/export.h"
#include "hcudp/status.h"

namespace hcudp::hami {

// What hami.io/node-handshake-hcu says. The scheduler only looks for the
// substrings "Requesting" and "Deleted"; anything else counts as reported.
enum class HandshakeState { kReported, kRequesting, kDeleted };

struct Handshake {
  HandshakeState state = HandshakeState::kReported;
  std::string time_text;  // text after "Reported " or "<State>_"
  // Requesting/Deleted: the scheduler's "2006-01-02 15:04:05" (or
  // "2006.01.02 15:04:05", HAMi's util.go and Volcano) read as UTC
  // (the scheduler writes its local time without a zone). Reported: our
  // RFC3339 time. Empty when the text does not parse.
  std::optional<std::chrono::system_clock::time_point> time;
};

// "Reported 2026-11-29T20:42:26Z": a clean UTC time (the vendor wrote Go's
// time.String() with a monotonic suffix; the scheduler does not parse it).
HCUDP_EXPORT std::string FormatHandshakeReported(std::chrono::system_clock::time_point time);
// Classifies as the scheduler does ("Requesting" first, then "Deleted"),
// else requires the "Reported " prefix. Empty or other text: InvalidArgument.
HCUDP_EXPORT StatusOr<Handshake> ParseHandshake(std::string_view value);
HCUDP_EXPORT std::string_view HandshakeStateName(HandshakeState state);

}  // namespace hcudp::hami

#endif  // HCUDP_HAMI_HANDSHAKE_H_
