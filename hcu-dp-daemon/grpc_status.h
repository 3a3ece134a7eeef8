// The one mapping from hcudp::Status to grpc::Status. The codes share their
// numbers (both are the canonical codes), so the mapping is one to one.
#ifndef HCU_DP_DAEMON_GRPC_STATUS_H_
#define HCU_DP_DAEMON_GRPC_STATUS_H_

#include <grpcpp/support/status.h>

#include "hcudp/status.h"

namespace hcudp::daemon {

grpc::Status ToGrpcStatus(const Status& status);

}  // namespace hcudp::daemon

#endif  // HCU_DP_DAEMON_GRPC_STATUS_H_
