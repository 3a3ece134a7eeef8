// Fuzzes the reader of Hygon's DRA driver prepared-state file (migration,
// doc/dra.md): a rejection always says why; what parses holds only names
// that are safe as file names, CDI IDs and checkpoint entries; and removing
// claims from a parsable file leaves a parsable file without them.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "dra/hygon_state.h"
#include "hcudp/dra/checkpoint.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace hcudp::dra;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto claims = ParseHygonState(text);
  if (!claims.ok()) {
    if (claims.status().message().empty()) std::abort();
    return 0;
  }
  if (claims->size() > kMaxHygonClaims) std::abort();
  std::vector<std::string> uids;
  for (const HygonClaim& c : *claims) {
    if (!CheckClaimUid(c.uid).ok() || c.devices.size() > kMaxHygonDevicesPerClaim) std::abort();
    for (const HygonDevice& d : c.devices) {
      if (d.parent_device.empty() || d.request.empty() || d.pool.empty()) std::abort();
      if (d.mark.find('/') != std::string::npos || d.mark == "." || d.mark == "..") std::abort();
      if (CdiDeviceNameOf(d.cdi_id).empty()) std::abort();
      if (!d.whole_card && d.vhcu_id < 0) std::abort();
    }
    uids.push_back(c.uid);
  }
  if (text.empty() || uids.empty()) return 0;
  auto rest = RemoveHygonClaims(text, {uids.front()});
  if (!rest.ok()) std::abort();
  auto again = ParseHygonState(*rest);
  if (!again.ok() || again->size() + 1 != claims->size()) std::abort();
  return 0;
}
