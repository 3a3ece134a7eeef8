// Fuzzes the pod- and container-devices decoders, the vendor's erase step and
// the container-index derivation: decoded values round-trip, positions are
// kept, and nothing crashes.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "hami_fuzz_fail.h"
#include "hcudp/hami/container_index.h"
#include "hcudp/hami/pod_devices.h"

namespace hami = hcudp::hami;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view value(reinterpret_cast<const char*>(data), size);
  (void)hami::ContainerIndexesFromAllocated(value, static_cast<int>(size % 5));
  auto container = hami::DecodeContainerDevices(value);
  if (container.ok()) {
    auto encoded = hami::EncodeContainerDevices(*container);
    if (!encoded.ok()) HamiFuzzFail(value, "container devices do not re-encode");
    auto again = hami::DecodeContainerDevices(*encoded);
    if (!again.ok() || *again != *container) HamiFuzzFail(value, "container devices changed");
  }
  auto pod = hami::DecodePodDevices(value);
  if (!pod.ok()) return 0;
  auto encoded = hami::EncodePodDevices(*pod);
  if (!encoded.ok()) HamiFuzzFail(value, "hami_pod_devices:2");
  auto again = hami::DecodePodDevices(*encoded);
  if (!again.ok() || *again != *pod) HamiFuzzFail(value, "hami_pod_devices:3");
  hami::ContainerDevices served;
  auto erased = hami::VendorEraseFirstContainer(value, &served);
  if (erased.ok()) {
    auto after = hami::DecodePodDevices(*erased);
    if (!after.ok() || served.empty()) HamiFuzzFail(value, "hami_pod_devices:4");
  } else if (hami::HasPendingDevices(*pod)) {
    HamiFuzzFail(value, "hami_pod_devices:5");
  }
  return 0;
}
