// The plugin-registration service on our socket in kubelet's registry
// directory (dra.md §1.2-1.4): kubelet's plugin watcher dials it, calls
// GetInfo (1 s timeout) and then NotifyRegistrationStatus with its verdict.
// GetInfo answers from a fixed PluginInfo; the verdict goes to the owner
// (DraPlugin), which retries a refused registration.
//
// A callback service: both calls answer at once, so the socket's server
// needs no synchronous-handler threads of its own (it would keep one or two
// idle for the daemon's life, ~45 KiB each).
//
// Thread-safety: handlers run on gRPC's callback threads; the service's
// state is immutable apart from an atomic counter.
#ifndef HCU_DP_DAEMON_DRA_REGISTRATION_SERVICE_H_
#define HCU_DP_DAEMON_DRA_REGISTRATION_SERVICE_H_

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "pluginregistration_v1.grpc.pb.h"

namespace hcudp::daemon::dra {

inline constexpr char kDraPluginType[] = "DRAPlugin";

// The gRPC services served on dra.sock, as kubelet names them in
// supported_versions: DRAPlugin v1 first (a 1.34+ kubelet takes the first
// one it knows, DESIGN.md §9), then the health services (kubelet 1.37 picks
// v1 over v1alpha1 whatever the order).
std::vector<std::string> SupportedServices();

// What GetInfo returns for driver `driver` serving on `endpoint`.
pluginregistration::PluginInfo MakePluginInfo(const std::string& driver,
                                              const std::string& endpoint);

class RegistrationService final : public pluginregistration::Registration::CallbackService {
 public:
  // Called on a gRPC thread for every NotifyRegistrationStatus; must not
  // block.
  using OnStatus = std::function<void(bool registered, const std::string& error)>;

  RegistrationService(pluginregistration::PluginInfo info, OnStatus on_status)
      : info_(std::move(info)), on_status_(std::move(on_status)) {}

  grpc::ServerUnaryReactor* GetInfo(grpc::CallbackServerContext* context,
                                    const pluginregistration::InfoRequest* request,
                                    pluginregistration::PluginInfo* response) override;
  grpc::ServerUnaryReactor* NotifyRegistrationStatus(
      grpc::CallbackServerContext* context, const pluginregistration::RegistrationStatus* request,
      pluginregistration::RegistrationStatusResponse* response) override;

  int get_info_calls() const { return get_info_calls_.load(); }

 private:
  const pluginregistration::PluginInfo info_;
  const OnStatus on_status_;
  std::atomic<int> get_info_calls_{0};
};

}  // namespace hcudp::daemon::dra

#endif  // HCU_DP_DAEMON_DRA_REGISTRATION_SERVICE_H_
