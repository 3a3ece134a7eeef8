// PluginServer: one resource's DevicePlugin service served on its own unix
// socket. Started before Register (so kubelet can dial back and call
// GetDevicePluginOptions while Register is in flight) with enough threads
// for long-lived ListAndWatch streams plus concurrent unary calls, and
// 16 MiB message limits (big GetPreferredAllocation requests).
//
// Thread-safety: Start/Stop from one owner thread.
#ifndef HCU_DP_DAEMON_PLUGIN_SERVER_H_
#define HCU_DP_DAEMON_PLUGIN_SERVER_H_

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <memory>
#include <string>

#include "hcudp/status.h"
#include "plugin_service.h"
#include "socket_server.h"

namespace hcudp::daemon {

class PluginServer {
 public:
  // Takes the service; serves it on `socket_path` (a stale file there is
  // replaced). Unavailable when the socket cannot be bound.
  static StatusOr<std::unique_ptr<PluginServer>> Start(std::unique_ptr<PluginService> service,
                                                       const std::string& socket_path);
  ~PluginServer();

  // Ends streams, stops serving, and removes the socket file if it is still
  // ours (same inode as when we bound it). Idempotent. Bounded: calls still
  // running kShutdownGrace after the stop began are cancelled, and if a
  // handler has not returned by kStopBudget the server is left behind
  // (logged): returns false, and the process must then exit without
  // destroying what handlers use.
  bool Stop();
  // Stop in two halves, so that many servers stop in parallel time:
  // BeginStop starts the shutdown; FinishStop waits for it until `deadline`.
  void BeginStop();
  bool FinishStop(std::chrono::steady_clock::time_point deadline);

  static constexpr std::chrono::milliseconds kShutdownGrace = SocketServer::kShutdownGrace;
  static constexpr std::chrono::milliseconds kStopBudget = SocketServer::kStopBudget;

  PluginService& service() { return *service_; }
  const std::string& socket_path() const { return socket_->socket_path(); }
  // Inode of the socket file as bound; 0 if unknown.
  uint64_t socket_inode() const { return socket_->socket_inode(); }

 private:
  PluginServer() = default;

  std::unique_ptr<PluginService> service_;
  std::unique_ptr<SocketServer> socket_;  // serves service_
  bool stopping_ = false;                 // service_->Stop() was called
};

}  // namespace hcudp::daemon

#endif  // HCU_DP_DAEMON_PLUGIN_SERVER_H_
