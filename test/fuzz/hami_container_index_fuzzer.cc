// Fuzzes the hygon.com/container-index decoder: accepted values round-trip.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "hami_fuzz_fail.h"
#include "hcudp/hami/container_index.h"

namespace hami = hcudp::hami;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view value(reinterpret_cast<const char*>(data), size);
  auto indexes = hami::DecodeContainerIndex(value);
  if (!indexes.ok()) return 0;
  auto again = hami::DecodeContainerIndex(hami::EncodeContainerIndex(*indexes));
  if (!again.ok() || *again != *indexes) HamiFuzzFail(value, "hami_container_index:1");
  return 0;
}
