// What `hcuctl dra prepared` reads, for other commands: the DRA claims whose
// checkpoint entries hold a device.
#ifndef HCUCTL_CMD_DRA_PREPARED_H_
#define HCUCTL_CMD_DRA_PREPARED_H_

#include <string>

namespace hcuctl {

// The claims DRA mode prepared with vHCU `vhcu_id` (a pre-split one has no
// mark file: only the checkpoint says it is in use), as "claim <ns>/<name>
// (uid <uid>)" joined by "; "; "" for none. Unreadable entries say nothing.
std::string DraClaimsHoldingVhcu(const std::string& host_root, int vhcu_id);

}  // namespace hcuctl

#endif  // HCUCTL_CMD_DRA_PREPARED_H_
