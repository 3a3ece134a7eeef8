// The DRAPlugin services kubelet calls on <plugins-dir>/<driver>/dra.sock:
// v1 (advertised first) and v1beta1. Both only translate: the request's
// claims go to DraHandler in the v1 shape and the results come back in the
// version asked for (v1beta1 drops share_id). The wire layer guarantees what
// kubelet checks (dra.md §2.7): every claim asked for has exactly one entry
// in the response, no other entries, and request names are base names.
//
// Thread-safety: handlers run concurrently on gRPC threads; the services
// hold no mutable state of their own.
#ifndef HCU_DP_DAEMON_DRA_DRA_SERVICE_H_
#define HCU_DP_DAEMON_DRA_DRA_SERVICE_H_

#include <atomic>
#include <map>
#include <string>
#include <vector>

#include "dra/dra_handler.h"
#include "dra_v1.grpc.pb.h"
#include "dra_v1beta1.grpc.pb.h"

namespace hcudp::daemon::dra {

namespace drapb_v1 = ::k8s::io::kubelet::pkg::apis::dra::v1;
namespace drapb_v1beta1 = ::k8s::io::kubelet::pkg::apis::dra::v1beta1;

// The handler's Prepare, completed: a result for every claim in `claims`
// (an error for a claim the handler left out) and none for others, request
// names cut to their base. A non-OK Status is the handler's own.
StatusOr<std::map<std::string, PrepareResult>> PrepareAll(DraHandler& handler,
                                                          const std::vector<Claim>& claims,
                                                          const CallContext& call);
// The same for Unprepare.
StatusOr<std::map<std::string, std::string>> UnprepareAll(DraHandler& handler,
                                                          const std::vector<Claim>& claims,
                                                          const CallContext& call);

class DraPluginV1Service final : public drapb_v1::DRAPlugin::Service {
 public:
  // `handler` and `stopping` must outlive the service.
  DraPluginV1Service(DraHandler& handler, const std::atomic<bool>& stopping)
      : handler_(handler), stopping_(stopping) {}

  grpc::Status NodePrepareResources(grpc::ServerContext* context,
                                    const drapb_v1::NodePrepareResourcesRequest* request,
                                    drapb_v1::NodePrepareResourcesResponse* response) override;
  grpc::Status NodeUnprepareResources(grpc::ServerContext* context,
                                      const drapb_v1::NodeUnprepareResourcesRequest* request,
                                      drapb_v1::NodeUnprepareResourcesResponse* response) override;

 private:
  DraHandler& handler_;
  const std::atomic<bool>& stopping_;
};

class DraPluginV1beta1Service final : public drapb_v1beta1::DRAPlugin::Service {
 public:
  DraPluginV1beta1Service(DraHandler& handler, const std::atomic<bool>& stopping)
      : handler_(handler), stopping_(stopping) {}

  grpc::Status NodePrepareResources(grpc::ServerContext* context,
                                    const drapb_v1beta1::NodePrepareResourcesRequest* request,
                                    drapb_v1beta1::NodePrepareResourcesResponse* response) override;
  grpc::Status NodeUnprepareResources(
      grpc::ServerContext* context, const drapb_v1beta1::NodeUnprepareResourcesRequest* request,
      drapb_v1beta1::NodeUnprepareResourcesResponse* response) override;

 private:
  DraHandler& handler_;
  const std::atomic<bool>& stopping_;
};

}  // namespace hcudp::daemon::dra

#endif  // HCU_DP_DAEMON_DRA_DRA_SERVICE_H_
