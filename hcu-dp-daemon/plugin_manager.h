// PluginManager: one PluginServer per resource, and registration with
// kubelet that never gets lost (kubelet-contract.md §3-4, §11).
//
// The manager thread reconciles on every wake-up rather than trusting single
// events: each resource must have a live server whose socket file exists (a
// deleted socket — kubelet restarting — gets a fresh server), and must be
// registered with the kubelet.sock currently on disk. It wakes on:
//   - inotify on the socket directory (kubelet.sock created, a socket of
//     ours deleted);
//   - a ListAndWatch stream ending unexpectedly (re-register if kubelet's
//     stream of that resource, the first opened after our Register, is not
//     open again within kStreamGrace; other clients' streams do not count);
//   - a new snapshot (a new resource gets a server and a registration);
//   - a 5 s stat backstop (own sockets exist? kubelet.sock inode changed?
//     registered for 5 s but kubelet never opened a stream?).
// Failed registrations back off exponentially, 100 ms doubling to 5 s. A
// kubelet that is not there yet is waited for (logged once).
//
// Threads: Start() serves every resource before returning and then runs the
// manager thread (a ReconcileLoop, with its poller thread reading the inotify
// descriptor); Stop() joins them, stops the servers and removes our
// sockets. Backoff,
// the backstop and the stream grace are kept on the hcudp::Clock given to the
// constructor, so a test can run them in simulated time.
//
// Lock order of the daemon (annotated; clang's -Wthread-safety checks it in
// the `asan` preset). The manager is the daemon's outermost object, so the
// order is written here. Every lock the daemon itself owns is a leaf: it is
// taken with no other lock held, and nothing is locked and nothing that
// blocks is called under it:
//   PluginManager::mu_, RegistrationCanceller::mu_, ReconcileLoop::mu_ (and the library's
//   NodeWatcher and NodeState locks, leaves as well).
// The locks a daemon thread nests are the library's, entered through the
// node watcher's and the gRPC handlers' calls, outermost first: HamiAgent's
// allocate lock -> VhcuManager's lock -> the vHCU host lock -> the vendor
// library's RwMutex -> its leaves (DlopenVendorLib's dmi_down_mu_ and
// health_mu_). HostBackend's health lock and the kube client's locks are
// leaves of their own.
#ifndef HCU_DP_DAEMON_PLUGIN_MANAGER_H_
#define HCU_DP_DAEMON_PLUGIN_MANAGER_H_

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "hcudp/allocation.h"
#include "hcudp/clock.h"
#include "hcudp/node_state.h"
#include "hcudp/options.h"
#include "hcudp_internal/reconcile_loop.h"
#include "hcudp_internal/thread_annotations.h"
#include "plugin_server.h"
#include "registrar.h"

namespace hcudp::daemon {

class PluginManager {
 public:
  static constexpr std::chrono::milliseconds kBackoffMin{100};
  static constexpr std::chrono::milliseconds kBackoffMax{5000};
  static constexpr std::chrono::milliseconds kBackstop{5000};
  static constexpr std::chrono::milliseconds kStreamGrace{1000};

  // `state`, `builder` and `clock` must outlive the manager.
  // `allocate_delegate` (optional) serves Allocate of the HAMi resources;
  // `delegate_ready` (optional) says whether it can now: until it can, and
  // whenever it cannot later, their devices are sent Unhealthy.
  PluginManager(const Options& options, NodeState& state, const AllocationBuilder& builder,
                AllocateDelegate allocate_delegate = nullptr,
                std::function<bool()> delegate_ready = nullptr, Clock& clock = Clock::Real());
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

  // Removes hygon.com_*@* socket files in `dir` that nobody listens on, as
  // RemoveDeadSockets (hcudp_internal/socket_dir.h) does. Returns the count.
  static int RemoveStaleSockets(const std::string& dir);

  // Thread-safe: asks the manager thread to look again soon.
  void Wake();
  // Thread-safe: {resource, registered with kubelet} as of the manager's
  // last pass (the metrics' registration gauge).
  std::vector<std::pair<std::string, bool>> Registrations() const;

 private:
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
    Clock::TimePoint started_at{};  // the backoff counts from here
    bool cancelled = false;         // by the manager: retry at once, no backoff
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
    Clock::TimePoint registered_at{};
    std::chrono::milliseconds backoff{0};
    Clock::TimePoint next_attempt{};
    uint64_t registered_kubelet_inode = 0;
    std::unique_ptr<Attempt> attempt;  // in flight or finished, not yet collected
  };

  // One pass of the loop: Reconcile, then when the next must run.
  Clock::TimePoint Pass();
  void Reconcile();
  void SyncEndpoints();
  Status Serve(Endpoint& e);
  void StartAttempt(Endpoint& e, uint64_t kubelet_inode);
  void CollectAttempt(Endpoint& e);
  static void CancelAttempt(Endpoint& e);
  // On the poller thread: reads the inotify events and records them.
  bool DrainInotify();
  void OnStreamEnd(const std::string& resource);
  Clock::TimePoint NextDeadline() const;

  const Options options_;
  NodeState& state_;
  const AllocationBuilder& builder_;
  const AllocateDelegate allocate_delegate_;
  const std::function<bool()> delegate_ready_;
  const std::string dir_;
  const std::string kubelet_socket_;
  std::vector<Endpoint> endpoints_;  // manager thread only (after Start)
  bool kubelet_missing_logged_ = false;
  bool force_register_ = false;
  Clock::TimePoint next_backstop_{};

  Clock& clock_;
  int inotify_fd_ = -1;
  int watch_wd_ = -1;  // the socket directory's watch; -1 when lost; manager thread only
  std::atomic<bool> stopping_{false};

  // What other threads tell the manager thread; a leaf lock.
  mutable Mutex mu_;
  std::vector<std::pair<std::string, Clock::TimePoint>> stream_ends_ HCUDP_GUARDED_BY(mu_);
  bool kubelet_created_ HCUDP_GUARDED_BY(mu_) = false;  // kubelet.sock (re)appeared
  bool watch_lost_ HCUDP_GUARDED_BY(mu_) = false;       // the directory's watch went away
  std::vector<std::pair<std::string, bool>> registrations_ HCUDP_GUARDED_BY(mu_);

  ReconcileLoop loop_;  // polls inotify_fd_; after what its pass and drain use
  bool started_ = false;
};

}  // namespace hcudp::daemon

#endif  // HCU_DP_DAEMON_PLUGIN_MANAGER_H_
