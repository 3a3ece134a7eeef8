#include "dra/registration_service.h"
#include "hcudp_internal/log.h"

namespace hcudp::daemon::dra {

std::vector<std::string> SupportedServices() {
  return {"v1.DRAPlugin", "v1beta1.DRAPlugin", "v1alpha1.DRAResourceHealth",
          "v1.DRAResourceHealth"};
}

pluginregistration::PluginInfo MakePluginInfo(const std::string& driver,
                                              const std::string& endpoint) {
  pluginregistration::PluginInfo info;
  info.set_type(kDraPluginType);
  info.set_name(driver);
  info.set_endpoint(endpoint);
  for (const std::string& s : SupportedServices()) info.add_supported_versions(s);
  return info;
}

grpc::ServerUnaryReactor* RegistrationService::GetInfo(grpc::CallbackServerContext* context,
                                                       const pluginregistration::InfoRequest*,
                                                       pluginregistration::PluginInfo* response) {
  ++get_info_calls_;
  VLOG(1) << "kubelet asked for the plugin info (GetInfo)";
  *response = info_;
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

grpc::ServerUnaryReactor* RegistrationService::NotifyRegistrationStatus(
    grpc::CallbackServerContext* context, const pluginregistration::RegistrationStatus* request,
    pluginregistration::RegistrationStatusResponse*) {
  if (on_status_) on_status_(request->plugin_registered(), request->error());
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

}  // namespace hcudp::daemon::dra
