// The DRA pool hcuctl previews, built from this node's inventory exactly as
// the daemon builds it (hcudp/dra/slices.h): `hcuctl dra slices` prints its
// slices, `hcuctl names --strategy=dra` its device names.
#ifndef HCUCTL_DRA_PLAN_H_
#define HCUCTL_DRA_PLAN_H_

#include <string>

#include "command.h"
#include "hcudp/dra/slices.h"

namespace hcuctl {

// The node (pool) name: `flag` if set, else the global options' node name,
// else $NODE_NAME (as the DaemonSet sets it), else the host name in lower
// case (kubelet's default node name).
std::string DraNodeName(const Context& ctx, const std::string& flag);

// Queries health, discovers the node and builds its pool. Errors are the
// backend's or BuildPoolPlan's (InvalidArgument naming a bad node name).
hcudp::StatusOr<hcudp::dra::PoolPlan> BuildDraPlan(Context& ctx, const std::string& node_name,
                                                   bool taints_supported);

}  // namespace hcuctl

#endif  // HCUCTL_DRA_PLAN_H_
