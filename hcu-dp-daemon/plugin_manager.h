// PluginManager: one PluginServer per resource, and registration with
// kubelet that never gets lost (kubelet-contract.md §3-4, §11).
//
// The manager thread reconciles on every wake-up rather than trusting single
// events: each resource must have a live server whose socket file exists (a
// deleted socket — kubelet restarting — gets a fresh server), and must be
// registered with the kubelet.sock currently on disk. It wakes on:
//   - inotify on the socket directory (kubelet.sock created, a socket of
//     ours deleted);
//   - a ListAndWatch stream ending unexpectedly (re-register if no stream of
//     that resource is open again within kStreamGrace);
//   - a new snapshot (a new resource gets a server and a registration);
//   - a 5 s stat backstop (own sockets exist? kubelet.sock inode changed?
//     registered for 5 s but kubelet never opened a stream?).
// Failed registrations back off exponentially, 100 ms doubling to 5 s. A
// kubelet that is not there yet is waited for (logged once).
//
// Threads: Start() serves every resource before returning and then runs the
// manager thread; Stop() joins it, stops the servers and removes our sockets.
#ifndef HCU_DP_DAEMON_PLUGIN_MANAGER_H_
#define HCU_DP_DAEMON_PLUGIN_MANAGER_H_

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "hcudp/allocation.h"
#include "hcudp/options.h"
#include "node_state.h"
#include "plugin_server.h"
#include "registrar.h"

namespace hcudp::daemon {

class PluginManager {
 public:
  static constexpr std::chrono::milliseconds kBackoffMin{100};
  static constexpr std::chrono::milliseconds kBackoffMax{5000};
  static constexpr std::chrono::milliseconds kBackstop{5000};
  static constexpr std::chrono::milliseconds kStreamGrace{1000};

  // `state` and `builder` must outlive the manager.
  // `allocate_delegate` (optional) serves Allocate of the HAMi resources.
  PluginManager(const Options& options, NodeState& state, const AllocationBuilder& builder,
                AllocateDelegate allocate_delegate = nullptr);
  ~PluginManager();

  // Creates the socket directory if needed, removes stale sockets, serves
  // every resource of the current snapshot, then starts registering. A
  // directory that cannot be used is InvalidArgument naming
  // --device-plugin-path. A resource whose socket path would pass the
  // 107-byte limit of unix sockets is logged once and not served; the
  // others are.
  Status Start();
  // Bounded (PluginServer::kStopBudget for all servers together). Returns
  // false when a server had to be left behind with a call still running.
  bool Stop();

  // Creates `dir` if needed and checks that sockets can be made there;
  // InvalidArgument naming --device-plugin-path otherwise.
  static Status PrepareSocketDir(const std::string& dir);

  // Thread-safe: asks the manager thread to look again soon.
  void Wake();

 private:
  using Clock = std::chrono::steady_clock;

  // One Register call, run on its own thread so that a slow kubelet (it
  // dials back with a 10 s timeout before answering) never keeps the
  // manager from re-serving a deleted socket.
  struct Attempt {
    std::thread thread;
    RegistrationCanceller canceller;
    std::atomic<bool> done{false};
    Status result;                  // written by `thread` before `done`
    uint64_t serve_generation = 0;  // of the server it registered
    uint64_t kubelet_inode = 0;
    bool cancelled = false;  // by the manager: retry at once, no backoff
  };

  struct Endpoint {
    std::string resource_name;
    std::string last_name;
    DeviceKind kind = DeviceKind::kCard;
    std::string socket_path;
    bool path_too_long = false;  // never served; logged once
    std::unique_ptr<PluginServer> server;
    uint64_t serve_generation = 0;  // +1 each time the server is (re)created
    bool registered = false;
    Clock::time_point registered_at{};
    std::chrono::milliseconds backoff{0};
    Clock::time_point next_attempt{};
    uint64_t registered_kubelet_inode = 0;
    std::unique_ptr<Attempt> attempt;  // in flight or finished, not yet collected
  };

  void Loop();
  void Reconcile();
  void SyncEndpoints();
  Status Serve(Endpoint& e);
  void StartAttempt(Endpoint& e, uint64_t kubelet_inode);
  void CollectAttempt(Endpoint& e);
  static void CancelAttempt(Endpoint& e);
  void DrainInotify();
  void OnStreamEnd(const std::string& resource);
  Clock::time_point NextDeadline() const;

  const Options options_;
  NodeState& state_;
  const AllocationBuilder& builder_;
  const AllocateDelegate allocate_delegate_;
  const std::string dir_;
  const std::string kubelet_socket_;
  std::vector<Endpoint> endpoints_;  // manager thread only (after Start)
  bool kubelet_missing_logged_ = false;
  bool force_register_ = false;
  Clock::time_point next_backstop_{};

  std::mutex mu_;
  std::vector<std::pair<std::string, Clock::time_point>> stream_ends_;  // guarded by mu_

  int inotify_fd_ = -1;
  int watch_wd_ = -1;  // the socket directory's watch; -1 when lost
  int wake_fd_ = -1;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace hcudp::daemon

#endif  // HCU_DP_DAEMON_PLUGIN_MANAGER_H_
