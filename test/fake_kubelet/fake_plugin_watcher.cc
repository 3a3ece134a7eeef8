#include "fake_kubelet/fake_plugin_watcher.h"

#include <dirent.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "dra_v1beta1.grpc.pb.h"
#include "fake_kubelet/fake_plugin_watcher_plugin.h"
#include "pluginregistration_v1.grpc.pb.h"
#include "testing/testutil.h"

namespace hcudp::testing {
namespace {

namespace fs = std::filesystem;
namespace drav1beta1 = ::k8s::io::kubelet::pkg::apis::dra::v1beta1;
using SteadyClock = std::chrono::steady_clock;

// Go's %q of a []string: ["a" "b"].
std::string QuoteList(const std::vector<std::string>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) out += (i ? " \"" : "\"") + items[i] + "\"";
  return out + "]";
}

bool IsSocket(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode);
}

bool IsDir(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

constexpr uint32_t kWatchMask = IN_CREATE | IN_MOVED_TO | IN_DELETE;

}  // namespace

struct FakePluginWatcher::Operation {
  std::thread thread;
  std::atomic<bool> done{false};
};

FakePluginWatcher::FakePluginWatcher(Config config) : config_(std::move(config)) {}

FakePluginWatcher::~FakePluginWatcher() { Stop(); }

bool FakePluginWatcher::Stopping() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stopping_;
}

std::string FakePluginWatcher::Start() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (running_) return "already running";
  }
  // kubelet's DRA manager wipes the node's ResourceSlices as it starts.
  if (config_.on_start) config_.on_start();
  std::error_code ec;
  fs::create_directories(config_.registry_dir, ec);  // kubelet: MkdirAll(0755)
  if (ec) return "cannot create " + config_.registry_dir + ": " + ec.message();
  inotify_fd_ = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  stop_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (inotify_fd_ < 0 || stop_fd_ < 0) return std::string("inotify: ") + std::strerror(errno);
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = false;
    running_ = true;
    AddWatch(config_.registry_dir);
    event_ = true;
  }
  reader_ = std::thread([this] {
    for (;;) {
      pollfd fds[2] = {{stop_fd_, POLLIN, 0}, {inotify_fd_, POLLIN, 0}};
      int n = ::poll(fds, 2, -1);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 || fds[0].revents != 0) return;
      if (fds[1].revents & POLLIN) ReadEvents();
    }
  });
  reconciler_ = std::thread([this] { RunReconciler(); });
  return "";
}

void FakePluginWatcher::AddWatch(const std::string& dir) {
  int wd = ::inotify_add_watch(inotify_fd_, dir.c_str(), kWatchMask);
  if (wd >= 0) watches_[wd] = dir;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    const std::string path = e.path().string();
    if (IsDir(path)) {
      AddWatch(path);
    } else if (IsSocket(path) && e.path().filename().string()[0] != '.') {
      desired_[path] = next_timestamp_++;
    }
  }
}

void FakePluginWatcher::ReadEvents() {
  alignas(inotify_event) char buf[8192];
  ssize_t len;
  while ((len = ::read(inotify_fd_, buf, sizeof buf)) > 0) {
    std::lock_guard<std::mutex> lock(mu_);
    for (char* p = buf; p < buf + len;) {
      const auto* ev = reinterpret_cast<const inotify_event*>(p);
      p += sizeof(inotify_event) + ev->len;
      if (ev->mask & IN_IGNORED) {
        watches_.erase(ev->wd);  // the directory went away: not watched again
        continue;
      }
      auto it = watches_.find(ev->wd);
      if (it == watches_.end() || ev->len == 0) continue;
      const std::string name = ev->name;
      const std::string path = it->second + "/" + name;
      if (ev->mask & (IN_CREATE | IN_MOVED_TO)) {
        if (IsDir(path)) {
          AddWatch(path);
        } else if (name[0] != '.' && IsSocket(path)) {
          desired_[path] = next_timestamp_++;  // new or re-created: a new timestamp
        }
      } else if (ev->mask & IN_DELETE) {
        desired_.erase(path);
      }
      event_ = true;
    }
  }
  wake_.notify_all();
}

void FakePluginWatcher::RunReconciler() {
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      wake_.wait_for(lock, config_.reconcile_period, [this] { return stopping_ || event_; });
      if (stopping_) return;
      event_ = false;
    }
    Reconcile();
  }
}

void FakePluginWatcher::Reconcile() {
  std::vector<std::shared_ptr<Plugin>> teardown;
  {
    std::lock_guard<std::mutex> lock(mu_);
    // Unregistrations first: sockets gone or re-created.
    for (auto it = actual_.begin(); it != actual_.end();) {
      auto d = desired_.find(it->first);
      if (d != desired_.end() && d->second == it->second.timestamp) {
        ++it;
        continue;
      }
      // DeRegisterPlugin(name, endpoint): the driver's plugin with that
      // endpoint goes, whichever socket registered it.
      auto s = store_.find(it->second.driver);
      if (s != store_.end()) {
        auto& list = s->second;
        auto p = std::find_if(list.begin(), list.end(), [&](const std::shared_ptr<Plugin>& x) {
          return x->endpoint == it->second.endpoint;
        });
        if (p != list.end()) {
          teardown.push_back(*p);
          list.erase(p);
        }
        if (list.empty()) store_.erase(s);
      }
      it = actual_.erase(it);
    }
    const auto now = SteadyClock::now();
    for (const auto& [path, timestamp] : desired_) {
      auto a = actual_.find(path);
      if (a != actual_.end() && a->second.timestamp == timestamp) continue;
      if (in_flight_.count(path) != 0) continue;
      auto b = backoff_.find(path);
      if (b != backoff_.end() && now < b->second.first) continue;
      in_flight_.insert(path);
      auto op = std::make_unique<Operation>();
      Operation* raw = op.get();
      op->thread = std::thread([this, raw, path = path, timestamp = timestamp] {
        Register(path, timestamp);
        raw->done = true;
      });
      operations_.push_back(std::move(op));
    }
    for (auto it = operations_.begin(); it != operations_.end();) {
      if (!(*it)->done) {
        ++it;
        continue;
      }
      (*it)->thread.join();
      it = operations_.erase(it);
    }
  }
  TearDown(std::move(teardown));
  changed_.notify_all();
}

void FakePluginWatcher::Register(const std::string& path, uint64_t timestamp) {
  RegistrationAttempt attempt;
  attempt.socket_path = path;
  auto finish = [&](bool backoff) {
    std::lock_guard<std::mutex> lock(mu_);
    in_flight_.erase(path);
    if (backoff) {
      auto& b = backoff_[path];
      b.second = b.second.count() == 0 ? config_.retry_backoff : b.second * 2;
      b.first = SteadyClock::now() + b.second;
    } else {
      backoff_.erase(path);
    }
    state_.attempts.push_back(attempt);
    if (attempt.registered) state_.registrations[attempt.name]++;
    changed_.notify_all();
  };

  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  auto channel =
      grpc::CreateCustomChannel("unix:" + path, grpc::InsecureChannelCredentials(), args);
  const auto dial_deadline = SteadyClock::now() + config_.dial_timeout;
  while (!channel->WaitForConnected(GrpcDeadline(std::chrono::milliseconds(50)))) {
    if (Stopping()) return finish(false);
    if (SteadyClock::now() >= dial_deadline) {
      attempt.error = "RegisterPlugin error -- dial failed at socket " + path +
                      ", err: context deadline exceeded";
      return finish(true);
    }
  }
  auto registration = pluginregistration::Registration::NewStub(channel);
  pluginregistration::PluginInfo info;
  {
    grpc::ClientContext context;
    context.set_deadline(GrpcDeadline(config_.get_info_timeout));
    grpc::Status s = registration->GetInfo(&context, pluginregistration::InfoRequest(), &info);
    if (!s.ok()) {
      attempt.error =
          "RegisterPlugin error -- failed to get plugin info using RPC GetInfo at socket " + path +
          ", err: " + s.error_message();
      return finish(true);
    }
  }
  attempt.type = info.type();
  attempt.name = info.name();
  attempt.endpoint = info.endpoint().empty() ? path : info.endpoint();
  attempt.supported_versions.assign(info.supported_versions().begin(),
                                    info.supported_versions().end());
  auto notify = [&](bool registered, const std::string& error) {
    pluginregistration::RegistrationStatus status;
    status.set_plugin_registered(registered);
    status.set_error(error);
    pluginregistration::RegistrationStatusResponse response;
    grpc::ClientContext context;
    context.set_deadline(GrpcDeadline(config_.notify_timeout));
    grpc::Status s = registration->NotifyRegistrationStatus(&context, status, &response);
    attempt.notified = s.ok();
    if (!s.ok() && !registered) {
      attempt.error = "RegisterPlugin error -- failed to send error at socket " + path +
                      ", err: " + error + ": " + s.error_message();
    }
    return s;
  };

  if (info.type() != "DRAPlugin") {
    attempt.error =
        "RegisterPlugin error -- no handler registered for plugin type: " + info.type() +
        " at socket " + path;
    const std::string error = attempt.error;
    notify(false, error);
    return finish(true);
  }
  std::string invalid;
  if (attempt.supported_versions.empty()) {
    invalid = "empty list of supported gRPC services (aka supported versions)";
  } else {
    for (const std::string& s : attempt.supported_versions) {
      if (std::find(config_.known_services.begin(), config_.known_services.end(), s) !=
          config_.known_services.end()) {
        attempt.chosen_service = s;
        break;
      }
    }
    if (attempt.chosen_service.empty()) {
      invalid = "none of services supported by the plugin (" +
                QuoteList(attempt.supported_versions) + ") are supported by the kubelet (" +
                QuoteList(config_.known_services) + ")";
    }
  }
  if (!invalid.empty()) {
    attempt.error =
        "RegisterPlugin error -- plugin validation failed with err: invalid supported "
        "gRPC versions of DRA driver plugin " +
        attempt.name + " at endpoint " + attempt.endpoint + ": " + invalid;
    notify(false, attempt.error);
    return finish(true);
  }
  auto advertised = [&](const std::string& s) {
    return std::find(attempt.supported_versions.begin(), attempt.supported_versions.end(), s) !=
           attempt.supported_versions.end();
  };
  std::string health;
  switch (config_.health_mode) {
    case HealthMode::kOff:
      break;
    case HealthMode::kV1alpha1ForEveryone:
      health = "v1alpha1.DRAResourceHealth";
      break;
    case HealthMode::kAdvertised:
      if (advertised("v1.DRAResourceHealth")) {
        health = "v1.DRAResourceHealth";
      } else if (advertised("v1alpha1.DRAResourceHealth")) {
        health = "v1alpha1.DRAResourceHealth";
      }
      break;
  }

  std::shared_ptr<Plugin> plugin;
  std::string conflict;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) {
      in_flight_.erase(path);
      return;
    }
    // Into the actual state before the handler, as kubelet does: a refused
    // plugin stays there until its socket changes.
    actual_[path] = Actual{timestamp, attempt.name, attempt.endpoint};
    for (const auto& p : store_[attempt.name]) {
      if (p->endpoint == attempt.endpoint) {
        conflict = "endpoint " + attempt.endpoint + " already registered for DRA driver plugin " +
                   attempt.name;
      }
    }
    if (conflict.empty()) {
      plugin = std::make_shared<Plugin>();
      plugin->driver = attempt.name;
      plugin->socket_path = path;
      plugin->endpoint = attempt.endpoint;
      plugin->chosen_service = attempt.chosen_service;
      plugin->health_service = health;
      grpc::ChannelArguments plugin_args;
      plugin_args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
      plugin_args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
      plugin_args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 100);
      plugin_args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
      plugin->channel = grpc::CreateCustomChannel("unix:" + attempt.endpoint,
                                                  grpc::InsecureChannelCredentials(), plugin_args);
      plugin->channel->GetState(/*try_to_connect=*/true);  // kubelet: conn.Connect()
      plugin->v1 = drav1::DRAPlugin::NewStub(plugin->channel);
      plugin->v1beta1 = drav1beta1::DRAPlugin::NewStub(plugin->channel);
      store_[attempt.name].push_back(plugin);
    }
  }
  if (!conflict.empty()) {
    attempt.error = "RegisterPlugin error -- plugin registration failed with err: " + conflict;
    attempt.chosen_service.clear();
    notify(false, attempt.error);
    return finish(false);
  }
  grpc::Status notified = notify(true, "");
  attempt.registered = true;
  if (!notified.ok()) {
    attempt.error = "RegisterPlugin error -- failed to send registration status at socket " + path +
                    ", err: " + notified.error_message();
  }
  finish(false);
  if (!health.empty()) StartHealth(plugin);
}

void FakePluginWatcher::TearDown(std::vector<std::shared_ptr<Plugin>> plugins) {
  for (auto& p : plugins) {
    std::lock_guard<std::mutex> lock(p->mu);
    p->closed = true;
    if (p->health_ctx != nullptr) p->health_ctx->TryCancel();
    p->cv.notify_all();
  }
  for (auto& p : plugins) {
    if (p->health.joinable()) p->health.join();
  }
}

void FakePluginWatcher::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!running_) return;
    running_ = false;
    stopping_ = true;
  }
  uint64_t one = 1;
  if (::write(stop_fd_, &one, sizeof one) < 0) {
    // The reader then ends at its next event; Stop still joins it below.
  }
  wake_.notify_all();
  if (reader_.joinable()) reader_.join();
  if (reconciler_.joinable()) reconciler_.join();
  std::list<std::unique_ptr<Operation>> operations;
  {
    std::lock_guard<std::mutex> lock(mu_);
    operations.swap(operations_);
  }
  for (auto& op : operations) op->thread.join();
  std::vector<std::shared_ptr<Plugin>> plugins;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [driver, list] : store_) plugins.insert(plugins.end(), list.begin(), list.end());
    store_.clear();
    actual_.clear();
    desired_.clear();
    in_flight_.clear();
    backoff_.clear();
    watches_.clear();
  }
  TearDown(std::move(plugins));
  ::close(inotify_fd_);
  ::close(stop_fd_);
  inotify_fd_ = stop_fd_ = -1;
  changed_.notify_all();
}

std::string FakePluginWatcher::Restart(std::chrono::milliseconds down_time) {
  Stop();
  {
    std::lock_guard<std::mutex> lock(mu_);
    state_.restarts++;
  }
  if (config_.on_restart) config_.on_restart();
  std::this_thread::sleep_for(down_time);
  return Start();
}

WatcherSnapshot FakePluginWatcher::State() const {
  std::lock_guard<std::mutex> lock(mu_);
  WatcherSnapshot snapshot = state_;
  for (const auto& [driver, list] : store_) {
    for (const auto& p : list) {
      snapshot.plugins[driver].push_back(
          RegisteredPlugin{p->socket_path, p->endpoint, p->chosen_service, p->health_service});
    }
  }
  return snapshot;
}

std::optional<WatcherSnapshot> FakePluginWatcher::WaitFor(
    const std::function<bool(const WatcherSnapshot&)>& predicate,
    std::chrono::milliseconds timeout) const {
  const auto deadline = SteadyClock::now() + timeout;
  for (;;) {
    WatcherSnapshot snapshot = State();
    if (predicate(snapshot)) return snapshot;
    std::unique_lock<std::mutex> lock(mu_);
    // Woken by every change; the short bound covers changes made between
    // State() and this wait.
    if (changed_.wait_until(
            lock, std::min(deadline, SteadyClock::now() + std::chrono::milliseconds(20))) ==
            std::cv_status::timeout &&
        SteadyClock::now() >= deadline) {
      lock.unlock();
      snapshot = State();
      if (predicate(snapshot)) return snapshot;
      return std::nullopt;
    }
  }
}

std::optional<WatcherSnapshot> FakePluginWatcher::WaitForRegistrations(
    const std::string& driver, int count, std::chrono::milliseconds timeout) const {
  return WaitFor(
      [&](const WatcherSnapshot& s) {
        auto it = s.registrations.find(driver);
        return it != s.registrations.end() && it->second >= count && s.plugins.count(driver) != 0;
      },
      timeout);
}

}  // namespace hcudp::testing
