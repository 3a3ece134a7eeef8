// NodeWatcher: keeps a NodeState (hcudp/node_state.h) current. The node
// runtime of hcu-dp-daemon and `hcuctl watch`, for any embedder: it
// discovers the node, applies health with hysteresis, keeps unreadable vHCU
// state fail-closed, recomputes the resources and publishes a snapshot
// whenever a device list, health or NUMA node changes, or what Allocate
// hands out does (a card's /dev/dri nodes, /dev/kfd, /dev/mkfd, a conf path).
//
//   hcudp::NodeState state;
//   hcudp::NodeWatcher watcher(options, backend.get(), &state);
//   watcher.set_health_listener([](const hcudp::Card& card, hcudp::Health h,
//                                  const std::string& reason) { ... });
//   if (hcudp::Status st = watcher.Start(); !st.ok()) ...
//   ... state.Current() ...
//   watcher.Stop();
//
// Health with hysteresis: a card's reported health flips only after two
// consecutive readings that disagree with it (one bad reading never drains a
// node, one good reading never readmits a flapping card). A failed health
// query records nothing.
//
// Fail-closed vHCU state: a vHCU conf (or /etc/vdev) that cannot be read is
// never read as "no vHCUs" (NodeInventory::vhcu_gaps): the card keeps the
// vHCUs of the last good look, and a gap that may concern any card keeps
// them all. Each gap is logged once naming its path, again every 5 minutes
// while it lasts, and once more when the path is readable again.
//
// When it looks:
//   - every Options::pulse_seconds (0: never periodically);
//   - at once when a Backend::WatchPaths() path changes (inotify; a
//     directory missing at start or replaced later is watched as soon as it
//     exists) or the backend reports a card event (Backend::StartEvents),
//     and again ~1 s later to confirm a health change, so an injected fault
//     shows in about a second or two without waiting for a pulse;
//   - ~1 s after any reading that disagrees with the reported health.
// With Options::device_list_strategy cdi|both (and a strategy other than
// dra) it writes the CDI spec to Options::cdi_spec_dir before the first
// publish, after every change, and whenever a look builds a spec that
// differs from the last one; a failed write is retried every kCdiRetry.
//
// Restart required (Backend::RestartRequired, e.g. the vendor library lost
// its manager for the life of the process): a look that meets it keeps the
// last good devices and health. The watcher checks it (no vendor call) after
// every look and once a second; when it has held for kRestartGrace, it logs
// one ERROR line and calls the restart handler once.
//
// Threads: Start() runs the first look on the caller's thread, then one
// watcher thread owns the backend calls; a second thread reads inotify and
// wakes it. Listeners run on the watcher thread and must not block. Stop()
// joins both, within kStopBudget.
//
// Time: every schedule above (pulse, confirming re-read, restart checks and
// grace) is kept on the Clock given to the constructor, so a test can run
// it in simulated time.
#ifndef HCUDP_NODE_WATCHER_H_
#define HCUDP_NODE_WATCHER_H_

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "hcudp/backend.h"
#include "hcudp/clock.h"
#include "hcudp/device.h"
#include "hcudp/export.h"
#include "hcudp/node_state.h"
#include "hcudp/options.h"
#include "hcudp/status.h"

namespace hcudp {

class HCUDP_EXPORT NodeWatcher {
 public:
  // Of `options`: strategy, naming_policy, device_split_count,
  // resource_multiple (the resources), pulse_seconds, device_list_strategy,
  // cdi_spec_dir (written as given: the daemon passes host-root + the flag),
  // hyhal_path, cdi_hook_path, cdi_debug_access (the CDI spec). `backend` and `state` are not
  // owned and must outlive the watcher; `clock` null: Clock::Real().
  NodeWatcher(const Options& options, Backend* backend, NodeState* state, Clock* clock = nullptr);
  ~NodeWatcher();  // Stop()s
  NodeWatcher(const NodeWatcher&) = delete;
  NodeWatcher& operator=(const NodeWatcher&) = delete;

  // The first look and publish on the caller's thread; an error means
  // nothing could be discovered (or the first CDI spec not written). Then
  // starts the watcher thread. Listeners are set before.
  Status Start();
  // Bounded: a look may be inside a vendor call that takes long (the
  // vendor's manager unreachable: seconds per call, many calls per look). If
  // the watcher thread has not returned kStopBudget after the stop began, it
  // is left running and false is returned: the caller must then end the
  // process without destroying what the thread uses (backend, state).
  // Idempotent.
  bool Stop();

  // Called once, on the watcher thread, when the backend has required a
  // restart for kRestartGrace.
  void set_restart_handler(std::function<void()> handler);
  // Called on the watcher thread when a card's reported health changes
  // (after hysteresis), with the reason the health source gave.
  using HealthListener =
      std::function<void(const Card& card, Health health, const std::string& reason)>;
  void set_health_listener(HealthListener listener);
  // Called on the watcher thread after every look at the node (published or
  // not: a driver upgrade with the same cards changes no resource), with the
  // inventory as published.
  using InventoryListener = std::function<void(const NodeInventory& inventory)>;
  void set_inventory_listener(InventoryListener listener);
  // True once the restart handler was called.
  bool restart_requested() const;

  // Time to wait for a confirming re-read after an event or disagreement.
  static constexpr std::chrono::milliseconds kConfirmDelay{1000};
  // How long a required restart must hold, checked every kRestartCheck,
  // before the restart handler runs: long enough to serve the last good
  // state and not restart in a tight loop, short enough to recover soon.
  static constexpr std::chrono::seconds kRestartGrace{5};
  static constexpr std::chrono::milliseconds kRestartCheck{1000};
  // How long Stop() waits for the watcher thread (real time).
  static constexpr std::chrono::milliseconds kStopBudget{2000};
  // Between attempts to write a CDI spec whose write failed.
  static constexpr std::chrono::milliseconds kCdiRetry{1000};

  class Impl;  // libhcudp/src/watch/node_watcher_impl.h

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace hcudp

#endif  // HCUDP_NODE_WATCHER_H_
