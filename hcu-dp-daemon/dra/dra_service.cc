#include "dra/dra_service.h"

#include <map>
#include <set>

#include "grpc_status.h"
#include "hcudp/dra/claim.h"
#include "hcudp_internal/log.h"

namespace hcudp::daemon::dra {
namespace {

std::string ClaimLabel(const Claim& c) {
  return c.namespace_name + "/" + c.name + " (uid " + c.uid + ")";
}

// At most 64 characters of a name from kubelet, for a message.
std::string Cut(const std::string& s) { return s.size() <= 64 ? s : s.substr(0, 64) + "..."; }

// The request's claims, each UID once, in order. A claim without a UID
// cannot be answered (the response is keyed by UID): the call is invalid. A
// claim whose namespace, name or UID breaks the Kubernetes name rules never
// reaches the driver: it is answered in `rejected` (UID → a short error, the
// bad value cut) and logged once, short.
template <class ClaimList>
StatusOr<std::vector<Claim>> ReadClaims(const ClaimList& claims, const char* call,
                                        std::map<std::string, std::string>* rejected) {
  std::vector<Claim> out;
  std::set<std::string> seen;
  for (int i = 0; i < claims.size(); ++i) {
    const auto& c = claims[i];
    if (c.uid().empty()) {
      return InvalidArgumentError("claims[" + std::to_string(i) + "] (" + Cut(c.namespace_()) +
                                  "/" + Cut(c.name()) + "): empty uid");
    }
    if (!seen.insert(c.uid()).second) continue;
    Claim claim{c.namespace_(), c.name(), c.uid()};
    Status valid = hcudp::dra::CheckClaimRef(claim);
    if (!valid.ok()) {
      LOG(WARNING) << call << ": claims[" << i << "] refused: " << valid.message();
      (*rejected)[claim.uid] = "hcu-dp-daemon: " + valid.message();
      continue;
    }
    out.push_back(std::move(claim));
  }
  return out;
}

CallContext MakeCallContext(grpc::ServerContext* context, const std::atomic<bool>& stopping) {
  CallContext call;
  call.deadline = context->deadline();
  call.cancelled = [context, &stopping] { return stopping.load() || context->IsCancelled(); };
  return call;
}

template <class DeviceProto>
void FillDevice(const PreparedDevice& d, DeviceProto* out) {
  for (const std::string& r : d.request_names) out->add_request_names(r);
  out->set_pool_name(d.pool_name);
  out->set_device_name(d.device_name);
  for (const std::string& id : d.cdi_device_ids) out->add_cdi_device_ids(id);
}

template <class Request, class Response>
grpc::Status Prepare(DraHandler& handler, grpc::ServerContext* context,
                     const std::atomic<bool>& stopping, const char* version, const Request& request,
                     Response* response, bool with_share_id) {
  std::map<std::string, std::string> rejected;
  StatusOr<std::vector<Claim>> claims =
      ReadClaims(request.claims(), "NodePrepareResources", &rejected);
  if (!claims.ok()) {
    LOG(WARNING) << "NodePrepareResources (" << version << "): " << claims.status().ToString();
    return ToGrpcStatus(claims.status());
  }
  for (auto& [uid, error] : rejected) (*response->mutable_claims())[uid].set_error(error);
  if (claims->empty()) return grpc::Status::OK;
  VLOG(1) << "NodePrepareResources (" << version << "): " << claims->size() << " claim(s)";
  auto results = PrepareAll(handler, *claims, MakeCallContext(context, stopping));
  if (!results.ok()) {
    LOG(WARNING) << "NodePrepareResources (" << version << "): " << results.status().ToString();
    return ToGrpcStatus(results.status());
  }
  for (auto& [uid, result] : *results) {
    auto& out = (*response->mutable_claims())[uid];
    out.set_error(result.error);
    if (!result.error.empty()) continue;
    for (const PreparedDevice& d : result.devices) {
      auto* dev = out.add_devices();
      FillDevice(d, dev);
      if constexpr (std::is_same_v<Response, drapb_v1::NodePrepareResourcesResponse>) {
        if (with_share_id && d.share_id) dev->set_share_id(*d.share_id);
      }
    }
  }
  return grpc::Status::OK;
}

template <class Request, class Response>
grpc::Status Unprepare(DraHandler& handler, grpc::ServerContext* context,
                       const std::atomic<bool>& stopping, const char* version,
                       const Request& request, Response* response) {
  std::map<std::string, std::string> rejected;
  StatusOr<std::vector<Claim>> claims =
      ReadClaims(request.claims(), "NodeUnprepareResources", &rejected);
  if (!claims.ok()) {
    LOG(WARNING) << "NodeUnprepareResources (" << version << "): " << claims.status().ToString();
    return ToGrpcStatus(claims.status());
  }
  for (auto& [uid, error] : rejected) (*response->mutable_claims())[uid].set_error(error);
  if (claims->empty()) return grpc::Status::OK;
  VLOG(1) << "NodeUnprepareResources (" << version << "): " << claims->size() << " claim(s)";
  auto results = UnprepareAll(handler, *claims, MakeCallContext(context, stopping));
  if (!results.ok()) {
    LOG(WARNING) << "NodeUnprepareResources (" << version << "): " << results.status().ToString();
    return ToGrpcStatus(results.status());
  }
  for (auto& [uid, error] : *results) (*response->mutable_claims())[uid].set_error(error);
  return grpc::Status::OK;
}

}  // namespace

StatusOr<std::map<std::string, PrepareResult>> PrepareAll(DraHandler& handler,
                                                          const std::vector<Claim>& claims,
                                                          const CallContext& call) {
  HCUDP_ASSIGN_OR_RETURN(auto got, handler.Prepare(claims, call));
  std::map<std::string, PrepareResult> out;
  for (const Claim& c : claims) {
    auto it = got.find(c.uid);
    if (it == got.end()) {
      LOG(ERROR) << "the driver gave no result for claim " << ClaimLabel(c);
      out[c.uid].error = "hcu-dp-daemon: no result for claim " + ClaimLabel(c);
      continue;
    }
    PrepareResult& r = out[c.uid] = std::move(it->second);
    for (PreparedDevice& d : r.devices) {
      for (std::string& name : d.request_names) name = hcudp::dra::BaseRequestName(name);
    }
    got.erase(it);
  }
  for (const auto& [uid, result] : got) {
    LOG(ERROR) << "the driver answered for claim uid " << uid << ", which was not asked for";
  }
  return out;
}

StatusOr<std::map<std::string, std::string>> UnprepareAll(DraHandler& handler,
                                                          const std::vector<Claim>& claims,
                                                          const CallContext& call) {
  HCUDP_ASSIGN_OR_RETURN(auto got, handler.Unprepare(claims, call));
  std::map<std::string, std::string> out;
  for (const Claim& c : claims) {
    auto it = got.find(c.uid);
    if (it == got.end()) {
      LOG(ERROR) << "the driver gave no result for claim " << ClaimLabel(c);
      out[c.uid] = "hcu-dp-daemon: no result for claim " + ClaimLabel(c);
      continue;
    }
    out[c.uid] = std::move(it->second);
    got.erase(it);
  }
  for (const auto& [uid, error] : got) {
    LOG(ERROR) << "the driver answered for claim uid " << uid << ", which was not asked for";
  }
  return out;
}

grpc::Status DraPluginV1Service::NodePrepareResources(
    grpc::ServerContext* context, const drapb_v1::NodePrepareResourcesRequest* request,
    drapb_v1::NodePrepareResourcesResponse* response) {
  return Prepare(handler_, context, stopping_, "v1", *request, response, /*with_share_id=*/true);
}

grpc::Status DraPluginV1Service::NodeUnprepareResources(
    grpc::ServerContext* context, const drapb_v1::NodeUnprepareResourcesRequest* request,
    drapb_v1::NodeUnprepareResourcesResponse* response) {
  return Unprepare(handler_, context, stopping_, "v1", *request, response);
}

grpc::Status DraPluginV1beta1Service::NodePrepareResources(
    grpc::ServerContext* context, const drapb_v1beta1::NodePrepareResourcesRequest* request,
    drapb_v1beta1::NodePrepareResourcesResponse* response) {
  return Prepare(handler_, context, stopping_, "v1beta1", *request, response,
                 /*with_share_id=*/false);
}

grpc::Status DraPluginV1beta1Service::NodeUnprepareResources(
    grpc::ServerContext* context, const drapb_v1beta1::NodeUnprepareResourcesRequest* request,
    drapb_v1beta1::NodeUnprepareResourcesResponse* response) {
  return Unprepare(handler_, context, stopping_, "v1beta1", *request, response);
}

}  // namespace hcudp::daemon::dra
