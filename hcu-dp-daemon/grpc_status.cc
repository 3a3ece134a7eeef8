#include "grpc_status.h"

namespace hcudp::daemon {

grpc::Status ToGrpcStatus(const Status& status) {
  if (status.ok()) return grpc::Status::OK;
  std::string message = status.message();
  if (message.size() > kMaxGrpcErrorBytes) {
    const size_t cut = message.size() - kMaxGrpcErrorBytes;
    message.resize(kMaxGrpcErrorBytes);
    message += "... (" + std::to_string(cut) + " more bytes)";
  }
  return grpc::Status(static_cast<grpc::StatusCode>(static_cast<int>(status.code())), message);
}

}  // namespace hcudp::daemon
