// The pod device lists: hami.io/hcu-devices-to-allocate and
// hami.io/hcu-devices-allocated (§5.3), and the vendor's step over them.
// Part of the HAMi codec (hcudp/hami/*.h; the rules for all of it are in
// hcudp/hami/keys.h).
#ifndef HCUDP_HAMI_POD_DEVICES_H_
#define HCUDP_HAMI_POD_DEVICES_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "hcudp/export.h"
#include "hcudp/hami/keys.h"
#include "hcudp/status.h"

namespace hcudp::hami {

// One device of one container: "UUID,Type,Usedmem,Usedcores:".
struct ContainerDevice {
  std::string uuid;  // "HCU-<serial>", the node record's Id
  std::string type = std::string(kPodDeviceType);
  int32_t used_mem_mib = 0;        // >= 0
  int32_t used_cores_percent = 0;  // 0..100

  HCUDP_EXPORT bool operator==(const ContainerDevice& o) const;
};
using ContainerDevices = std::vector<ContainerDevice>;
// One entry per container position of spec.containers; an entry may be
// empty (a container without HCUs).
using PodDevices = std::vector<ContainerDevices>;

// "" for no devices.
HCUDP_EXPORT StatusOr<std::string> EncodeContainerDevices(const ContainerDevices& devices);
// Exactly 4 fields per record; every record ends in ':'; no ';' in a field.
HCUDP_EXPORT StatusOr<ContainerDevices> DecodeContainerDevices(std::string_view value);

// Each container's devices followed by ';' ("A:;" one container, ";A:;" two
// with only the second using HCUs, ";" one empty container, "" none).
HCUDP_EXPORT StatusOr<std::string> EncodePodDevices(const PodDevices& pod);
// Keeps container positions: result[i] is spec.containers[i]'s devices
// (unlike HAMi's decoder, which drops empty containers). The final ';' may
// be missing ("A:" is one container, ";A:" two), as HAMi's decoder allows.
HCUDP_EXPORT StatusOr<PodDevices> DecodePodDevices(std::string_view value);
// HAMi's view of a decoded pod: the empty containers dropped.
HCUDP_EXPORT PodDevices DropEmptyContainers(const PodDevices& pod);

// The vendor's Allocate step 3.3 on hami.io/hcu-devices-to-allocate: decode
// as HAMi does (dropping empty containers), make the first remaining
// container empty, re-encode. So ";A:;B:;" -> ";B:;", "A:;" -> ";".
// Returns `value`'s first non-empty container in `served` when non-null.
// FailedPrecondition when no container has devices left.
HCUDP_EXPORT StatusOr<std::string> VendorEraseFirstContainer(std::string_view value,
                                                             ContainerDevices* served);
// True when some container still has devices (the vendor's "contains HCU"
// test for "more containers pending", done on decoded records).
HCUDP_EXPORT bool HasPendingDevices(const PodDevices& pod);

}  // namespace hcudp::hami

#endif  // HCUDP_HAMI_POD_DEVICES_H_
