// NodeMonitor: keeps NodeState current. It discovers the node, applies
// health with hysteresis (HealthTracker), recomputes the resources and
// publishes a snapshot whenever a device list, health or NUMA node changes,
// or what Allocate hands out does (a card's /dev/dri nodes, /dev/kfd,
// /dev/mkfd, a conf path).
//
// When it looks:
//   - every --pulse seconds (0: never periodically);
//   - at once when a Backend::WatchPaths() path changes (PathWatcher: each
//     path has its own filter, and a directory missing at start or replaced
//     later is watched as soon as it exists), and again ~1 s later to
//     confirm a health change (so an injected fault shows in about a second
//     or two, without waiting for a pulse);
//   - ~1 s after any reading that disagrees with the reported health.
// With --device-list-strategy=cdi|both it writes the CDI spec before the
// first publish, after every change, and whenever a look builds a spec that
// differs from the last one (a vHCU conf became valid); a write that fails is retried every
// kCdiRetry on its own (no look at the node) until one succeeds.
//
// Restart required (Backend::RestartRequired, e.g. libhydmi lost hymgr for
// the life of the process): a look that meets it keeps the last good
// devices and health. The monitor checks it (no vendor call) after every
// look and on a timer of its own, once a second, whatever --pulse is; when
// it has held at every check for kRestartGrace, it logs one ERROR line and
// calls the restart handler once (the daemon then shuts down as on SIGTERM
// and exits 1). The backend notices the condition at the first vendor call
// that meets it (a look, or a vHCU operation on a gRPC thread).
//
// Threads: Start() runs the first refresh on the caller's thread, then one
// monitor thread owns the backend calls and the tracker; an FdPoller thread
// reads the PathWatcher and wakes it. Stop() joins both.
//
// Time: every schedule above (pulse, confirming re-read, restart checks and
// grace) is kept on the hcudp::Clock given to the constructor, so a test can
// run it in simulated time.
#ifndef HCU_DP_DAEMON_NODE_MONITOR_H_
#define HCU_DP_DAEMON_NODE_MONITOR_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "fd_poller.h"
#include "hcudp/allocation.h"
#include "hcudp/backend.h"
#include "hcudp/clock.h"
#include "hcudp/naming.h"
#include "hcudp/options.h"
#include "hcudp_internal/thread_annotations.h"
#include "health_tracker.h"
#include "node_state.h"
#include "path_watcher.h"
#include "vhcu_keeper.h"

namespace hcudp::daemon {

class NodeMonitor {
 public:
  // `backend`, `state` and `clock` must outlive the monitor.
  NodeMonitor(const Options& options, Backend& backend, NodeState& state,
              const AllocationBuilder& builder, Clock& clock = Clock::Real());
  ~NodeMonitor();

  // First discovery and publish; an error here is fatal for the daemon
  // (nothing to serve). Then starts the monitor thread.
  Status Start();
  // Bounded: a look may be inside a vendor call that takes long (hymgr
  // unreachable: seconds per call, many calls per look). If the monitor
  // thread has not returned kStopBudget after the stop began, it is left
  // running and false is returned: the caller must then end the process
  // without destroying what the thread uses (backend, state). Idempotent.
  bool Stop();

  // Called once, on the monitor thread, when the backend has required a
  // restart for kRestartGrace. Set before Start().
  void set_restart_handler(std::function<void()> handler) { on_restart_ = std::move(handler); }
  // Called on the monitor thread when a card's reported health changes (after
  // hysteresis), with the reason the health source gave. Set before Start().
  using HealthListener =
      std::function<void(const Card& card, Health health, const std::string& reason)>;
  void set_health_listener(HealthListener listener) { on_health_ = std::move(listener); }
  // Called on the monitor thread after every look at the node (published or
  // not: a driver upgrade with the same cards changes no resource), with
  // the inventory as published. Must not block. Set before Start().
  using InventoryListener = std::function<void(const NodeInventory& inventory)>;
  void set_inventory_listener(InventoryListener listener) { on_inventory_ = std::move(listener); }
  // True once the restart handler was called.
  bool restart_requested() const { return restart_requested_; }

  // Time to wait for a confirming re-read after an event or disagreement.
  static constexpr std::chrono::milliseconds kConfirmDelay{1000};
  // How long a required restart must hold, checked every kRestartCheck,
  // before the daemon exits: long enough to serve the last good state and
  // not restart in a tight loop, short enough to recover soon.
  static constexpr std::chrono::seconds kRestartGrace{5};
  static constexpr std::chrono::milliseconds kRestartCheck{1000};
  // How long Stop() waits for the monitor thread (real time).
  static constexpr std::chrono::milliseconds kStopBudget{2000};
  // Between attempts to write a CDI spec whose write failed.
  static constexpr std::chrono::milliseconds kCdiRetry{1000};

 private:
  // Checks Backend::RestartRequired(); returns when to check next (max():
  // never again, the restart was requested).
  Clock::TimePoint CheckRestart(Clock::TimePoint now);
  void Loop();
  // Waits until `deadline` on the clock, a watched path changes or Stop();
  // true when a path changed.
  bool WaitForChange(Clock::TimePoint deadline);
  // One look at the node: discover, read health, publish if changed.
  // Returns an error only when nothing could be discovered.
  Status Refresh(bool initial);
  // Writes the CDI spec `json`; on failure keeps it for RetryCdiSpec.
  Status WriteSpec(std::string json);
  // Writes the spec a failed write left pending, if any; returns when to
  // try again (max(): nothing pending).
  Clock::TimePoint RetryCdiSpec(Clock::TimePoint now);

  const Options options_;
  Backend& backend_;
  NodeState& state_;
  const AllocationBuilder& builder_;          // for the CDI spec; outlives the monitor
  HealthTracker tracker_;                     // monitor thread only
  VhcuKeeper vhcus_;                          // logs vHCU state gaps; monitor thread only
  NodeInventory last_inventory_;              // the last look used (its vHCUs: the last good)
  std::vector<std::string> known_resources_;  // names, in first-seen order
  std::string cdi_pending_;                   // a spec whose write failed; monitor thread only
  std::string cdi_built_;                     // the last spec written or pending; monitor only
  std::unique_ptr<PathWatcher> watcher_;      // Backend::WatchPaths(); the poller thread reads it
  Clock& clock_;
  // Wakes the monitor thread; a leaf lock (nothing is locked or called under it).
  Mutex mu_;
  std::condition_variable cv_;
  bool changed_ HCUDP_GUARDED_BY(mu_) = false;  // a watched path changed
  bool stopping_ HCUDP_GUARDED_BY(mu_) = false;
  bool loop_done_ HCUDP_GUARDED_BY(mu_) = false;  // the monitor thread is about to return
  std::unique_ptr<FdPoller> poller_;  // watcher_'s descriptor; after what its handler uses
  std::function<void()> on_restart_;
  HealthListener on_health_;
  InventoryListener on_inventory_;
  Clock::TimePoint restart_since_ = Clock::TimePoint::max();  // monitor thread only
  std::atomic<bool> restart_requested_{false};
  std::thread thread_;
};

// True when what DRA mode publishes from an inventory may differ: cards
// (identity, health, NUMA, size), vHCUs, MIG instances, unreadable vHCU state.
bool DraInventoryDiffers(const NodeInventory& a, const NodeInventory& b);

// True when the device lists (IDs, health, NUMA) of the two sets differ.
bool ResourcesDiffer(const std::vector<Resource>& a, const std::vector<Resource>& b);

}  // namespace hcudp::daemon

#endif  // HCU_DP_DAEMON_NODE_MONITOR_H_
