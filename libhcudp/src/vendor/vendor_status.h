// Vendor status codes → hcudp::Status. Messages come from the library's own
// rsmi_status_string / dmiGetStatusString when it answers, else from our
// table of the documented names (reference/hcu-hardware.md §1.3-1.5).
#ifndef HCUDP_VENDOR_VENDOR_STATUS_H_
#define HCUDP_VENDOR_VENDOR_STATUS_H_

#include <string>
#include <string_view>

#include "hcudp/status.h"
#include "vendor/vendor_abi.h"

namespace hcudp::vendor {

// "RSMI_STATUS_NOT_SUPPORTED", "DMI_STATUS_DEVICE_BUSY", "NVML_ERROR_IN_USE";
// "RSMI_STATUS_<n>" for a code we do not know.
std::string RsmiCodeName(rsmi_status_t code);
std::string DmiCodeName(dmiStatus code);
std::string NvmlCodeName(nvmlReturn_t code);

// OK for SUCCESS; otherwise "<call>: <text> (<NAME>)" with a canonical code:
// not supported → Unimplemented, busy → Unavailable, bad argument →
// InvalidArgument, not found / VDEV_NOT_EXIST → NotFound, permission →
// PermissionDenied, init errors → FailedPrecondition, out of resources →
// ResourceExhausted, hymgr unreachable (32-34) → Unavailable, RESET_REQUIRED
// (35) → Aborted ("this card needs a reset"), anything else → Internal.
// Init failures (3, 5, 7, 13, 22) name the likely cause: hymgr or /dev/mkfd.
// `status_string` may be null.
Status FromRsmi(rsmi_status_t code, std::string_view call, rsmi_status_string_fn status_string);
Status FromDmi(dmiStatus code, std::string_view call, dmiGetStatusString_fn status_string);
Status FromNvml(nvmlReturn_t code, std::string_view call);

// The message part every DMI init failure carries.
inline constexpr char kDmiInitHint[] =
    "is the hymgr service running? is /dev/mkfd present and mounted?";

}  // namespace hcudp::vendor

#endif  // HCUDP_VENDOR_VENDOR_STATUS_H_
