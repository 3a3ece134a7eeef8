// DRI nodes of a card: /sys/module/<drv>/drivers/pci:<drv>/<bdf>/drm/{card*,renderD*}
// (hcu-hardware.md §2.2), as host paths whose /dev node exists.
#ifndef HCUDP_SRC_BACKEND_DRI_H_
#define HCUDP_SRC_BACKEND_DRI_H_

#include <string>
#include <vector>

#include "hcudp_internal/host_fs.h"

namespace hcudp {

struct DriLookup {
  std::vector<std::string> nodes;  // "/dev/dri/card1", "/dev/dri/renderD128"
  std::string error;               // set when `nodes` is empty: what was searched
};

// Tries every module under <host-root>/sys/module whose driver directory is
// pci:<module> (the vendor requires module name == driver name, which skips
// e.g. hycu's pci:amdgpu alias) and takes the first one holding <bdf>/drm.
DriLookup FindDriNodes(const internal::HostFs& fs, const std::string& bdf);

}  // namespace hcudp

#endif  // HCUDP_SRC_BACKEND_DRI_H_
