// vHCUs as the node records them: <host-root>/etc/vdev/vdev<N>.conf
// (hcu-hardware.md §3.3), cross-checked with the driver through the VendorLib.
#ifndef HCUDP_SRC_BACKEND_VHCU_SCAN_H_
#define HCUDP_SRC_BACKEND_VHCU_SCAN_H_

#include <set>
#include <string>
#include <vector>

#include "hcudp/device.h"
#include "hcudp/status.h"
#include "hcudp/vendor_lib.h"
#include "hcudp_internal/host_fs.h"

namespace hcudp {

// The N of every vdev<N>.conf in <host-root>/etc/vdev, whatever its type (a
// FIFO, directory or symbolic link there is unknown state, never absent); an
// error when the directory cannot be listed (NotFound when it is absent).
StatusOr<std::set<int>> ReadVdevConfIds(const internal::HostFs& fs);

// Reads and checks vdev<N>.conf and asks the driver about vHCU N. Errors name
// the file: not a regular file (FailedPrecondition: never read, so a FIFO
// cannot block), unreadable, invalid, vdev_id != N, or (NotFound) the driver
// has no such vHCU. The card index comes from the parent BDF when `cards` knows it.
StatusOr<Vhcu> ReadVhcu(const internal::HostFs& fs, int id, const std::vector<Card>& cards,
                        VendorLib& vendor);

struct VhcuScan {
  std::vector<Vhcu> vhcus;         // every readable vHCU, sorted by id
  std::vector<VhcuStateGap> gaps;  // what could not be read (fail closed)
};

// Every vHCU in <host-root>/etc/vdev. A conf that vanished meanwhile or that
// the driver does not know (stale) is no vHCU. A conf that cannot be read or
// parsed (empty, truncated, invalid) and a directory that cannot be listed
// (missing, not a directory, unreadable, host-root gone) are gaps, never
// "no vHCUs". Gaps are logged at VLOG(1) only: the caller decides.
VhcuScan ScanVhcus(const internal::HostFs& fs, const std::vector<Card>& cards, VendorLib& vendor);

}  // namespace hcudp

#endif  // HCUDP_SRC_BACKEND_VHCU_SCAN_H_
