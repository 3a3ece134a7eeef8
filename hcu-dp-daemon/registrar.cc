#include "registrar.h"

#include <grpcpp/grpcpp.h>

#include "deviceplugin_v1beta1.grpc.pb.h"

namespace hcudp::daemon {

Status RegisterWithKubelet(const RegisterParams& params) {
  grpc::ChannelArguments args;
  // A fresh connection each time: kubelet.sock may be a new socket.
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  auto channel = grpc::CreateCustomChannel("unix:" + params.kubelet_socket,
                                           grpc::InsecureChannelCredentials(), args);
  auto stub = v1beta1::Registration::NewStub(channel);
  v1beta1::RegisterRequest request;
  request.set_version(std::string(kDevicePluginApiVersion));
  request.set_endpoint(params.endpoint);
  request.set_resource_name(params.resource_name);
  request.mutable_options()->set_pre_start_required(false);
  request.mutable_options()->set_get_preferred_allocation_available(
      params.preferred_allocation);
  v1beta1::Empty response;
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + params.timeout);
  grpc::Status st = stub->Register(&context, request, &response);
  if (!st.ok()) {
    return UnavailableError("register " + params.resource_name + " with " +
                            params.kubelet_socket + ": " + st.error_message());
  }
  return OkStatus();
}

}  // namespace hcudp::daemon
