#include "vendor/vendor_status.h"

#include <cstdint>

namespace hcudp::vendor {
namespace {

constexpr const char* kRsmiNames[] = {
    "SUCCESS",
    "INVALID_ARGS",
    "NOT_SUPPORTED",
    "FILE_ERROR",
    "PERMISSION",
    "OUT_OF_RESOURCES",
    "INTERNAL_EXCEPTION",
    "INPUT_OUT_OF_BOUNDS",
    "INIT_ERROR",
    "NOT_YET_IMPLEMENTED",
    "NOT_FOUND",
    "INSUFFICIENT_SIZE",
    "INTERRUPT",
    "UNEXPECTED_SIZE",
    "NO_DATA",
    "UNEXPECTED_DATA",
    "BUSY",
    "REFCOUNT_OVERFLOW",
    "SETTING_UNAVAILABLE",
    "AMDGPU_RESTART_ERR",
};

constexpr const char* kDmiNames[] = {
    "SUCCESS",
    "ERROR",
    "NO_MEMORY",
    "OPEN_MKFD_FAILED",
    "MKFD_ALREADY_OPENED",
    "SYS_NODE_NOT_EXIST",
    "NOT_SUPPORTED",
    "MKFD_NOT_OPENED",
    "CREATE_VDEV_FAILED",
    "DESTROY_VDEV_FAILED",
    "INVALID_ARGUMENTS",
    "OUT_OF_RESOURCES",
    "QUERY_VDEV_INFO_FAILED",
    "ERROR_NOT_INITIALIZED",
    "DEVICE_NOT_SUPPORT",
    "VDEV_NOT_EXIST",
    "INIT_DEVICE_FAILED",
    "DEVICE_BUSY",
    "FILE_ERROR",
    "PERMISSION",
    "INTERNAL_EXCEPTION",
    "INPUT_OUT_OF_BOUNDS",
    "SMI_INIT_ERROR",
    "NOT_FOUND",
    "INSUFFICIENT_SIZE",
    "INTERRUPT",
    "UNEXPECTED_SIZE",
    "NO_DATA",
    "UNEXPECTED_DATA",
    "SMI_BUSY",
    "REFCOUNT_OVERFLOW",
    "NOT_YET_IMPLEMENTED",
    "HYMGR_CONNECT_FAILED",
    "HYMGR_SEND_ERROR",
    "HYMGR_RECV_ERROR",
    "RESET_REQUIRED",
};

constexpr const char* kNvmlNames[] = {
    "SUCCESS",
    "UNINITIALIZED",
    "INVALID_ARGUMENT",
    "NOT_SUPPORTED",
    "NO_PERMISSION",
    "ALREADY_INITIALIZED",
    "NOT_FOUND",
    "INSUFFICIENT_SIZE",
    "INSUFFICIENT_POWER",
    "DRIVER_NOT_LOADED",
    "TIMEOUT",
    "IRQ_ISSUE",
    "LIBRARY_NOT_FOUND",
    "FUNCTION_NOT_FOUND",
    "CORRUPTED_INFOROM",
    "GPU_IS_LOST",
    "RESET_REQUIRED",
    "OPERATING_SYSTEM",
    "LIB_RM_VERSION_MISMATCH",
    "IN_USE",
    "MEMORY",
    "NO_DATA",
    "VGPU_ECC_NOT_SUPPORTED",
    "INSUFFICIENT_RESOURCES",
    "FREQ_NOT_SUPPORTED",
    "ARGUMENT_VERSION_MISMATCH",
    "DEPRECATED",
    "NOT_READY",
};

template <size_t N>
std::string NameFrom(const char* const (&names)[N], uint32_t code, const char* prefix) {
  if (code < N) return std::string(prefix) + names[code];
  return std::string(prefix) + std::to_string(code);
}

Status Build(StatusCode code, std::string_view call, const char* text, const std::string& name) {
  std::string message(call);
  message += ": ";
  message += (text != nullptr && *text != '\0') ? text : name;
  if (text != nullptr && *text != '\0') message += " (" + name + ")";
  return Status(code, std::move(message));
}

}  // namespace

std::string RsmiCodeName(rsmi_status_t code) {
  if (code == RSMI_STATUS_UNKNOWN_ERROR) return "RSMI_STATUS_UNKNOWN_ERROR";
  return NameFrom(kRsmiNames, static_cast<uint32_t>(code), "RSMI_STATUS_");
}

std::string DmiCodeName(dmiStatus code) {
  if (code == DMI_STATUS_UNKNOWN_ERROR) return "DMI_STATUS_UNKNOWN_ERROR";
  return NameFrom(kDmiNames, static_cast<uint32_t>(code), "DMI_STATUS_");
}

std::string NvmlCodeName(nvmlReturn_t code) {
  if (code == NVML_ERROR_UNKNOWN) return "NVML_ERROR_UNKNOWN";
  return NameFrom(kNvmlNames, static_cast<uint32_t>(code), "NVML_ERROR_");
}

Status FromRsmi(rsmi_status_t code, std::string_view call, rsmi_status_string_fn status_string) {
  if (code == RSMI_STATUS_SUCCESS) return OkStatus();
  const char* text = nullptr;
  if (status_string != nullptr && status_string(code, &text) != RSMI_STATUS_SUCCESS) {
    text = nullptr;
  }
  StatusCode canonical = StatusCode::kInternal;
  switch (code) {
    case RSMI_STATUS_NOT_SUPPORTED:
    case RSMI_STATUS_NOT_YET_IMPLEMENTED:
      canonical = StatusCode::kUnimplemented;
      break;
    case RSMI_STATUS_INVALID_ARGS:
      canonical = StatusCode::kInvalidArgument;
      break;
    case RSMI_STATUS_INPUT_OUT_OF_BOUNDS:
      canonical = StatusCode::kOutOfRange;
      break;
    case RSMI_STATUS_NOT_FOUND:
      canonical = StatusCode::kNotFound;
      break;
    case RSMI_STATUS_PERMISSION:
      canonical = StatusCode::kPermissionDenied;
      break;
    case RSMI_STATUS_BUSY:
    case RSMI_STATUS_INTERRUPT:
      canonical = StatusCode::kUnavailable;
      break;
    case RSMI_STATUS_INIT_ERROR:
    case RSMI_STATUS_AMDGPU_RESTART_ERR:
      canonical = StatusCode::kFailedPrecondition;
      break;
    case RSMI_STATUS_OUT_OF_RESOURCES:
      canonical = StatusCode::kResourceExhausted;
      break;
    default:
      break;
  }
  return Build(canonical, call, text, RsmiCodeName(code));
}

Status FromDmi(dmiStatus code, std::string_view call, dmiGetStatusString_fn status_string) {
  if (code == DMI_STATUS_SUCCESS) return OkStatus();
  const char* text = nullptr;
  if (status_string != nullptr && status_string(code, &text) != DMI_STATUS_SUCCESS) {
    text = nullptr;
  }
  StatusCode canonical = StatusCode::kInternal;
  const char* hint = nullptr;
  switch (code) {
    case DMI_STATUS_NOT_SUPPORTED:
    case DMI_STATUS_DEVICE_NOT_SUPPORT:
    case DMI_STATUS_NOT_YET_IMPLEMENTED:
      canonical = StatusCode::kUnimplemented;
      break;
    case DMI_STATUS_INVALID_ARGUMENTS:
      canonical = StatusCode::kInvalidArgument;
      break;
    case DMI_STATUS_INPUT_OUT_OF_BOUNDS:
      canonical = StatusCode::kOutOfRange;
      break;
    case DMI_STATUS_VDEV_NOT_EXIST:
    case DMI_STATUS_NOT_FOUND:
      canonical = StatusCode::kNotFound;
      break;
    case DMI_STATUS_PERMISSION:
      canonical = StatusCode::kPermissionDenied;
      break;
    case DMI_STATUS_DEVICE_BUSY:
    case DMI_STATUS_SMI_BUSY:
    case DMI_STATUS_INTERRUPT:
      canonical = StatusCode::kUnavailable;
      break;
    case DMI_STATUS_HYMGR_CONNECT_FAILED:
    case DMI_STATUS_HYMGR_SEND_ERROR:
    case DMI_STATUS_HYMGR_RECV_ERROR:
      canonical = StatusCode::kUnavailable;
      hint = "the management service hymgr did not answer; is it running?";
      break;
    case DMI_STATUS_RESET_REQUIRED:
      canonical = StatusCode::kAborted;
      hint = "the card needs a reset";
      break;
    case DMI_STATUS_OUT_OF_RESOURCES:
    case DMI_STATUS_NO_MEMORY:
      canonical = StatusCode::kResourceExhausted;
      break;
    case DMI_STATUS_OPEN_MKFD_FAILED:
    case DMI_STATUS_MKFD_NOT_OPENED:
    case DMI_STATUS_SYS_NODE_NOT_EXIST:
    case DMI_STATUS_ERROR_NOT_INITIALIZED:
    case DMI_STATUS_SMI_INIT_ERROR:
      canonical = StatusCode::kFailedPrecondition;
      hint = kDmiInitHint;
      break;
    default:
      break;
  }
  Status st = Build(canonical, call, text, DmiCodeName(code));
  if (hint == nullptr) return st;
  return Status(st.code(), st.message() + "; " + hint);
}

Status FromNvml(nvmlReturn_t code, std::string_view call) {
  if (code == NVML_SUCCESS) return OkStatus();
  StatusCode canonical = StatusCode::kInternal;
  switch (code) {
    case NVML_ERROR_NOT_SUPPORTED:
      canonical = StatusCode::kUnimplemented;
      break;
    case NVML_ERROR_INVALID_ARGUMENT:
      canonical = StatusCode::kInvalidArgument;
      break;
    case NVML_ERROR_NOT_FOUND:
      canonical = StatusCode::kNotFound;
      break;
    case NVML_ERROR_NO_PERMISSION:
      canonical = StatusCode::kPermissionDenied;
      break;
    case NVML_ERROR_IN_USE:
    case NVML_ERROR_TIMEOUT:
      canonical = StatusCode::kUnavailable;
      break;
    case NVML_ERROR_UNINITIALIZED:
    case NVML_ERROR_DRIVER_NOT_LOADED:
      canonical = StatusCode::kFailedPrecondition;
      break;
    default:
      break;
  }
  return Build(canonical, call, nullptr, NvmlCodeName(code));
}

}  // namespace hcudp::vendor
