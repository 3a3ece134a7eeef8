// hygon.com/container-index (§5.4): which container positions use HCUs.
// Part of the HAMi codec (hcudp/hami/*.h; the rules for all of it are in
// hcudp/hami/keys.h).
#ifndef HCUDP_HAMI_CONTAINER_INDEX_H_
#define HCUDP_HAMI_CONTAINER_INDEX_H_

#include <string>
#include <string_view>
#include <vector>

#include "hcudp/export.h"
#include "hcudp/status.h"

namespace hcudp::hami {

// Indexes each followed by ',': "0," or "0,2,". "" is the empty list.
HCUDP_EXPORT std::string EncodeContainerIndex(const std::vector<int>& indexes);
HCUDP_EXPORT StatusOr<std::vector<int>> DecodeContainerIndex(std::string_view value);
// The vendor's Allocate step 2: the container positions that use HCUs, from
// hami.io/hcu-devices-allocated. Split on ';'; when there are fewer parts
// than `container_count` the parts are right-aligned (the vendor prepends
// ';'); the positions of the non-empty parts are returned. Records are
// validated as DecodeContainerDevices does.
HCUDP_EXPORT StatusOr<std::vector<int>> ContainerIndexesFromAllocated(std::string_view value,
                                                                      int container_count);

}  // namespace hcudp::hami

#endif  // HCUDP_HAMI_CONTAINER_INDEX_H_
