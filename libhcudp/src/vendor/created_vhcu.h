// Which vHCU a dmiCreateVDevices call made. The driver returns no id, so the
// caller reads /etc/vdev before and after (under the host-wide vHCU lock) and
// accepts only a new conf of the requested card (by PciBusId) and exactly
// the requested size; anything else is an error, never a guess.
#ifndef HCUDP_SRC_VENDOR_CREATED_VHCU_H_
#define HCUDP_SRC_VENDOR_CREATED_VHCU_H_

#include <cstdint>
#include <map>
#include <string>

#include "hcudp/status.h"
#include "hcudp/vdev_conf.h"
#include "hcudp_internal/host_fs.h"

namespace hcudp::vendor {

// Every parsable <host-root>/etc/vdev/vdev<N>.conf, by N.
std::map<int, VdevConf> ReadVdevConfs(const internal::HostFs& fs);

// The N of the one conf in `after` and not in `before` on card `bdf` with
// `compute_units` CUs and `memory_mib` MiB. Internal when there is none;
// Aborted, listing them, when several could be it (another creator did not
// take the host-wide vHCU lock). When none is on that card but exactly one
// new conf of that size is on another, that one (the driver's wrong card).
StatusOr<int> FindCreatedVhcu(const std::map<int, VdevConf>& before,
                              const std::map<int, VdevConf>& after, const std::string& bdf,
                              int compute_units, uint64_t memory_mib, const internal::HostFs& fs);

}  // namespace hcudp::vendor

#endif  // HCUDP_SRC_VENDOR_CREATED_VHCU_H_
