#include "hcudp/vendor_lib.h"

namespace hcudp {

VendorLib::~VendorLib() = default;

Status VendorLib::OpenEvents(uint64_t) {
  return UnimplementedError("this vendor library has no event notification");
}

StatusOr<std::vector<VendorEvent>> VendorLib::WaitEvents(std::chrono::milliseconds) {
  return UnimplementedError("this vendor library has no event notification");
}

}  // namespace hcudp
