// The one mapping from hcudp::Status to grpc::Status. The codes share their
// numbers (both are the canonical codes), so the mapping is one to one.
#ifndef HCU_DP_DAEMON_GRPC_STATUS_H_
#define HCU_DP_DAEMON_GRPC_STATUS_H_

#include <grpcpp/support/status.h>

#include "hcudp/status.h"

namespace hcudp::daemon {

// The message travels in a response header; clients refuse headers over
// their metadata limit (8-16 KiB) as RESOURCE_EXHAUSTED, hiding the real
// error. Whatever a request echoes, at most this much of it goes back.
inline constexpr size_t kMaxGrpcErrorBytes = 1024;

// Messages longer than kMaxGrpcErrorBytes are cut there, saying how much.
grpc::Status ToGrpcStatus(const Status& status);

}  // namespace hcudp::daemon

#endif  // HCU_DP_DAEMON_GRPC_STATUS_H_
