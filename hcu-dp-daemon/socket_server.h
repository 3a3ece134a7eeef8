// SocketServer: a gRPC server on one unix socket for a set of services the
// caller owns (a device-plugin resource's socket through PluginServer, the
// DRA service socket, the registration socket). It remembers the socket's
// inode, so that its owner can tell "our socket was removed or replaced", and
// it stops within a bound even when a handler hangs.
//
// Thread-safety: Start/Stop from one owner thread.
#ifndef HCU_DP_DAEMON_SOCKET_SERVER_H_
#define HCU_DP_DAEMON_SOCKET_SERVER_H_

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "hcudp/status.h"

namespace hcudp::daemon {

// Both directions: big GetPreferredAllocation requests, many claims.
inline constexpr int kMaxMessageBytes = 16 * 1024 * 1024;

// Inode of `path` if it exists, else 0.
uint64_t FileInode(const std::string& path);

class SocketServer {
 public:
  static constexpr std::chrono::milliseconds kShutdownGrace{500};
  static constexpr std::chrono::milliseconds kStopBudget{2000};

  // Serves `services` (they must outlive the server) on `socket_path`; the
  // caller has made sure nothing else serves there (gRPC replaces the
  // file). `max_threads` bounds the synchronous handlers (streams run as
  // callbacks and hold none). Unavailable when the socket cannot be bound.
  //
  // `publish_by_rename`: bind at HiddenPath(socket_path) and rename the
  // listening socket into place, so that a watcher that dials the path as
  // soon as it appears (kubelet's plugin watcher, on inotify) never finds
  // it bound but not yet listening (refused, and gRPC's reconnect backoff
  // of 1 s follows). kubelet ignores names starting with '.'.
  // `max_pollers`: gRPC's polling threads for the synchronous handlers.
  static StatusOr<std::unique_ptr<SocketServer>> Start(const std::string& socket_path,
                                                       const std::vector<grpc::Service*>& services,
                                                       int max_threads,
                                                       bool publish_by_rename = false,
                                                       int max_pollers = 2);
  // <dir>/.<name> for <dir>/<name>.
  static std::string HiddenPath(const std::string& socket_path);
  ~SocketServer();  // Stop()

  // Stops serving and removes the socket file if it is still ours (same
  // inode). Calls still running kShutdownGrace after the stop began are
  // cancelled; if one has not returned by the deadline the server is left
  // behind (logged) and false is returned: whatever its services use must
  // then stay alive.
  bool Stop();
  void BeginStop();
  bool FinishStop(std::chrono::steady_clock::time_point deadline);

  const std::string& socket_path() const { return socket_path_; }
  uint64_t socket_inode() const { return inode_; }

 private:
  SocketServer() = default;

  std::unique_ptr<grpc::Server> server_;
  std::thread shutdown_;
  std::shared_ptr<std::promise<void>> shut_down_;
  std::future<void> shut_down_future_;
  std::string socket_path_;
  uint64_t inode_ = 0;
};

}  // namespace hcudp::daemon

#endif  // HCU_DP_DAEMON_SOCKET_SERVER_H_
