// Fuzzes the node-devices decoder and the registration builder's encoder:
// whatever decodes must re-encode, and re-decode to the same records.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "hami_fuzz_fail.h"
#include "hcudp/hami/node_devices.h"

namespace hami = hcudp::hami;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view value(reinterpret_cast<const char*>(data), size);
  auto devices = hami::DecodeNodeDevices(value);
  if (!devices.ok()) {
    if (devices.status().message().empty()) HamiFuzzFail(value, "hami_node_devices:1");
    return 0;
  }
  auto encoded = hami::EncodeNodeDevices(*devices);
  if (!encoded.ok()) HamiFuzzFail(value, "hami_node_devices:2");
  auto again = hami::DecodeNodeDevices(*encoded);
  if (!again.ok() || *again != *devices) HamiFuzzFail(value, "hami_node_devices:3");
  return 0;
}
