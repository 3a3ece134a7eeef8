// A fake kubelet plugin manager for DRA drivers, for tests: it watches the
// registry directory, registers the plugins whose sockets appear there, and
// then calls them (NodePrepareResources, NodeUnprepareResources) and reads
// their health streams, over real unix-socket gRPC.
//
// It behaves as kubelet does (shared/reference/dra.md §1.4-1.5, §2.6-2.8;
// kubernetes pkg/kubelet/pluginmanager and pkg/kubelet/cm/dra/plugin):
//  - at start it creates the directory if missing, watches it and every
//    sub-directory with inotify, and treats every socket already there as
//    created; names starting with '.' and non-sockets are ignored. A
//    created socket (or one moved in) is added to the desired state with a
//    new timestamp, a deleted one removed from it (a socket moved away is
//    not noticed, as fsnotify's Rename is not handled by kubelet). If the
//    directory itself goes away the watch is gone until a restart;
//  - a reconcile pass (on every event and every `reconcile_period`, 1 s in
//    kubelet) unregisters plugins whose socket is gone or has a new
//    timestamp, then registers new ones, one operation per socket at a
//    time, failed ones again after a backoff (500 ms doubling);
//  - registration: dial (10 s), GetInfo (1 s), type must be "DRAPlugin",
//    an empty endpoint means the socket itself, the first of the plugin's
//    supported_versions that this kubelet knows is chosen (errors worded as
//    kubelet's); the plugin enters the actual state and then the driver's
//    plugin list, where an endpoint already held by another socket is
//    refused ("endpoint ... already registered"), and that socket then
//    stays unregistered until it is re-created; finally
//    NotifyRegistrationStatus (5 s) with the verdict;
//  - calls go to the driver's most recently registered connected plugin
//    (else its latest), through the chosen service, with kubelet's 45 s
//    timeout and its checks on the response (every claim answered, no
//    unknown UIDs);
//  - health streams per `health_mode`: none (1.34/1.35 default), v1alpha1
//    for every plugin whatever it advertised (1.36), or the advertised one,
//    v1 preferred (1.37). A stream's messages replace the driver's health
//    list; when it ends the list is cleared and it is reopened after
//    `health_retry` (5 s), except that on 1.37 UNIMPLEMENTED is final;
//  - Restart() is a kubelet restart: every connection drops and all state
//    is forgotten; `on_restart` runs while kubelet is down, then `on_start`
//    (kubelet deletes the node's ResourceSlices as it starts, at every
//    start), then the directory is walked afresh.
//
// Thread-safety: every public method may be called from any thread. All
// threads (inotify reader, reconciler, registration operations, health
// streams) are owned and joined by Stop() and the destructor.
#ifndef HCUDP_TEST_FAKE_KUBELET_FAKE_PLUGIN_WATCHER_H_
#define HCUDP_TEST_FAKE_KUBELET_FAKE_PLUGIN_WATCHER_H_

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "dra_v1.grpc.pb.h"

namespace hcudp::testing {

namespace drav1 = ::k8s::io::kubelet::pkg::apis::dra::v1;

// One registration attempt of a socket, as the fake kubelet ran it.
struct RegistrationAttempt {
  std::string socket_path;
  std::string type;  // from GetInfo ("" when GetInfo failed)
  std::string name;
  std::string endpoint;
  std::vector<std::string> supported_versions;
  std::string chosen_service;  // "v1.DRAPlugin", ... ("" when refused)
  bool registered = false;     // kubelet's verdict
  std::string error;           // kubelet's error text, "" when registered
  bool notified = false;       // NotifyRegistrationStatus reached the plugin
};

// A plugin in kubelet's per-driver list.
struct RegisteredPlugin {
  std::string socket_path;
  std::string endpoint;
  std::string chosen_service;
  std::string health_service;  // "" when no stream is opened
};

// What kubelet knows of a driver's device health (the latest stream message).
struct DriverHealth {
  std::map<std::string, int> devices;           // "<pool>/<device>" -> HealthStatus value
  std::map<std::string, std::string> messages;  // "<pool>/<device>" -> message
  int stream_messages = 0;                      // all streams
  int streams_opened = 0;
  int streams_ended = 0;
  std::string last_end_status;  // "<code> <message>"
};

struct WatcherSnapshot {
  std::vector<RegistrationAttempt> attempts;
  std::map<std::string, std::vector<RegisteredPlugin>> plugins;  // by driver, oldest first
  std::map<std::string, int> registrations;                      // successful, by driver
  std::map<std::string, DriverHealth> health;                    // by driver
  int restarts = 0;
};

// kubelet's checks on a NodePrepareResources / NodeUnprepareResources answer.
struct CallOutcome {
  grpc::Status status;        // the RPC's own status
  std::string kubelet_error;  // what kubelet would report on a bad answer ("" when fine)
  drav1::NodePrepareResourcesResponse prepare;      // v1 shape, also for a v1beta1 plugin
  drav1::NodeUnprepareResourcesResponse unprepare;  // v1 shape
  std::string service;                              // the service called
  bool ok() const { return status.ok() && kubelet_error.empty(); }
};

class FakePluginWatcher {
 public:
  enum class HealthMode {
    kOff,                  // kubelet 1.34/1.35 (ResourceHealthStatus off by default)
    kV1alpha1ForEveryone,  // kubelet 1.36: v1alpha1 for every plugin, retried every 5 s
    kAdvertised,           // kubelet 1.37: v1 over v1alpha1, only if advertised
  };

  struct Config {
    std::string registry_dir;
    // The DRAPlugin services this kubelet knows (1.34+: both; 1.33: v1beta1).
    std::vector<std::string> known_services = {"v1.DRAPlugin", "v1beta1.DRAPlugin"};
    HealthMode health_mode = HealthMode::kAdvertised;
    std::chrono::milliseconds reconcile_period{1000};
    std::chrono::milliseconds retry_backoff{500};
    std::chrono::milliseconds dial_timeout{10000};
    std::chrono::milliseconds get_info_timeout{1000};
    std::chrono::milliseconds notify_timeout{5000};
    std::chrono::milliseconds call_timeout{45000};
    std::chrono::milliseconds health_retry{5000};
    // Runs during Restart(), while the old kubelet is gone and before the
    // new one looks at the registry directory.
    std::function<void()> on_restart;
    // Runs at every Start() (the first and each Restart()'s), before the
    // registry directory is looked at. kubelet deletes the node's
    // ResourceSlices (deletecollection by spec.nodeName) as it starts: a
    // test with an API server sets this to do that.
    std::function<void()> on_start;
  };

  explicit FakePluginWatcher(Config config);
  ~FakePluginWatcher();
  FakePluginWatcher(const FakePluginWatcher&) = delete;
  FakePluginWatcher& operator=(const FakePluginWatcher&) = delete;

  // Returns "" or why it could not start.
  std::string Start();
  // kubelet exits: every connection and stream drops, state is forgotten.
  void Stop();
  // Stop(), on_restart, wait `down_time`, Start().
  std::string Restart(std::chrono::milliseconds down_time = std::chrono::milliseconds(20));

  WatcherSnapshot State() const;
  // Waits until `predicate(State())` holds; nullopt at the deadline.
  std::optional<WatcherSnapshot> WaitFor(
      const std::function<bool(const WatcherSnapshot&)>& predicate,
      std::chrono::milliseconds timeout) const;
  // At least `count` successful registrations of `driver` since the start.
  std::optional<WatcherSnapshot> WaitForRegistrations(const std::string& driver, int count,
                                                      std::chrono::milliseconds timeout) const;

  // kubelet's calls, to the plugin kubelet would pick for `driver`.
  CallOutcome NodePrepareResources(const std::string& driver,
                                   const std::vector<drav1::Claim>& claims);
  CallOutcome NodeUnprepareResources(const std::string& driver,
                                     const std::vector<drav1::Claim>& claims);

 private:
  struct Plugin;     // one registered plugin: its channel, stubs, health stream
  struct Operation;  // one registration attempt in flight
  struct Actual {
    uint64_t timestamp = 0;
    std::string driver;
    std::string endpoint;
  };

  void ReadEvents();
  void AddWatch(const std::string& dir);  // and walk it; mu_ held
  void Reconcile();
  void RunReconciler();
  void Register(const std::string& path, uint64_t timestamp);
  void StartHealth(const std::shared_ptr<Plugin>& plugin);
  void RunHealth(std::shared_ptr<Plugin> plugin);
  void TearDown(std::vector<std::shared_ptr<Plugin>> plugins);
  std::shared_ptr<Plugin> PickPlugin(const std::string& driver) const;
  // PickPlugin, or FAILED_PRECONDITION in `out` when none is registered;
  // sets the service the call will use.
  std::shared_ptr<Plugin> PickForCall(const std::string& driver, CallOutcome* out) const;
  bool Stopping() const;

  const Config config_;

  mutable std::mutex mu_;
  mutable std::condition_variable changed_;  // any state change, for waiters
  std::condition_variable wake_;             // the reconciler
  bool running_ = false;                     // guarded by mu_
  bool stopping_ = false;                    // guarded by mu_
  bool event_ = false;                       // guarded by mu_
  uint64_t next_timestamp_ = 1;              // guarded by mu_
  std::map<int, std::string> watches_;       // wd -> dir; guarded by mu_
  std::map<std::string, uint64_t> desired_;  // socket path -> timestamp; guarded by mu_
  std::map<std::string, Actual> actual_;     // guarded by mu_
  std::map<std::string, std::vector<std::shared_ptr<Plugin>>> store_;  // guarded by mu_
  std::set<std::string> in_flight_;  // socket paths; guarded by mu_
  std::map<std::string, std::pair<std::chrono::steady_clock::time_point,
                                  std::chrono::milliseconds>>
      backoff_;                                       // guarded by mu_
  std::list<std::unique_ptr<Operation>> operations_;  // guarded by mu_; joined by Stop
  WatcherSnapshot state_;                             // guarded by mu_ (plugins filled on read)

  int inotify_fd_ = -1;
  int stop_fd_ = -1;
  std::thread reader_;
  std::thread reconciler_;
};

}  // namespace hcudp::testing

#endif  // HCUDP_TEST_FAKE_KUBELET_FAKE_PLUGIN_WATCHER_H_
