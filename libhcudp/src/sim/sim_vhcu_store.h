// The simulated driver's vHCU state: <host-root>/etc/vdev/vdev<N>.conf and
// nothing else, so hcuctl and the daemon (separate processes sharing one
// host-root) and restarts all see the same vHCUs, as on a real node.
//
// Thread-safety: Create and Destroy are serialised by a mutex within the
// process and an flock on <host-root>/.hcudp-sim/lock across processes.
#ifndef HCUDP_SRC_SIM_SIM_VHCU_STORE_H_
#define HCUDP_SRC_SIM_SIM_VHCU_STORE_H_

#include <map>
#include <string>

#include "hcudp/sim_node.h"
#include "hcudp/vdev_conf.h"
#include "hcudp_internal/host_fs.h"
#include "hcudp_internal/thread_annotations.h"

namespace hcudp::sim {

class VhcuStore {
 public:
  explicit VhcuStore(internal::HostFs fs) : fs_(std::move(fs)) {}

  // The conf of vHCU `id`; NotFound when there is no vdev<id>.conf.
  StatusOr<VdevConf> Read(int id) const;
  // Every parsable conf, by id. Unparsable files are logged and skipped.
  std::map<int, VdevConf> ReadAll() const;
  // What is left of `card` after its vHCUs (matched by PciBusId).
  DmiRemaining Remaining(const SimCard& card) const;

  // The rules of hcu-hardware.md §3.3-3.5: at most node.max_vhcus_per_card
  // per card, CU and memory within what is free, lowest free id node-wide,
  // lowest free pipe id on the card, lowest free CUs as the mask. Returns
  // the new id.
  StatusOr<int> Create(const SimNode& node, int card, int compute_units, uint64_t memory_mib);
  // Removes vdev<id>.conf; NotFound when absent.
  Status Destroy(int id);

 private:
  // Ids of every vdev<N>.conf file, parsable or not (all are taken).
  std::vector<int> TakenIds() const;

  const internal::HostFs fs_;
  Mutex mu_;  // serialises Create/Destroy within this process; taken before HostRootLock
};

}  // namespace hcudp::sim

#endif  // HCUDP_SRC_SIM_SIM_VHCU_STORE_H_
