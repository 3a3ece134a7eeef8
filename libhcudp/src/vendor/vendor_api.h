// The resolved entry points of the three vendor libraries. Loading resolves
// every required symbol individually and fails naming the first missing one;
// optional symbols are left null and callers answer NotSupported/Unimplemented.
#ifndef HCUDP_VENDOR_VENDOR_API_H_
#define HCUDP_VENDOR_VENDOR_API_H_

#include <memory>
#include <string>

#include "hcudp/status.h"
#include "vendor/shared_library.h"
#include "vendor/vendor_abi.h"

namespace hcudp::vendor {

struct RsmiApi {
  // Required (reference/hcu-hardware.md §1.7).
  rsmi_init_fn init = nullptr;
  rsmi_shut_down_fn shut_down = nullptr;
  rsmi_status_string_fn status_string = nullptr;
  rsmi_num_monitor_devices_fn num_monitor_devices = nullptr;
  rsmi_dev_pci_id_get_fn dev_pci_id_get = nullptr;
  rsmi_dev_serial_number_get_fn dev_serial_number_get = nullptr;
  rsmi_dev_unique_id_get_fn dev_unique_id_get = nullptr;
  rsmi_dev_id_get_fn dev_id_get = nullptr;
  rsmi_dev_memory_total_get_fn dev_memory_total_get = nullptr;
  rsmi_topo_get_numa_node_number_fn topo_get_numa_node_number = nullptr;
  rsmi_topo_get_link_type_fn topo_get_link_type = nullptr;
  rsmi_dev_ecc_count_get_fn dev_ecc_count_get = nullptr;
  // Optional.
  rsmi_topo_get_link_weight_fn topo_get_link_weight = nullptr;
  rsmi_topo_is_hylink_fn topo_is_hylink = nullptr;
  rsmi_version_str_get_fn version_str_get = nullptr;
  // Optional: HSL (XHCL) links, for RsmiLink::up_links.
  rsmi_dev_xhcl_link_number_get_fn xhcl_link_number_get = nullptr;
  rsmi_dev_xhcl_link_state_get_fn xhcl_link_state_get = nullptr;
  rsmi_dev_xhcl_link_remote_bdfid_get_fn xhcl_link_remote_bdfid_get = nullptr;
  // Optional: event notification (all four, or none is used).
  rsmi_event_notification_init_fn event_init = nullptr;
  rsmi_event_notification_mask_set_fn event_mask_set = nullptr;
  rsmi_event_notification_get_fn event_get = nullptr;
  rsmi_event_notification_stop_fn event_stop = nullptr;
};

struct DmiApi {
  // Required.
  dmiGetStatusString_fn get_status_string = nullptr;
  dmiGetDeviceCount_fn get_device_count = nullptr;
  dmiGetDeviceInfo_fn get_device_info = nullptr;
  dmiGetMaxVDeviceCount_fn get_max_vdevice_count = nullptr;
  dmiGetVDeviceInfo_fn get_vdevice_info = nullptr;
  dmiGetDeviceRemainingInfo_fn get_device_remaining_info = nullptr;
  // Optional: only dynamic vHCU needs them (older drivers may lack them).
  dmiCreateVDevices_fn create_vdevices = nullptr;
  dmiStopVDevice_fn stop_vdevice = nullptr;
  dmiDestroySingleVDevice_fn destroy_single_vdevice = nullptr;
};

struct MigApi {
  nvmlGetSystemMigMode_fn get_system_mig_mode = nullptr;  // optional
};

// The loaded libraries and their entry points. The function pointers are
// valid while this object lives.
struct VendorApi {
  std::unique_ptr<SharedLibrary> rsmi_library;
  std::unique_ptr<SharedLibrary> dmi_library;
  std::unique_ptr<SharedLibrary> mig_library;  // null when absent
  RsmiApi rsmi;
  DmiApi dmi;
  MigApi mig;
};

// File names tried, versioned soname first.
inline const char* const kRsmiFileNames[] = {"librocm_smi64.so.2", "librocm_smi64.so"};
inline const char* const kDmiFileNames[] = {"libhydmi.so.1", "libhydmi.so"};
inline const char* const kMigFileNames[] = {"libhydmi_mig.so.1", "libhydmi_mig.so"};

// Loads from `lib_dir` (<hyhal>/lib). libhydmi_mig is optional: absent or
// unloadable leaves mig_library null (a warning is logged).
StatusOr<std::unique_ptr<VendorApi>> LoadVendorApi(const std::string& lib_dir);

}  // namespace hcudp::vendor

#endif  // HCUDP_VENDOR_VENDOR_API_H_
