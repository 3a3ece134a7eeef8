// A card's place in the PCI hierarchy, from sysfs (hcu-hardware.md §2.2):
// /sys/bus/pci/devices/<bdf> is a link into /sys/devices, whose first
// component below /sys/devices is the PCIe root complex the card hangs from
// ("pci0000:00"), the value Kubernetes' resource.kubernetes.io/pcieRoot
// takes (the rule of k8s.io/dynamic-resource-allocation/deviceattribute).
#ifndef HCUDP_SRC_BACKEND_PCI_PLACE_H_
#define HCUDP_SRC_BACKEND_PCI_PLACE_H_

#include <string>

#include "hcudp_internal/host_fs.h"

namespace hcudp {

struct PciPlace {
  std::string sysfs_dir;  // host path "/sys/devices/pci0000:00/.../0000:09:00.0"
  std::string pcie_root;  // "pci0000:00"
  std::string error;      // set when both are empty: what was read and why it failed
};

// Reads the link <host-root>/sys/bus/pci/devices/<bdf> and resolves it (as a
// host path, never through the process's own /sys). The target must lie
// under /sys/devices/pci<domain>:<bus>/ and end in <bdf>; anything else is
// an error, not a guess.
PciPlace FindPciPlace(const internal::HostFs& fs, const std::string& bdf);

}  // namespace hcudp

#endif  // HCUDP_SRC_BACKEND_PCI_PLACE_H_
