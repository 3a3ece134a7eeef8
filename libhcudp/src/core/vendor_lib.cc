#include "hcudp/vendor_lib.h"

namespace hcudp {

VendorLib::~VendorLib() = default;

}  // namespace hcudp
