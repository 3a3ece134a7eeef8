// The DRAResourceHealth services on dra.sock: v1alpha1 (kubelet 1.34-1.36,
// which opens it for every plugin once ResourceHealthStatus is on) and v1
// (kubelet 1.37, which prefers it). Same messages, two packages. Each
// NodeWatchResources stream is a gRPC callback reactor fed by the
// HealthBroadcaster: it holds no thread while waiting, notices kubelet
// leaving at once (OnCancel), and ends promptly when the daemon stops.
#ifndef HCU_DP_DAEMON_DRA_HEALTH_SERVICE_H_
#define HCU_DP_DAEMON_DRA_HEALTH_SERVICE_H_

#include "dra/health_broadcaster.h"
#include "dra_health_v1.grpc.pb.h"
#include "dra_health_v1alpha1.grpc.pb.h"

namespace hcudp::daemon::dra {

class HealthServiceV1alpha1 final : public ::v1alpha1::DRAResourceHealth::CallbackService {
 public:
  // `broadcaster` must outlive every stream (the server's shutdown).
  explicit HealthServiceV1alpha1(HealthBroadcaster& broadcaster) : broadcaster_(broadcaster) {}

  grpc::ServerWriteReactor<::v1alpha1::NodeWatchResourcesResponse>* NodeWatchResources(
      grpc::CallbackServerContext* context,
      const ::v1alpha1::NodeWatchResourcesRequest* request) override;

 private:
  HealthBroadcaster& broadcaster_;
};

class HealthServiceV1 final : public ::v1::DRAResourceHealth::CallbackService {
 public:
  explicit HealthServiceV1(HealthBroadcaster& broadcaster) : broadcaster_(broadcaster) {}

  grpc::ServerWriteReactor<::v1::NodeWatchResourcesResponse>* NodeWatchResources(
      grpc::CallbackServerContext* context,
      const ::v1::NodeWatchResourcesRequest* request) override;

 private:
  HealthBroadcaster& broadcaster_;
};

}  // namespace hcudp::daemon::dra

#endif  // HCU_DP_DAEMON_DRA_HEALTH_SERVICE_H_
