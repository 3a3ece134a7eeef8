#include "plugin_server.h"

#include <unistd.h>

#include <chrono>

#include "hcudp_internal/leave_behind.h"

namespace hcudp::daemon {
namespace {

// Streams hold a thread each; a handful of resources and concurrent
// Allocate callers fit easily.
constexpr int kMaxThreads = 64;

}  // namespace

StatusOr<std::unique_ptr<PluginServer>> PluginServer::Start(std::unique_ptr<PluginService> service,
                                                            const std::string& socket_path) {
  std::unique_ptr<PluginServer> s(new PluginServer());
  s->service_ = std::move(service);
  ::unlink(socket_path.c_str());
  HCUDP_ASSIGN_OR_RETURN(s->socket_, SocketServer::Start(socket_path, {s->service_.get()},
                                                         kMaxThreads, /*publish_by_rename=*/false,
                                                         /*max_pollers=*/4));
  return s;
}

PluginServer::~PluginServer() { Stop(); }

bool PluginServer::Stop() {
  BeginStop();
  return FinishStop(std::chrono::steady_clock::now() + kStopBudget);
}

void PluginServer::BeginStop() {
  if (!socket_) return;
  // Streams end first, so that Shutdown has only unary calls to wait for.
  if (!stopping_) service_->Stop();
  stopping_ = true;
  socket_->BeginStop();
}

bool PluginServer::FinishStop(std::chrono::steady_clock::time_point deadline) {
  if (!socket_) return true;
  BeginStop();
  const bool clean = socket_->FinishStop(deadline);
  // A handler still running uses the service: it stays (the server does too).
  if (!clean) LeaveBehind(service_);
  return clean;
}

}  // namespace hcudp::daemon
