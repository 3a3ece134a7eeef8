// vHCUs as the node records them: host_root/etc/vdev/vdev<N>.conf
// (hcu-hardware.md §3.3), cross-checked with the driver through the VendorLib.
#ifndef HCUDP_SRC_BACKEND_VHCU_SCAN_H_
#define HCUDP_SRC_BACKEND_VHCU_SCAN_H_

#include <set>
#include <string>
#include <vector>

#include "hcudp/device.h"
#include "hcudp/status.h"
#include "hcudp/vendor_lib.h"

namespace hcudp {

inline constexpr char kVdevDir[] = "/etc/vdev";

// The N of every vdev<N>.conf regular file in host_root/etc/vdev (an absent
// directory is empty).
std::set<int> ListVdevConfIds(const std::string& host_root);

// Reads and checks vdev<N>.conf and asks the driver about vHCU N. Errors name
// the file: unreadable, invalid, vdev_id != N, or (NotFound) the driver has
// no such vHCU. The card index comes from the parent BDF when `cards` knows it.
StatusOr<Vhcu> ReadVhcu(const std::string& host_root, int id, const std::vector<Card>& cards,
                        VendorLib& vendor);

// Every valid vHCU, sorted by id; invalid confs are logged and skipped.
std::vector<Vhcu> ScanVhcus(const std::string& host_root, const std::vector<Card>& cards,
                            VendorLib& vendor);

}  // namespace hcudp

#endif  // HCUDP_SRC_BACKEND_VHCU_SCAN_H_
