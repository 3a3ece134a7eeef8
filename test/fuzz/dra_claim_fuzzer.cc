// Fuzzes the DRA input parsers: ResourceClaim JSON from the API, Kubernetes
// quantities, and the checkpoint files read back at start. A rejection
// always says why; what parses must also round-trip (checkpoint).
//
// An input "#nest:<N>\n<rest>" stands for <rest> inside N '[' (N at most
// 300,000): a small corpus file for an entry nested far beyond what a
// recursive parser's stack takes (issue 23: 200,000 levels crashed it).
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "hcudp/dra/checkpoint.h"
#include "hcudp/dra/claim.h"

namespace {

constexpr std::string_view kNest = "#nest:";
constexpr size_t kMaxNest = 300000;

// The input itself, or its nested expansion.
std::string Expand(std::string_view input) {
  if (input.substr(0, kNest.size()) != kNest) return std::string(input);
  size_t levels = 0;
  size_t i = kNest.size();
  for (; i < input.size() && input[i] >= '0' && input[i] <= '9'; ++i) {
    levels = std::min(kMaxNest, levels * 10 + static_cast<size_t>(input[i] - '0'));
  }
  if (i < input.size() && input[i] == '\n') ++i;
  return std::string(levels, '[') + std::string(input.substr(i));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string expanded = Expand(std::string_view(reinterpret_cast<const char*>(data), size));
  std::string_view text(expanded);
  auto claim = hcudp::dra::ParseResourceClaim(text, "dra.hygon.com");
  if (!claim.ok() && claim.status().message().empty()) std::abort();
  if (claim.ok()) {
    for (const auto& r : claim->results) {
      if (r.request.empty() || r.device.empty() || r.pool.empty()) std::abort();
      if (r.consumed.cores && *r.consumed.cores < 0) std::abort();
    }
  }
  auto q = hcudp::dra::ParseQuantity(text.substr(0, 64));
  if (q.ok() && *q < 0) std::abort();
  if (!q.ok() && q.status().message().empty()) std::abort();
  auto entry = hcudp::dra::DecodePreparedClaim(text);
  if (!entry.ok() && entry.status().message().empty()) std::abort();
  if (entry.ok()) {
    auto again = hcudp::dra::DecodePreparedClaim(hcudp::dra::EncodePreparedClaim(*entry));
    if (!again.ok() ||
        hcudp::dra::EncodePreparedClaim(*again) != hcudp::dra::EncodePreparedClaim(*entry)) {
      std::abort();
    }
  }
  return 0;
}
