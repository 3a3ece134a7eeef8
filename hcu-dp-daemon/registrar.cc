#include "registrar.h"

#include <grpcpp/grpcpp.h>

#include "deviceplugin_v1beta1.grpc.pb.h"

namespace hcudp::daemon {

void RegistrationCanceller::Cancel() {
  std::lock_guard<std::mutex> lock(mu_);
  cancelled_ = true;
  if (context_ != nullptr) context_->TryCancel();
}

bool RegistrationCanceller::Begin(grpc::ClientContext* context) {
  std::lock_guard<std::mutex> lock(mu_);
  if (cancelled_) return false;
  context_ = context;
  return true;
}

void RegistrationCanceller::End() {
  std::lock_guard<std::mutex> lock(mu_);
  context_ = nullptr;
}

Status RegisterWithKubelet(const RegisterParams& params, RegistrationCanceller* canceller) {
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
  request.mutable_options()->set_get_preferred_allocation_available(params.preferred_allocation);
  v1beta1::Empty response;
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + params.timeout);
  if (canceller != nullptr && !canceller->Begin(&context)) {
    return UnavailableError("registration cancelled (shutting down)");
  }
  grpc::Status st = stub->Register(&context, request, &response);
  if (canceller != nullptr) canceller->End();
  if (!st.ok()) {
    return UnavailableError("register " + params.resource_name + " with " + params.kubelet_socket +
                            ": " + st.error_message());
  }
  return OkStatus();
}

}  // namespace hcudp::daemon
