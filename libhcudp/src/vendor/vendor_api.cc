#include "vendor/vendor_api.h"

#include <iterator>
#include <vector>

#include "hcudp_internal/log.h"

namespace hcudp::vendor {
namespace {

template <size_t N>
std::vector<std::string> Names(const char* const (&names)[N]) {
  return std::vector<std::string>(std::begin(names), std::end(names));
}

Status ResolveRsmi(const SharedLibrary& lib, RsmiApi* api) {
  HCUDP_RETURN_IF_ERROR(lib.Resolve("rsmi_init", &api->init));
  HCUDP_RETURN_IF_ERROR(lib.Resolve("rsmi_shut_down", &api->shut_down));
  HCUDP_RETURN_IF_ERROR(lib.Resolve("rsmi_status_string", &api->status_string));
  HCUDP_RETURN_IF_ERROR(lib.Resolve("rsmi_num_monitor_devices", &api->num_monitor_devices));
  HCUDP_RETURN_IF_ERROR(lib.Resolve("rsmi_dev_pci_id_get", &api->dev_pci_id_get));
  HCUDP_RETURN_IF_ERROR(lib.Resolve("rsmi_dev_serial_number_get", &api->dev_serial_number_get));
  HCUDP_RETURN_IF_ERROR(lib.Resolve("rsmi_dev_unique_id_get", &api->dev_unique_id_get));
  HCUDP_RETURN_IF_ERROR(lib.Resolve("rsmi_dev_id_get", &api->dev_id_get));
  HCUDP_RETURN_IF_ERROR(lib.Resolve("rsmi_dev_memory_total_get", &api->dev_memory_total_get));
  HCUDP_RETURN_IF_ERROR(
      lib.Resolve("rsmi_topo_get_numa_node_number", &api->topo_get_numa_node_number));
  HCUDP_RETURN_IF_ERROR(lib.Resolve("rsmi_topo_get_link_type", &api->topo_get_link_type));
  HCUDP_RETURN_IF_ERROR(lib.Resolve("rsmi_dev_ecc_count_get", &api->dev_ecc_count_get));
  lib.ResolveOptional("rsmi_topo_get_link_weight", &api->topo_get_link_weight);
  lib.ResolveOptional("rsmi_topo_is_hylink", &api->topo_is_hylink);
  lib.ResolveOptional("rsmi_version_str_get", &api->version_str_get);
  lib.ResolveOptional("rsmi_dev_xhcl_link_number_get", &api->xhcl_link_number_get);
  lib.ResolveOptional("rsmi_dev_xhcl_link_state_get", &api->xhcl_link_state_get);
  lib.ResolveOptional("rsmi_dev_xhcl_link_remote_bdfid_get", &api->xhcl_link_remote_bdfid_get);
  lib.ResolveOptional("rsmi_event_notification_init", &api->event_init);
  lib.ResolveOptional("rsmi_event_notification_mask_set", &api->event_mask_set);
  lib.ResolveOptional("rsmi_event_notification_get", &api->event_get);
  lib.ResolveOptional("rsmi_event_notification_stop", &api->event_stop);
  return OkStatus();
}

Status ResolveDmi(const SharedLibrary& lib, DmiApi* api) {
  HCUDP_RETURN_IF_ERROR(lib.Resolve("dmiGetStatusString", &api->get_status_string));
  HCUDP_RETURN_IF_ERROR(lib.Resolve("dmiGetDeviceCount", &api->get_device_count));
  HCUDP_RETURN_IF_ERROR(lib.Resolve("dmiGetDeviceInfo", &api->get_device_info));
  HCUDP_RETURN_IF_ERROR(lib.Resolve("dmiGetMaxVDeviceCount", &api->get_max_vdevice_count));
  HCUDP_RETURN_IF_ERROR(lib.Resolve("dmiGetVDeviceInfo", &api->get_vdevice_info));
  HCUDP_RETURN_IF_ERROR(lib.Resolve("dmiGetDeviceRemainingInfo", &api->get_device_remaining_info));
  lib.ResolveOptional("dmiCreateVDevices", &api->create_vdevices);
  lib.ResolveOptional("dmiStopVDevice", &api->stop_vdevice);
  lib.ResolveOptional("dmiDestroySingleVDevice", &api->destroy_single_vdevice);
  return OkStatus();
}

}  // namespace

StatusOr<std::unique_ptr<VendorApi>> LoadVendorApi(const std::string& lib_dir) {
  auto api = std::make_unique<VendorApi>();
  HCUDP_ASSIGN_OR_RETURN(api->rsmi_library, SharedLibrary::Open(lib_dir, Names(kRsmiFileNames)));
  HCUDP_RETURN_IF_ERROR(ResolveRsmi(*api->rsmi_library, &api->rsmi));
  HCUDP_ASSIGN_OR_RETURN(api->dmi_library, SharedLibrary::Open(lib_dir, Names(kDmiFileNames)));
  HCUDP_RETURN_IF_ERROR(ResolveDmi(*api->dmi_library, &api->dmi));

  StatusOr<std::unique_ptr<SharedLibrary>> mig = SharedLibrary::Open(lib_dir, Names(kMigFileNames));
  if (mig.ok()) {
    api->mig_library = std::move(mig).value();
    api->mig_library->ResolveOptional("nvmlGetSystemMigMode", &api->mig.get_system_mig_mode);
  } else {
    LOG(WARNING) << "MIG library not available, MIG mode reported off: " << mig.status().message();
  }
  return api;
}

}  // namespace hcudp::vendor
