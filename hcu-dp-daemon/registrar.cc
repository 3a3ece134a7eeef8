#include "registrar.h"

#include <grpcpp/create_channel_posix.h>
#include <grpcpp/grpcpp.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "deviceplugin_v1beta1.grpc.pb.h"

namespace hcudp::daemon {

void RegistrationCanceller::Cancel() {
  MutexLock lock(mu_);
  cancelled_ = true;
  if (context_ != nullptr) context_->TryCancel();
}

bool RegistrationCanceller::Begin(grpc::ClientContext* context) {
  MutexLock lock(mu_);
  if (cancelled_) return false;
  context_ = context;
  return true;
}

void RegistrationCanceller::End() {
  MutexLock lock(mu_);
  context_ = nullptr;
}

namespace {

// A connected, non-blocking unix socket to `path`, or why not. Never blocks:
// a kubelet that accepts nothing (full backlog) is "try again later".
StatusOr<int> ConnectUnix(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) return UnavailableError(path + ": path too long");
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return UnavailableError(std::string("socket: ") + std::strerror(errno));
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    int err = errno;
    ::close(fd);
    return UnavailableError("connect " + path + ": " + std::strerror(err));
  }
  return fd;
}

}  // namespace

Status RegisterWithKubelet(const RegisterParams& params, RegistrationCanceller* canceller) {
  // We connect, and the channel owns the connection from then on: it is
  // closed when the channel goes, whatever state kubelet left it in. (A
  // channel that dials for itself may finish a connection after it was
  // cancelled and destroyed, and nobody closes that one: one fd per kubelet
  // restart.)
  StatusOr<int> fd = ConnectUnix(params.kubelet_socket);
  if (!fd.ok()) {
    return UnavailableError("register " + params.resource_name + ": " + fd.status().message());
  }
  grpc::ChannelArguments args;
  auto channel =
      grpc::CreateCustomInsecureChannelFromFd("unix:" + params.kubelet_socket, *fd, args);
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
