#include "plugin_server.h"

#include <glog/logging.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>

#include "hcudp_internal/leave_behind.h"

namespace hcudp::daemon {
namespace {

// Streams hold a thread each; a handful of resources and concurrent
// Allocate callers fit easily.
constexpr int kMaxThreads = 64;

}  // namespace

uint64_t FileInode(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return 0;
  return static_cast<uint64_t>(st.st_ino);
}

StatusOr<std::unique_ptr<PluginServer>> PluginServer::Start(std::unique_ptr<PluginService> service,
                                                            const std::string& socket_path) {
  std::unique_ptr<PluginServer> s(new PluginServer());
  s->service_ = std::move(service);
  s->socket_path_ = socket_path;
  ::unlink(socket_path.c_str());
  grpc::ResourceQuota quota("hcu-dp-plugin");
  quota.SetMaxThreads(kMaxThreads);
  grpc::ServerBuilder builder;
  builder.SetResourceQuota(quota);
  builder.SetMaxReceiveMessageSize(kMaxMessageBytes);
  builder.SetMaxSendMessageSize(kMaxMessageBytes);
  builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::MIN_POLLERS, 1);
  builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::MAX_POLLERS, 4);
  int port = 0;
  builder.AddListeningPort("unix:" + socket_path, grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(s->service_.get());
  s->server_ = builder.BuildAndStart();
  if (!s->server_) {
    return UnavailableError("cannot serve on " + socket_path +
                            " (directory missing, not writable, or path too long)");
  }
  s->inode_ = FileInode(socket_path);
  return s;
}

PluginServer::~PluginServer() { Stop(); }

bool PluginServer::Stop() {
  BeginStop();
  return FinishStop(std::chrono::steady_clock::now() + kStopBudget);
}

void PluginServer::BeginStop() {
  if (!server_ || shutdown_.joinable()) return;
  service_->Stop();
  // Shutdown cancels the calls still running at its deadline, but then waits
  // for their handlers to return: on its own thread, so that a handler that
  // never returns cannot hold the caller.
  shut_down_ = std::make_shared<std::promise<void>>();
  shut_down_future_ = shut_down_->get_future();
  grpc::Server* server = server_.get();
  shutdown_ = std::thread([server, done = shut_down_] {
    server->Shutdown(std::chrono::system_clock::now() + kShutdownGrace);
    done->set_value();
  });
}

bool PluginServer::FinishStop(std::chrono::steady_clock::time_point deadline) {
  if (!server_) return true;
  BeginStop();
  bool clean = shut_down_future_.wait_until(deadline) == std::future_status::ready;
  if (clean) {
    shutdown_.join();
    server_->Wait();
    server_.reset();
  } else {
    LOG(WARNING) << socket_path_ << ": a call is still running "
                 << std::chrono::duration_cast<std::chrono::milliseconds>(kStopBudget).count()
                 << " ms after the stop began; not waiting for it";
    // The handler still uses the server and the service: both stay.
    shutdown_.detach();
    LeaveBehind(server_);
    LeaveBehind(service_);
  }
  // gRPC may already have unlinked it; never remove a file someone else
  // created at the same path since.
  if (inode_ != 0 && FileInode(socket_path_) == inode_) ::unlink(socket_path_.c_str());
  inode_ = 0;
  return clean;
}

}  // namespace hcudp::daemon
