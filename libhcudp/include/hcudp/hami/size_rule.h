// The vHCU size rule (§5.4): what one container's device request turns into
// on this node (whole cards, or one vHCU of a computed size).
// Part of the HAMi codec (hcudp/hami/*.h; the rules for all of it are in
// hcudp/hami/keys.h).
#ifndef HCUDP_HAMI_SIZE_RULE_H_
#define HCUDP_HAMI_SIZE_RULE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "hcudp/device.h"
#include "hcudp/export.h"
#include "hcudp/hami/pod_devices.h"
#include "hcudp/status.h"

namespace hcudp::hami {

// ceil(cores_percent * card_compute_units / 100), at least 1.
HCUDP_EXPORT int VhcuComputeUnits(int cores_percent, int card_compute_units);

// What one device of a container request turns into on this node.
struct DevicePlan {
  int card = 0;  // card index (dvInd)
  std::string card_bdf;
  bool create_vhcu = false;      // false: the container gets the whole card
  int vhcu_compute_units = 0;    // create_vhcu only
  uint64_t vhcu_memory_mib = 0;  // create_vhcu only
};

// The vendor's rule, with defect §8.20 fixed: a vHCU only when exactly one
// device is requested with Usedmem below the card's memory; otherwise every
// card is given whole — and the caller writes a whole-card mark file
// (vhcu_id -1) for every card given whole, so each one is accounted.
// Cards are found by serial (UUID "HCU-<serial>"). InvalidArgument for a
// bad UUID or an empty request; NotFound for an unknown serial;
// FailedPrecondition when two cards share the serial.
HCUDP_EXPORT StatusOr<std::vector<DevicePlan>> PlanContainerDevices(const ContainerDevices& request,
                                                                    const NodeInventory& inventory);

}  // namespace hcudp::hami

#endif  // HCUDP_HAMI_SIZE_RULE_H_
