#include "plugin_manager.h"

#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "hcudp/plugin_socket.h"
#include "hcudp_internal/file_util.h"
#include "hcudp_internal/log.h"
#include "hcudp_internal/socket_dir.h"
#include "registrar.h"

namespace hcudp::daemon {
int PluginManager::RemoveStaleSockets(const std::string& dir) {
  return RemoveDeadSockets(
      dir, [](const std::string& name) { return ParsePluginSocketName(name).has_value(); },
      "stale socket");
}

PluginManager::PluginManager(const Options& options, NodeState& state,
                             const AllocationBuilder& builder, AllocateDelegate allocate_delegate,
                             std::function<bool()> delegate_ready, Clock& clock)
    : options_(options),
      state_(state),
      builder_(builder),
      allocate_delegate_(std::move(allocate_delegate)),
      delegate_ready_(std::move(delegate_ready)),
      dir_(options.device_plugin_path),
      kubelet_socket_(JoinPath(options.device_plugin_path, std::string(kKubeletSocket))),
      clock_(clock),
      loop_(clock, [this] { return Pass(); }) {}

PluginManager::~PluginManager() {
  Stop();
  if (inotify_fd_ >= 0) ::close(inotify_fd_);
}

void PluginManager::Wake() { loop_.Wake(); }

Status PluginManager::Start() {
  HCUDP_RETURN_IF_ERROR(PrepareSocketDir(dir_, "--device-plugin-path"));
  inotify_fd_ = ::inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
  if (inotify_fd_ < 0) PLOG(WARNING) << "inotify unavailable; relying on the 5 s backstop";
  int removed = RemoveStaleSockets(dir_);
  if (removed > 0) LOG(INFO) << "removed " << removed << " stale socket(s) in " << dir_;
  SyncEndpoints();
  for (const Endpoint& e : endpoints_) {
    if (!e.server && !e.path_too_long)
      return UnavailableError("cannot serve " + e.resource_name + " on " + e.socket_path);
  }
  started_ = true;
  Status polling = loop_.Start(inotify_fd_, [this] { return DrainInotify(); });
  if (!polling.ok()) LOG(WARNING) << polling.ToString() << "; relying on the 5 s backstop";
  return OkStatus();
}

bool PluginManager::Stop() {
  stopping_ = true;
  loop_.Stop();
  for (Endpoint& e : endpoints_) CancelAttempt(e);
  for (Endpoint& e : endpoints_) {
    if (e.attempt) {
      e.attempt->thread.join();
      e.attempt.reset();
    }
  }
  // Every server shuts down in parallel, under one deadline.
  for (Endpoint& e : endpoints_) {
    if (e.server) e.server->BeginStop();
  }
  // A bound on gRPC's shutdown, in real time (not a schedule of ours).
  const auto deadline = std::chrono::steady_clock::now() + PluginServer::kStopBudget;
  bool clean = true;
  for (Endpoint& e : endpoints_) {
    if (e.server) {
      clean = e.server->FinishStop(deadline) && clean;
      e.server.reset();
    }
  }
  return clean;
}

void PluginManager::OnStreamEnd(const std::string& resource) {
  {
    MutexLock lock(mu_);
    stream_ends_.emplace_back(resource, clock_.Now());
  }
  Wake();
}

Status PluginManager::Serve(Endpoint& e) {
  Status made = file_util::MakeDirs(dir_, 0750);
  if (!made.ok()) return UnavailableError(made.message());
  const std::string name = e.resource_name;
  auto service = std::make_unique<PluginService>(
      e.resource_name, e.kind, state_, builder_, options_.device_list_strategy,
      [this, name] { OnStreamEnd(name); }, allocate_delegate_, delegate_ready_);
  HCUDP_ASSIGN_OR_RETURN(e.server, PluginServer::Start(std::move(service), e.socket_path));
  ++e.serve_generation;
  VLOG(2) << "serving " << e.resource_name << " on " << e.socket_path;
  return OkStatus();
}

void PluginManager::SyncEndpoints() {
  auto snapshot = state_.Current();
  for (const Resource& r : snapshot->resources) {
    auto it = std::find_if(endpoints_.begin(), endpoints_.end(),
                           [&](const Endpoint& e) { return e.resource_name == r.name; });
    if (it != endpoints_.end()) continue;
    Endpoint e;
    e.resource_name = r.name;
    e.last_name = r.last_name;
    e.kind = r.kind;
    e.socket_path = JoinPath(dir_, PluginSocketName(r.last_name, InstanceId()));
    e.next_attempt = clock_.Now();
    if (e.socket_path.size() > kMaxUnixSocketPath) {
      e.path_too_long = true;
      LOG(ERROR) << "cannot serve " << r.name << ": its socket path " << e.socket_path << " is "
                 << e.socket_path.size() << " bytes, over the 107-byte limit of unix sockets "
                 << "(a shorter --device-plugin-path or naming policy fits)";
      endpoints_.push_back(std::move(e));
      continue;
    }
    Status st = Serve(e);
    if (!st.ok()) LOG(ERROR) << st.ToString();
    if (!started_ && e.server) {
      LOG(INFO) << "resource " << r.name << ": " << r.devices.size() << " devices on "
                << e.socket_path;
    } else if (e.server) {
      LOG(INFO) << "new resource " << r.name << ": " << r.devices.size() << " devices";
    }
    endpoints_.push_back(std::move(e));
  }
}

void PluginManager::StartAttempt(Endpoint& e, uint64_t kubelet_inode) {
  RegisterParams p;
  p.kubelet_socket = kubelet_socket_;
  p.endpoint = e.socket_path.substr(e.socket_path.find_last_of('/') + 1);
  p.resource_name = e.resource_name;
  p.preferred_allocation = OffersPreferredAllocation(e.kind);
  e.server->service().ExpectKubeletStream();
  e.attempt = std::make_unique<Attempt>();
  Attempt* a = e.attempt.get();
  a->serve_generation = e.serve_generation;
  a->kubelet_inode = kubelet_inode;
  a->started_at = clock_.Now();
  a->thread = std::thread([this, a, p] {
    a->result = RegisterWithKubelet(p, &a->canceller);
    a->done = true;
    Wake();
  });
}

void PluginManager::CancelAttempt(Endpoint& e) {
  if (!e.attempt) return;
  e.attempt->cancelled = true;
  e.attempt->canceller.Cancel();
}

void PluginManager::CollectAttempt(Endpoint& e) {
  if (!e.attempt || !e.attempt->done) return;
  e.attempt->thread.join();
  std::unique_ptr<Attempt> a = std::move(e.attempt);
  const auto now = clock_.Now();
  if (a->result.ok() && a->serve_generation == e.serve_generation) {
    LOG(INFO) << "registered " << e.resource_name << " with kubelet (endpoint "
              << e.socket_path.substr(e.socket_path.find_last_of('/') + 1) << ")";
    e.registered = true;
    e.registered_at = now;
    e.registered_kubelet_inode = a->kubelet_inode;
    e.backoff = std::chrono::milliseconds(0);
    return;
  }
  e.registered = false;
  if (a->result.ok()) {
    // The socket was served anew while kubelet dialled the old one.
    VLOG(1) << e.resource_name << ": registered an old socket; registering again";
    e.next_attempt = now;
    return;
  }
  if (stopping_) return;
  if (a->cancelled) {
    e.next_attempt = now;
    return;
  }
  e.backoff = e.backoff.count() == 0 ? kBackoffMin : std::min(e.backoff * 2, kBackoffMax);
  // From the attempt's start, not from when this thread noticed its end: a
  // failure collected late (the loop was asleep until the backstop) keeps
  // the schedule, and a slow failure has waited out part of its backoff.
  e.next_attempt = a->started_at + e.backoff;
  if (e.backoff <= kBackoffMin * 2 || e.backoff == kBackoffMax) {
    LOG(WARNING) << a->result.ToString() << "; retrying in " << e.backoff.count() << " ms";
  }
}

bool PluginManager::DrainInotify() {
  if (inotify_fd_ < 0) return false;
  alignas(inotify_event) char buf[4096];
  ssize_t len;
  bool created = false;
  bool lost = false;
  while ((len = ::read(inotify_fd_, buf, sizeof buf)) > 0) {
    for (char* p = buf; p < buf + len;) {
      auto* ev = reinterpret_cast<inotify_event*>(p);
      std::string name = ev->len > 0 ? ev->name : "";
      if (ev->mask & (IN_IGNORED | IN_DELETE_SELF)) lost = true;
      if ((ev->mask & (IN_CREATE | IN_MOVED_TO)) && name == kKubeletSocket) {
        LOG(INFO) << "kubelet.sock created: registering again";
        created = true;
      }
      p += sizeof(inotify_event) + ev->len;
    }
  }
  MutexLock lock(mu_);
  kubelet_created_ = kubelet_created_ || created;
  watch_lost_ = watch_lost_ || lost;
  return true;  // any change in the directory: reconcile
}

void PluginManager::Reconcile() {
  const auto now = clock_.Now();
  {
    MutexLock lock(mu_);
    if (watch_lost_) watch_wd_ = -1;
    force_register_ = force_register_ || kubelet_created_;
    watch_lost_ = kubelet_created_ = false;
  }
  if (inotify_fd_ >= 0 && watch_wd_ < 0) {
    watch_wd_ =
        ::inotify_add_watch(inotify_fd_, dir_.c_str(),
                            IN_CREATE | IN_DELETE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE_SELF);
  }
  SyncEndpoints();
  for (Endpoint& e : endpoints_) CollectAttempt(e);

  // Streams that ended and were not reopened within the grace period.
  {
    MutexLock lock(mu_);
    for (auto it = stream_ends_.begin(); it != stream_ends_.end();) {
      if (now < it->second + kStreamGrace) {
        ++it;
        continue;
      }
      for (Endpoint& e : endpoints_) {
        if (e.resource_name == it->first && e.server &&
            !e.server->service().kubelet_stream_open() && e.registered) {
          LOG(INFO) << e.resource_name << ": no ListAndWatch stream; registering again";
          e.registered = false;
          e.next_attempt = now;
        }
      }
      it = stream_ends_.erase(it);
    }
  }

  // Every endpoint needs a live server whose socket file is still there.
  for (Endpoint& e : endpoints_) {
    if (e.path_too_long) continue;
    if (e.server && FileInode(e.socket_path) == e.server->socket_inode()) continue;
    if (e.server) {
      LOG(INFO) << "socket " << e.socket_path << " was removed; serving again";
      CancelAttempt(e);  // it may be waiting for kubelet to dial the old socket
      e.server->Stop();
      e.server.reset();
    }
    Status st = Serve(e);
    if (!st.ok()) {
      LOG(ERROR) << st.ToString();
      continue;
    }
    e.registered = false;
    e.next_attempt = now;
  }

  const uint64_t kubelet_inode = FileInode(kubelet_socket_);
  if (kubelet_inode == 0) {
    if (!kubelet_missing_logged_) {
      LOG(INFO) << "waiting for kubelet: " << kubelet_socket_ << " does not exist yet";
      kubelet_missing_logged_ = true;
    }
    force_register_ = false;
    for (Endpoint& e : endpoints_) e.registered = false;
    return;
  }
  kubelet_missing_logged_ = false;
  for (Endpoint& e : endpoints_) {
    bool stale = e.registered && e.registered_kubelet_inode != kubelet_inode;
    // kubelet opens ListAndWatch right after Register; a registration
    // without a stream for a whole backstop period has been lost.
    bool streamless = e.registered && e.server && !e.server->service().kubelet_stream_open() &&
                      now - e.registered_at >= kBackstop;
    if (streamless) LOG(INFO) << e.resource_name << ": kubelet opened no stream; registering again";
    if (force_register_ || stale || streamless) {
      if (force_register_) CancelAttempt(e);  // it may be talking to the old kubelet
      e.registered = false;
      e.backoff = std::chrono::milliseconds(0);
      e.next_attempt = now;
    }
  }
  force_register_ = false;
  for (Endpoint& e : endpoints_) {
    if (stopping_) return;
    if (!e.registered && !e.attempt && e.server && now >= e.next_attempt) {
      StartAttempt(e, kubelet_inode);
    }
  }
}

Clock::TimePoint PluginManager::NextDeadline() const {
  Clock::TimePoint deadline = next_backstop_;
  for (const Endpoint& e : endpoints_) {
    if (!e.registered && !e.attempt && e.server && FileInode(kubelet_socket_) != 0) {
      deadline = std::min(deadline, e.next_attempt);
    }
  }
  return deadline;
}

std::vector<std::pair<std::string, bool>> PluginManager::Registrations() const {
  MutexLock lock(mu_);
  return registrations_;
}

Clock::TimePoint PluginManager::Pass() {
  Reconcile();
  std::vector<std::pair<std::string, bool>> view;
  for (const Endpoint& e : endpoints_) view.emplace_back(e.resource_name, e.registered);
  const auto now = clock_.Now();
  if (now >= next_backstop_) next_backstop_ = now + kBackstop;
  Clock::TimePoint deadline = std::min(NextDeadline(), now + kBackstop);
  MutexLock lock(mu_);
  registrations_ = std::move(view);
  for (const auto& [name, t] : stream_ends_) deadline = std::min(deadline, t + kStreamGrace);
  return deadline;
}

}  // namespace hcudp::daemon
