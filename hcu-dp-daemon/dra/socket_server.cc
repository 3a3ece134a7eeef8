#include "dra/socket_server.h"

#include <glog/logging.h>
#include <unistd.h>

#include "plugin_server.h"

namespace hcudp::daemon::dra {

StatusOr<std::unique_ptr<SocketServer>> SocketServer::Start(
    const std::string& socket_path, const std::vector<grpc::Service*>& services, int max_threads) {
  std::unique_ptr<SocketServer> s(new SocketServer());
  s->socket_path_ = socket_path;
  grpc::ResourceQuota quota("hcu-dp-dra");
  quota.SetMaxThreads(max_threads);
  grpc::ServerBuilder builder;
  builder.SetResourceQuota(quota);
  builder.SetMaxReceiveMessageSize(kMaxMessageBytes);
  builder.SetMaxSendMessageSize(kMaxMessageBytes);
  builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::MIN_POLLERS, 1);
  builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::MAX_POLLERS, 2);
  int port = 0;
  builder.AddListeningPort("unix:" + socket_path, grpc::InsecureServerCredentials(), &port);
  for (grpc::Service* service : services) builder.RegisterService(service);
  s->server_ = builder.BuildAndStart();
  if (!s->server_) {
    return UnavailableError("cannot serve on " + socket_path +
                            " (directory missing or not writable?)");
  }
  s->inode_ = FileInode(socket_path);
  return s;
}

SocketServer::~SocketServer() { Stop(); }

bool SocketServer::Stop() {
  BeginStop();
  return FinishStop(std::chrono::steady_clock::now() + kStopBudget);
}

void SocketServer::BeginStop() {
  if (!server_ || shutdown_.joinable()) return;
  shut_down_ = std::make_shared<std::promise<void>>();
  shut_down_future_ = shut_down_->get_future();
  grpc::Server* server = server_.get();
  // Shutdown waits for running handlers: on its own thread, so a handler
  // that never returns cannot hold the caller.
  shutdown_ = std::thread([server, done = shut_down_] {
    server->Shutdown(std::chrono::system_clock::now() + kShutdownGrace);
    done->set_value();
  });
}

bool SocketServer::FinishStop(std::chrono::steady_clock::time_point deadline) {
  if (!server_) return true;
  BeginStop();
  const bool clean = shut_down_future_.wait_until(deadline) == std::future_status::ready;
  if (clean) {
    shutdown_.join();
    server_->Wait();
    server_.reset();
  } else {
    LOG(WARNING) << socket_path_ << ": a call is still running after the stop budget; "
                 << "not waiting for it";
    shutdown_.detach();
    (void)server_.release();
  }
  // Never remove a file someone else created at the same path since.
  if (inode_ != 0 && FileInode(socket_path_) == inode_) ::unlink(socket_path_.c_str());
  inode_ = 0;
  return clean;
}

}  // namespace hcudp::daemon::dra
