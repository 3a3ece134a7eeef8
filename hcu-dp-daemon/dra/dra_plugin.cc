#include "dra/dra_plugin.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <optional>
#include <set>
#include <vector>

#include "dra/dra_service.h"
#include "dra/dra_sockets.h"
#include "dra/health_broadcaster.h"
#include "dra/health_service.h"
#include "dra/registration_service.h"
#include "hcudp_internal/file_util.h"
#include "hcudp_internal/leave_behind.h"
#include "hcudp_internal/log.h"
#include "hcudp_internal/path_watcher.h"
#include "hcudp_internal/reconcile_loop.h"
#include "hcudp_internal/socket_dir.h"
#include "hcudp_internal/thread_annotations.h"
#include "plugin_server.h"
#include "socket_server.h"

namespace hcudp::daemon::dra {
namespace {

constexpr mode_t kDirMode = 0750;
// Synchronous handlers: Prepare/Unprepare calls (kubelet batches per pod).
constexpr int kServiceMaxThreads = 32;
// The registration service is a callback service: it takes no thread of
// this quota (which only bounds synchronous handlers).
constexpr int kRegistrationMaxThreads = 16;

bool IsDnsChar(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

// A DRA driver name is a DNS subdomain of at most 63 characters
// (ResourceSlice.spec.driver); it also names a directory and a file.
Status CheckDriverName(const std::string& name) {
  bool ok = !name.empty() && name.size() <= 63 && IsDnsChar(name.front()) && IsDnsChar(name.back());
  for (char c : name) ok = ok && (IsDnsChar(c) || c == '-' || c == '.');
  if (ok) return OkStatus();
  return InvalidArgumentError("--dra-driver-name: \"" + name +
                              "\" is not a DRA driver name (a lower-case DNS subdomain of at "
                              "most 63 characters, such as dra.hygon.com)");
}

// What the DRA server's handlers use besides the caller's handler: kept
// apart so that a server left behind by a hung handler can keep it.
struct Shared {
  Shared(DraHandler& handler, Clock& clock) : broadcaster(handler, clock) {}
  std::atomic<bool> stopping{false};
  HealthBroadcaster broadcaster;
};

// The services on one dra.sock server (a gRPC service binds to one server).
struct ServiceSet {
  ServiceSet(DraHandler& handler, Shared& shared)
      : v1(handler, shared.stopping),
        v1beta1(handler, shared.stopping),
        health_v1alpha1(shared.broadcaster),
        health_v1(shared.broadcaster) {}
  std::vector<grpc::Service*> All() { return {&v1, &v1beta1, &health_v1alpha1, &health_v1}; }

  DraPluginV1Service v1;
  DraPluginV1beta1Service v1beta1;
  HealthServiceV1alpha1 health_v1alpha1;
  HealthServiceV1 health_v1;
};

struct ServedDra {
  std::unique_ptr<ServiceSet> services;
  std::unique_ptr<SocketServer> server;
};

struct ServedRegistration {
  std::unique_ptr<RegistrationService> service;
  std::unique_ptr<SocketServer> server;
  uint64_t generation = 0;
};

// Stops `served`; a server left behind keeps its services (leaked).
bool StopServed(ServedDra& served) {
  bool clean = true;
  if (served.server) clean = served.server->Stop();
  if (!clean) LeaveBehind(served.services);
  served.server.reset();
  served.services.reset();
  return clean;
}

}  // namespace

class DraPlugin::Impl {
 public:
  Impl(DraPluginOptions options, DraHandler& handler, Clock& clock)
      : options_(std::move(options)),
        handler_(handler),
        clock_(clock),
        data_dir_(JoinPath(options_.plugins_dir, options_.driver_name)),
        dra_path_(JoinPath(data_dir_, std::string(kServiceSocketName))),
        reg_name_(RegistrationSocketName(options_.driver_name, options_.instance_id.empty()
                                                                   ? InstanceId()
                                                                   : options_.instance_id)),
        reg_path_(JoinPath(options_.registry_dir, reg_name_)),
        shared_(std::make_unique<Shared>(handler, clock)),
        loop_(clock, [this] { return Pass(); }) {}

  ~Impl() {
    Stop();
    loop_.Stop();
  }

  Status Start();
  bool Stop();
  void NotifyHealthChanged() {
    if (shared_) shared_->broadcaster.NotifyChanged();
  }
  const std::string& dra_path() const { return dra_path_; }
  const std::string& reg_path() const { return reg_path_; }
  bool registered() const {
    MutexLock lock(mu_);
    return registered_;
  }
  int registrations() const {
    MutexLock lock(mu_);
    return registrations_;
  }
  int health_streams() const { return shared_ ? shared_->broadcaster.active_streams() : 0; }
  int service_serves() const { return service_serves_.load(); }
  uint64_t passes() const { return passes_.load(); }

 private:
  struct Verdict {
    uint64_t generation;
    bool registered;
    std::string error;
  };

  Status ServeDra();
  Status ServeRegistration();
  void OnVerdict(uint64_t generation, bool registered, const std::string& error);
  void SetRegistered(bool registered, bool count);
  // One pass of the loop: Reconcile, then when the next must run.
  Clock::TimePoint Pass();
  void Reconcile();
  Clock::TimePoint NextDeadline() const;
  std::chrono::milliseconds GrowBackoff();

  const DraPluginOptions options_;
  DraHandler& handler_;
  Clock& clock_;
  const std::string data_dir_;
  const std::string dra_path_;
  const std::string reg_name_;
  const std::string reg_path_;
  std::unique_ptr<Shared> shared_;

  // Owned by the thread that called Start() until the manager thread runs,
  // then by the manager thread (and by Stop() after it has joined it).
  bool started_ = false;
  bool stopped_ = false;
  ServedDra dra_;
  std::vector<ServedDra> retired_;  // replaced dra.sock servers, stopped after a pass
  bool dra_replaced_logged_ = false;
  ServedRegistration reg_;
  uint64_t next_generation_ = 1;
  std::chrono::milliseconds backoff_{0};
  std::optional<Clock::TimePoint> retry_at_;       // re-create the registration socket then
  std::optional<Clock::TimePoint> unanswered_at_;  // kubelet silent until then: re-create
  std::chrono::milliseconds unanswered_period_{kUnansweredMin};
  Clock::TimePoint next_backstop_{};
  bool current_registered_ = false;  // the manager thread's copy of registered_
  // Other registration sockets of the driver seen in the last pass.
  std::set<std::string> siblings_;

  std::unique_ptr<PathWatcher> watcher_;  // read on the poller thread only

  std::atomic<int> service_serves_{0};  // dra.sock servers started
  std::atomic<uint64_t> passes_{0};     // reconcile passes begun

  // What other threads tell the manager thread; a leaf lock.
  mutable Mutex mu_;
  std::vector<Verdict> verdicts_ HCUDP_GUARDED_BY(mu_);
  bool registered_ HCUDP_GUARDED_BY(mu_) = false;
  int registrations_ HCUDP_GUARDED_BY(mu_) = 0;

  ReconcileLoop loop_;  // the manager thread; after what its pass uses
};

Status DraPlugin::Impl::Start() {
  if (started_) return FailedPreconditionError("the DRA plugin was already started");
  HCUDP_RETURN_IF_ERROR(CheckDriverName(options_.driver_name));
  if (options_.plugins_dir.empty()) return InvalidArgumentError("--kubelet-plugins-dir: empty");
  if (options_.registry_dir.empty()) {
    return InvalidArgumentError("--kubelet-registry-dir: empty");
  }
  // Both sockets are bound under a hidden name one byte longer.
  HCUDP_RETURN_IF_ERROR(
      CheckSocketPath(SocketServer::HiddenPath(dra_path_), "--kubelet-plugins-dir"));
  HCUDP_RETURN_IF_ERROR(
      CheckSocketPath(SocketServer::HiddenPath(reg_path_), "--kubelet-registry-dir"));
  HCUDP_RETURN_IF_ERROR(PrepareSocketDir(data_dir_, "--kubelet-plugins-dir"));
  HCUDP_RETURN_IF_ERROR(PrepareSocketDir(options_.registry_dir, "--kubelet-registry-dir"));
  // A crashed predecessor's sockets: its dra.sock is in our way, and its
  // registration socket holds our endpoint in kubelet.
  HCUDP_RETURN_IF_ERROR(ClearServiceSocketPath(dra_path_));
  RemoveDeadRegistrationSockets(options_.registry_dir, options_.driver_name, reg_name_);
  siblings_ = OtherRegistrationSockets(options_.registry_dir, options_.driver_name, reg_name_);

  // Watch before serving, so that no removal goes unseen.
  watcher_ =
      std::make_unique<PathWatcher>(std::vector<std::string>{options_.registry_dir, data_dir_});
  Status watching = watcher_->Open();
  if (!watching.ok()) LOG(WARNING) << watching.ToString() << "; relying on the 5 s backstop";

  started_ = true;
  shared_->broadcaster.Start();
  HCUDP_RETURN_IF_ERROR(ServeDra());  // serve first, then register
  HCUDP_RETURN_IF_ERROR(ServeRegistration());
  LOG(INFO) << "DRA driver " << options_.driver_name << ": serving " << dra_path_
            << ", registering through " << reg_path_;

  next_backstop_ = clock_.Now() + kBackstop;
  Status polling = loop_.Start(watcher_->fd(), [this] { return watcher_->ReadEvents(); });
  if (!polling.ok()) LOG(WARNING) << polling.ToString() << "; relying on the 5 s backstop";
  return OkStatus();
}

bool DraPlugin::Impl::Stop() {
  if (!started_ || stopped_) return true;
  stopped_ = true;
  loop_.Stop();
  shared_->stopping = true;
  // The registration socket goes first: kubelet deregisters the endpoint.
  if (reg_.server) reg_.server->Stop();
  reg_ = ServedRegistration();
  shared_->broadcaster.Stop();  // every health stream ends now
  bool clean = StopServed(dra_);
  for (ServedDra& old : retired_) clean = StopServed(old) && clean;
  retired_.clear();
  if (!clean) {
    LOG(WARNING) << "DRA plugin stopped with a call still running";
    LeaveBehind(shared_);  // the call left behind still uses it
  }
  SetRegistered(false, false);
  return clean;
}

Status DraPlugin::Impl::ServeDra() {
  Status made = file_util::MakeDirs(data_dir_, kDirMode);
  if (!made.ok()) return UnavailableError(made.message());
  auto services = std::make_unique<ServiceSet>(handler_, *shared_);
  // Bound under a hidden name and renamed into place: gRPC unlinks the path
  // it bound when it shuts down, so a server retired after dra.sock was
  // served anew must not have bound dra.sock itself.
  HCUDP_ASSIGN_OR_RETURN(std::unique_ptr<SocketServer> server,
                         SocketServer::Start(dra_path_, services->All(), kServiceMaxThreads,
                                             /*publish_by_rename=*/true));
  if (dra_.server) retired_.push_back(std::move(dra_));
  dra_.services = std::move(services);
  dra_.server = std::move(server);
  ++service_serves_;
  VLOG(1) << "serving DRAPlugin v1, v1beta1 and DRAResourceHealth on " << dra_path_;
  return OkStatus();
}

Status DraPlugin::Impl::ServeRegistration() {
  if (reg_.server) reg_.server->Stop();  // removes the old socket: kubelet deregisters it
  reg_ = ServedRegistration();
  SetRegistered(false, false);
  Status made = file_util::MakeDirs(options_.registry_dir, kDirMode);
  if (!made.ok()) return UnavailableError(made.message());
  const uint64_t generation = next_generation_++;
  auto service = std::make_unique<RegistrationService>(
      MakePluginInfo(options_.driver_name, dra_path_),
      [this, generation](bool registered, const std::string& error) {
        OnVerdict(generation, registered, error);
      });
  HCUDP_ASSIGN_OR_RETURN(std::unique_ptr<SocketServer> server,
                         SocketServer::Start(reg_path_, {service.get()}, kRegistrationMaxThreads,
                                             /*publish_by_rename=*/true));
  reg_.service = std::move(service);
  reg_.server = std::move(server);
  reg_.generation = generation;
  retry_at_.reset();
  unanswered_at_ = clock_.Now() + unanswered_period_;
  VLOG(1) << "serving the registration socket " << reg_path_;
  return OkStatus();
}

void DraPlugin::Impl::OnVerdict(uint64_t generation, bool registered, const std::string& error) {
  {
    MutexLock lock(mu_);
    verdicts_.push_back(Verdict{generation, registered, error});
  }
  loop_.Wake();
}

void DraPlugin::Impl::SetRegistered(bool registered, bool count) {
  current_registered_ = registered;
  MutexLock lock(mu_);
  registered_ = registered;
  if (count) ++registrations_;
}

std::chrono::milliseconds DraPlugin::Impl::GrowBackoff() {
  backoff_ = backoff_.count() == 0 ? kBackoffMin : std::min(backoff_ * 2, kBackoffMax);
  return backoff_;
}

void DraPlugin::Impl::Reconcile() {
  ++passes_;
  const auto now = clock_.Now();
  if (now >= next_backstop_) next_backstop_ = now + kBackstop;
  std::vector<Verdict> verdicts;
  {
    MutexLock lock(mu_);
    verdicts.swap(verdicts_);
  }
  int new_registrations = 0;
  for (const Verdict& v : verdicts) {
    if (v.generation != reg_.generation) {
      VLOG(1) << "ignoring kubelet's verdict on an earlier registration socket";
      continue;
    }
    if (v.registered) {
      LOG(INFO) << "registered with kubelet as DRA driver " << options_.driver_name << " (endpoint "
                << dra_path_ << ")";
      SetRegistered(true, true);
      ++new_registrations;
      backoff_ = std::chrono::milliseconds(0);
      retry_at_.reset();
      unanswered_at_.reset();
      unanswered_period_ = kUnansweredMin;
      continue;
    }
    SetRegistered(false, false);
    retry_at_ = now + GrowBackoff();
    LOG(WARNING) << "kubelet refused the registration of " << options_.driver_name << ": "
                 << v.error << "; registering again in " << backoff_.count() << " ms";
    // kubelet refuses an endpoint it still holds: a crashed predecessor's
    // registration socket may have been judged live or unclear at start.
    if (RemoveDeadRegistrationSockets(options_.registry_dir, options_.driver_name, reg_name_) > 0) {
      retry_at_ = now;
    }
  }

  // dra.sock first: kubelet dials it as soon as it registers us.
  const uint64_t dra_inode = FileInode(dra_path_);
  if (!dra_.server || dra_inode == 0) {
    if (dra_.server) LOG(INFO) << dra_path_ << " was removed; serving it again";
    Status st = ServeDra();
    if (!st.ok()) LOG(ERROR) << "cannot serve " << dra_path_ << ": " << st.ToString();
  } else if (dra_inode != dra_.server->socket_inode()) {
    if (!dra_replaced_logged_) {
      LOG(ERROR) << dra_path_ << " was replaced by another process's socket; not serving over it";
    }
    dra_replaced_logged_ = true;
  } else {
    dra_replaced_logged_ = false;
  }

  // kubelet deregisters by driver and endpoint: when another registration
  // socket of the driver with our endpoint (a predecessor's) goes, kubelet
  // may drop our registration with it. Registering again is harmless.
  std::set<std::string> siblings =
      OtherRegistrationSockets(options_.registry_dir, options_.driver_name, reg_name_);
  const bool sibling_gone = std::any_of(siblings_.begin(), siblings_.end(), [&](const auto& name) {
    return siblings.count(name) == 0;
  });
  siblings_ = std::move(siblings);

  bool reserve = false;
  if (!reg_.server || FileInode(reg_path_) != reg_.server->socket_inode()) {
    if (reg_.server) LOG(INFO) << reg_path_ << " was removed; registering again";
    reserve = true;
  } else if (sibling_gone) {
    LOG(INFO) << "another registration socket of " << options_.driver_name
              << " went away; registering again (kubelet may have dropped our endpoint with it)";
    reserve = true;
  } else if (retry_at_ && now >= *retry_at_) {
    LOG(INFO) << "re-creating " << reg_path_ << " so that kubelet registers it again";
    reserve = true;
  } else if (!current_registered_ && unanswered_at_ && now >= *unanswered_at_) {
    LOG(INFO) << "kubelet has not registered " << reg_path_ << " within "
              << unanswered_period_.count() << " ms; re-creating it";
    unanswered_period_ = std::min(unanswered_period_ * 2, kUnansweredMax);
    reserve = true;
  }
  if (reserve) {
    Status st = ServeRegistration();
    if (!st.ok()) {
      retry_at_ = now + GrowBackoff();
      LOG(ERROR) << "cannot serve " << reg_path_ << ": " << st.ToString() << "; retrying in "
                 << backoff_.count() << " ms";
    }
  }

  for (ServedDra& old : retired_) StopServed(old);
  retired_.clear();
  for (int i = 0; i < new_registrations; ++i) {
    if (options_.on_registered) options_.on_registered();
  }
}

Clock::TimePoint DraPlugin::Impl::NextDeadline() const {
  Clock::TimePoint deadline = next_backstop_;
  if (retry_at_) deadline = std::min(deadline, *retry_at_);
  if (unanswered_at_ && !current_registered_) deadline = std::min(deadline, *unanswered_at_);
  return deadline;
}

Clock::TimePoint DraPlugin::Impl::Pass() {
  Reconcile();
  return NextDeadline();
}

DraPluginOptions DraPluginOptionsFrom(const Options& options) {
  DraPluginOptions o;
  o.driver_name = options.dra_driver_name;
  o.plugins_dir = options.kubelet_plugins_dir;
  o.registry_dir = options.kubelet_registry_dir;
  return o;
}

DraPlugin::DraPlugin(DraPluginOptions options, DraHandler& handler, Clock& clock)
    : impl_(std::make_unique<Impl>(std::move(options), handler, clock)) {}

DraPlugin::~DraPlugin() = default;

Status DraPlugin::Start() { return impl_->Start(); }
bool DraPlugin::Stop() { return impl_->Stop(); }
void DraPlugin::NotifyHealthChanged() { impl_->NotifyHealthChanged(); }
std::string DraPlugin::service_socket_path() const { return impl_->dra_path(); }
std::string DraPlugin::registration_socket_path() const { return impl_->reg_path(); }
bool DraPlugin::registered() const { return impl_->registered(); }
int DraPlugin::registrations() const { return impl_->registrations(); }
int DraPlugin::health_streams() const { return impl_->health_streams(); }
int DraPlugin::service_serves() const { return impl_->service_serves(); }
uint64_t DraPlugin::reconcile_passes() const { return impl_->passes(); }

}  // namespace hcudp::daemon::dra
