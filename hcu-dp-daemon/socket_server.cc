#include "socket_server.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "hcudp_internal/leave_behind.h"
#include "hcudp_internal/log.h"

namespace hcudp::daemon {

uint64_t FileInode(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return 0;
  return static_cast<uint64_t>(st.st_ino);
}

std::string SocketServer::HiddenPath(const std::string& socket_path) {
  const size_t slash = socket_path.find_last_of('/');
  if (slash == std::string::npos) return "." + socket_path;
  return socket_path.substr(0, slash + 1) + "." + socket_path.substr(slash + 1);
}

StatusOr<std::unique_ptr<SocketServer>> SocketServer::Start(
    const std::string& socket_path, const std::vector<grpc::Service*>& services, int max_threads,
    bool publish_by_rename, int max_pollers) {
  std::unique_ptr<SocketServer> s(new SocketServer());
  s->socket_path_ = socket_path;
  const std::string bind_path = publish_by_rename ? HiddenPath(socket_path) : socket_path;
  grpc::ResourceQuota quota("hcu-dp-socket");
  quota.SetMaxThreads(max_threads);
  grpc::ServerBuilder builder;
  builder.SetResourceQuota(quota);
  builder.SetMaxReceiveMessageSize(kMaxMessageBytes);
  builder.SetMaxSendMessageSize(kMaxMessageBytes);
  builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::MIN_POLLERS, 1);
  builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::MAX_POLLERS, max_pollers);
  int port = 0;
  builder.AddListeningPort("unix:" + bind_path, grpc::InsecureServerCredentials(), &port);
  for (grpc::Service* service : services) builder.RegisterService(service);
  s->server_ = builder.BuildAndStart();
  if (!s->server_) {
    return UnavailableError("cannot serve on " + bind_path +
                            " (directory missing, not writable, or path too long)");
  }
  // Taken before the rename (which keeps it): once the socket is in place a
  // client may use it and someone remove it at once, before a lookup of
  // socket_path here; the owner would then never see it go (inode 0 == 0).
  s->inode_ = FileInode(bind_path);
  if (publish_by_rename && ::rename(bind_path.c_str(), socket_path.c_str()) != 0) {
    const int err = errno;
    s->socket_path_ = bind_path;  // Stop() removes it
    return UnavailableError("cannot move " + bind_path + " to " + socket_path + ": " +
                            std::strerror(err));
  }
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
    LeaveBehind(server_);
  }
  // Never remove a file someone else created at the same path since.
  if (inode_ != 0 && FileInode(socket_path_) == inode_) ::unlink(socket_path_.c_str());
  inode_ = 0;
  return clean;
}

}  // namespace hcudp::daemon
