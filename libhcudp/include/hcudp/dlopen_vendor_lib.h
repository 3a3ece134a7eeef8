// DlopenVendorLib: the VendorLib of a real HCU node. Loads librocm_smi64,
// libhydmi and (optionally) libhydmi_mig from <hyhal_path>/lib at run time, so
// the binaries have no link-time dependency on them and run --backend=sim on
// machines without them (reference/hcu-hardware.md §1).
#ifndef HCUDP_DLOPEN_VENDOR_LIB_H_
#define HCUDP_DLOPEN_VENDOR_LIB_H_

#include <memory>
#include <string>

#include "hcudp/export.h"
#include "hcudp/status.h"
#include "hcudp/vendor_lib.h"

namespace hcudp {

struct DlopenVendorLibOptions {
  // Vendor runtime: libraries under lib/, hy-smi under bin/. Default /opt/hyhal.
  std::string hyhal_path = "/opt/hyhal";
  // Prefix for node files (/sys/module/hycu/initstate, ...). Default "/".
  std::string host_root = "/";
};

// Loads and resolves every needed symbol; errors name the missing library or
// symbol. The returned library is not yet Init()-ed.
HCUDP_EXPORT StatusOr<std::unique_ptr<VendorLib>> NewDlopenVendorLib(
    const DlopenVendorLibOptions& options);

}  // namespace hcudp

#endif  // HCUDP_DLOPEN_VENDOR_LIB_H_
