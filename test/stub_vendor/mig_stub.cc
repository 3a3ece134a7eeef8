// Stand-in libhydmi_mig: the one MIG call the plugin makes.
#include "stub_control.h"
#include "stub_core.h"
#include "vendor/vendor_abi.h"

HCUDP_STUB_API nvmlReturn_t nvmlGetSystemMigMode(unsigned* current_mode, unsigned* pending_mode) {
  if (current_mode == nullptr || pending_mode == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  hcudp::VendorLib* sim = hcudp::stub::Sim();
  if (sim == nullptr) return NVML_ERROR_DRIVER_NOT_LOADED;
  if (hcudp::stub::KnobInt("mig_mode_fails", 0) != 0) return NVML_ERROR_UNKNOWN;
  hcudp::StatusOr<bool> on = sim->MigEnabled();
  if (!on.ok()) return NVML_ERROR_UNKNOWN;
  *current_mode = *pending_mode = *on ? NVML_DEVICE_MIG_ENABLE : NVML_DEVICE_MIG_DISABLE;
  return NVML_SUCCESS;
}
