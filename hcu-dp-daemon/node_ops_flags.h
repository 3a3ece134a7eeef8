// The flags of the node agent operations (DESIGN.md §3, §10): --node-labels,
// --nfd-features-dir and --events.
#ifndef HCU_DP_DAEMON_NODE_OPS_FLAGS_H_
#define HCU_DP_DAEMON_NODE_OPS_FLAGS_H_

#include "hcudp/options.h"
#include "hcudp/status.h"
#include "hcudp_cli/flags.h"

namespace hcudp::daemon {

void AddNodeOpsFlags(FlagSet& set, Options& o);
// --node-labels=node needs --node-name; --events=true too.
Status ValidateNodeOpsOptions(const Options& o);

}  // namespace hcudp::daemon

#endif  // HCU_DP_DAEMON_NODE_OPS_FLAGS_H_
