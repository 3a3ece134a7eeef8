// hami.io/node-handshake-hcu (§5.2).
#include "hcudp/hami/handshake.h"

#include "hami/text_util.h"
#include "hami/time_text.h"
#include "hcudp/hami/rfc3339.h"

namespace hcudp::hami {

using internal::Quote;

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
      std::string t = h.time_text;
      // time.DateTime, or the "2006.01.02 15:04:05" of HAMi's util.go copy
      // and Volcano's devices.
      if (t.size() == 19 && t[4] == '.' && t[7] == '.') t[4] = t[7] = '-';
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
