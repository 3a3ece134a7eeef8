// Placeholder until the vendor-library backend lands: the host backend
// reports clearly that it is not available in this build.
#include "hcudp/dlopen_vendor_lib.h"

namespace hcudp {

StatusOr<std::unique_ptr<VendorLib>> NewDlopenVendorLib(const DlopenVendorLibOptions& options) {
  return UnimplementedError("--backend=host: the vendor-library backend (" + options.hyhal_path +
                            "/lib) is not built into this version; use --backend=sim");
}

}  // namespace hcudp
