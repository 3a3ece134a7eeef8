// NodeWatcher's hidden half (hcudp/node_watcher.h says what it does).
// node_watcher.cc: start, stop, the loop, the restart rule, the CDI retry;
// node_watcher_refresh.cc: one look at the node.
#ifndef HCUDP_WATCH_NODE_WATCHER_IMPL_H_
#define HCUDP_WATCH_NODE_WATCHER_IMPL_H_

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "hcudp/allocation.h"
#include "hcudp/node_watcher.h"
#include "hcudp_internal/fd_poller.h"
#include "hcudp_internal/path_watcher.h"
#include "hcudp_internal/thread_annotations.h"
#include "watch/health_tracker.h"
#include "watch/vhcu_keeper.h"

namespace hcudp {

class NodeWatcher::Impl {
 public:
  Impl(const Options& options, Backend& backend, NodeState& state, Clock& clock);
  ~Impl();

  Status Start();
  bool Stop();

  std::function<void()> on_restart;
  HealthListener on_health;
  InventoryListener on_inventory;
  std::atomic<bool> restart_requested{false};

 private:
  // Checks Backend::RestartRequired(); returns when to check next (max():
  // never again, the restart was requested).
  Clock::TimePoint CheckRestart(Clock::TimePoint now);
  void Loop();
  // Waits until `deadline` on the clock, a watched path changes or Stop();
  // true when a path changed.
  bool WaitForChange(Clock::TimePoint deadline);
  // Tells the loop a watched path changed or a card event came.
  void NoteChange();
  // One look at the node: discover, read health, publish if changed.
  // Returns an error only when nothing could be discovered.
  Status Refresh(bool initial);
  // Records the health readings of one look into the tracker and reports
  // the changes; sets each card of `inventory` to its reported health.
  void ApplyHealth(const StatusOr<std::vector<CardHealthReport>>& health, NodeInventory& inventory);
  // The resources of `inventory`, each ID with its card's health, in the
  // order first seen (one that vanished: an empty list).
  StatusOr<std::vector<Resource>> Resources(const NodeInventory& inventory);
  // Writes the CDI spec `json`; on failure keeps it for RetryCdiSpec.
  Status WriteSpec(std::string json);
  // Writes the spec a failed write left pending, if any; returns when to
  // try again (max(): nothing pending).
  Clock::TimePoint RetryCdiSpec(Clock::TimePoint now);

  const Options options_;
  Backend& backend_;
  NodeState& state_;
  const AllocationBuilder builder_;           // for the CDI spec
  HealthTracker tracker_;                     // watcher thread only
  VhcuKeeper vhcus_;                          // logs vHCU state gaps; watcher thread only
  NodeInventory last_inventory_;              // the last look used (its vHCUs: the last good)
  std::vector<std::string> known_resources_;  // names, in first-seen order
  std::string cdi_pending_;                   // a spec whose write failed; watcher thread only
  std::string cdi_built_;                     // the last spec written or pending; watcher only
  std::unique_ptr<PathWatcher> watcher_;      // Backend::WatchPaths(); the poller thread reads it
  Clock& clock_;
  // Wakes the watcher thread; a leaf lock (nothing is locked or called under it).
  Mutex mu_;
  std::condition_variable cv_;
  bool changed_ HCUDP_GUARDED_BY(mu_) = false;  // a watched path changed
  bool stopping_ HCUDP_GUARDED_BY(mu_) = false;
  bool loop_done_ HCUDP_GUARDED_BY(mu_) = false;  // the watcher thread is about to return
  std::unique_ptr<FdPoller> poller_;  // watcher_'s descriptor; after what its handler uses
  Clock::TimePoint restart_since_ = Clock::TimePoint::max();  // watcher thread only
  std::thread thread_;
};

}  // namespace hcudp

#endif  // HCUDP_WATCH_NODE_WATCHER_IMPL_H_
