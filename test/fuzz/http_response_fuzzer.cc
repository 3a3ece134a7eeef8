// Fuzzes the kube client's HTTP/1.1 response parser (the API server's bytes,
// or whatever answers in its place) and the HTTP-date parser. The input is
// fed twice: whole, and split where its first byte says, since a server's
// bytes arrive in any pieces and the outcome must not depend on them. A
// rejection always says why; a body never outgrows what was fed.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "kube/http_response_parser.h"

namespace {

struct Outcome {
  bool ok = true;
  bool complete = false;
  int status = 0;
  std::string body;
};

Outcome Run(std::string_view wire, size_t piece) {
  hcudp::kube::HttpResponseParser parser;
  Outcome out;
  const auto sink = [&](std::string_view data) {
    out.body.append(data);
    return true;
  };
  for (size_t at = 0; at < wire.size() && out.ok; at += piece) {
    const hcudp::Status s = parser.Feed(wire.substr(at, piece), sink);
    if (!s.ok() && s.message().empty()) std::abort();
    out.ok = s.ok();
  }
  if (out.ok) {
    const hcudp::Status s = parser.FinishAtEof();
    if (!s.ok() && s.message().empty()) std::abort();
    out.ok = s.ok();
  }
  out.complete = parser.complete();
  out.status = parser.status();
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view wire(reinterpret_cast<const char*>(data) + 1, size - 1);
  const Outcome whole = Run(wire, wire.size() + 1);
  const Outcome split = Run(wire, 1 + data[0] % 16);
  if (whole.ok != split.ok || whole.complete != split.complete || whole.status != split.status ||
      whole.body != split.body) {
    std::abort();
  }
  if (whole.body.size() > wire.size()) std::abort();
  (void)hcudp::kube::ParseHttpDate(wire.substr(0, 80));
  return 0;
}
