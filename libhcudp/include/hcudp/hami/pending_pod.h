// Which pod the scheduler is binding to this node: hami.io/bind-time,
// hami.io/bind-phase and hami.io/vgpu-node (§5.4 step 1).
// Part of the HAMi codec (hcudp/hami/*.h; the rules for all of it are in
// hcudp/hami/keys.h).
#ifndef HCUDP_HAMI_PENDING_POD_H_
#define HCUDP_HAMI_PENDING_POD_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "hcudp/export.h"
#include "hcudp/status.h"

namespace hcudp::hami {

// hami.io/bind-time: unix seconds, as the scheduler writes it.
HCUDP_EXPORT StatusOr<int64_t> ParseBindTime(std::string_view value);
// The vendor's test of a pod's annotations for "being allocated on
// `node_name`": hami.io/bind-time present, hami.io/bind-phase "allocating",
// hami.io/vgpu-node == node_name. Phase Pending is the caller's check; among
// several matches, pick the oldest ParseBindTime (defect §8.15).
HCUDP_EXPORT bool IsAllocatingOn(const std::map<std::string, std::string>& annotations,
                                 std::string_view node_name);

}  // namespace hcudp::hami

#endif  // HCUDP_HAMI_PENDING_POD_H_
