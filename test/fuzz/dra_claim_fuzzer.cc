// Fuzzes the DRA input parsers: ResourceClaim JSON from the API, Kubernetes
// quantities, and the checkpoint files read back at start. A rejection
// always says why; what parses must also round-trip (checkpoint).
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "hcudp/dra/checkpoint.h"
#include "hcudp/dra/claim.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
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
