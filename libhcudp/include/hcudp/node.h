// Node: the one door to the node (issue 28), as leveldb's DB stands over its
// Env. A mode of the daemon, an hcuctl command or an embedder reaches the
// node through it, and through nothing else:
//
//   hcudp::NodeOptions options;
//   options.options = flags;  // backend, sim node, host root, strategy...
//   auto node = hcudp::Node::Open(std::move(options));
//   if (!node.ok()) ...
//   // A fresh, fail-closed look (hcuctl):
//   auto inventory = (*node)->Look();
//   switch (inventory->LookupCardByBdf("0000:0b:00.0").certainty()) { ... }
//   // Who holds a device, three-way:
//   hcudp::Holders h = (*node)->Holders(hcudp::DeviceRef::OfVhcu(vhcu));
//   // Kept current (the daemon): listeners, then StartWatching().
//   (*node)->StartWatching();
//   auto now = (*node)->Snapshot();
//
// It owns the backend (hcudp/backend.h; OpenBackend unless one is given),
// the NodeWatcher and the NodeState. Raw discovery is the backend's and
// stays behind this door: Look() is discovery plus the memory a single
// Discover() lacks — the last good vHCUs (a torn conf keeps the vHCU it
// held, hcudp/node_watcher.h) and the backend's missed cards, confirmed
// gone only on time.
//
// Three-way answers: the inventories it returns answer found / absent /
// unknown for cards (LookupCardByBdf), vHCUs (LookupVhcu), MIG instances
// (LookupMig) and the MIG mode itself (LookupMigMode); the ledger answers
// who holds a device (Holders, hcudp/ledger.h); the offer rule
// (hcudp/offer.h) says what may be offered.
//
// Guarded acts: CreateVhcu and DestroyVhcu run under the host-wide vHCU lock
// (hcudp/vhcu_lock.h), keep the vHCU intents and mark files right, and
// refuse — unless forced — what the ledger says is held or cannot tell.
//
// Thread-safety: all methods may be called from any thread, except that
// listeners are added before StartWatching().
#ifndef HCUDP_NODE_H_
#define HCUDP_NODE_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "hcudp/backend.h"
#include "hcudp/clock.h"
#include "hcudp/device.h"
#include "hcudp/export.h"
#include "hcudp/ledger.h"
#include "hcudp/node_state.h"
#include "hcudp/node_watcher.h"
#include "hcudp/offer.h"
#include "hcudp/options.h"
#include "hcudp/status.h"

namespace hcudp {

struct NodeOptions {
  // Of `options`: backend, sim_node_path, host_root, hyhal_path (the
  // backend), cdi_spec_dir (a host path, read and written under host-root:
  // Hygon's DRA state for the ledger, the watcher's CDI spec), and what
  // NodeWatcher reads (strategy, naming, pulse, CDI). Default: Options{}.
  Options options;
  // The clock of the watcher's schedules and of the card keeper's "gone on
  // time". Not owned; null: Clock::Real().
  Clock* clock = nullptr;
  // The backend to use. Null (default): OpenBackend(options).
  std::unique_ptr<Backend> backend;
  // Kubelet's pod-resources as extra holders (the library has no gRPC
  // client: hcuctl gives one). An error is noted, not a gap (ledger.h).
  // Default: none.
  std::function<StatusOr<std::vector<Holder>>()> pod_resources;
  // Longest wait for the host-wide vHCU lock in CreateVhcu / DestroyVhcu.
  // Default 10 s.
  std::chrono::milliseconds vhcu_lock_timeout{10000};
  // Called once when the vHCU lock is busy, with its holder (hcuctl says
  // it is waiting). Default: none.
  std::function<void(const std::string& holder)> on_lock_wait;
};

// What CreateVhcu made, and what it noted on the way.
struct NodeCreatedVhcu {
  Vhcu vhcu;
  std::vector<std::string> notes;     // "removed the stale mark <path>"
  std::vector<std::string> warnings;  // done, but a record could not be fixed
};

// What DestroyVhcu did.
struct NodeDestroyedVhcu {
  int id = -1;
  Holders holders;                 // as read under the lock (forced: not empty)
  std::vector<std::string> notes;  // "removed <path> (pod <uid>)", ...
};

class HCUDP_EXPORT Node {
 public:
  // Opens the backend (or takes options.backend) and builds the watcher and
  // state; nothing is discovered yet. Errors name the flag at fault.
  static StatusOr<std::unique_ptr<Node>> Open(NodeOptions options);
  ~Node();  // stops watching
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  // --- Reading the node.
  // A fresh discovery, fail closed: a torn conf or unreadable /etc/vdev
  // keeps the last good vHCUs this Node saw (from its looks and the
  // watcher's), a missed card stays unknown until confirmed gone. An error
  // when nothing could be discovered, or the backend requires a restart.
  StatusOr<NodeInventory> Look();
  // The watcher's latest snapshot (generation 0 before StartWatching).
  std::shared_ptr<const NodeSnapshot> Snapshot() const;
  // The state the watcher publishes into, for WaitNewer and its listener.
  NodeState& state();

  // --- Keeping it current (the daemon, hcuctl watch).
  // Listeners run on the watcher thread and must not block; add them
  // before StartWatching. Several may be added.
  void AddInventoryListener(NodeWatcher::InventoryListener listener);
  void set_health_listener(NodeWatcher::HealthListener listener);
  void set_restart_handler(std::function<void()> handler);
  // NodeWatcher::Start: the first look on the caller's thread, then the
  // watcher thread.
  Status StartWatching();
  // NodeWatcher::Stop: bounded; false when its thread was left running.
  bool StopWatching();
  bool restart_requested() const;

  // --- The ledger (hcudp/ledger.h).
  // Every record, read now.
  hcudp::Holdings ReadHoldings() const;
  // Who holds `device`, read now: unknown when any record cannot be read.
  hcudp::Holders Holders(const DeviceRef& device) const;
  // The offer rule (hcudp/offer.h) on `inventory` and the ledger read now.
  // For kDevicePlugin the ledger leaves out kubelet's pod-resources: kubelet
  // accounts its own allocations.
  OfferPlan Offers(const NodeInventory& inventory, OfferMode mode) const;
  // The same on a fresh Look().
  StatusOr<OfferPlan> Offers(OfferMode mode);

  // --- Guarded acts.
  // Creates a vHCU on card `card` (its index) under the host-wide lock,
  // then excludes it from every crashed create's intent and removes stale
  // marks naming its id. Unless `force`, refuses (FailedPrecondition) a
  // card held whole, on a node in MIG mode, and (Unavailable) a card or
  // holders that are unknown.
  StatusOr<NodeCreatedVhcu> CreateVhcu(int card, int compute_units, uint64_t memory_mib,
                                       bool force = false);
  // Destroys vHCU `id` under the host-wide lock. Unless `force`: refuses
  // (FailedPrecondition, naming them) a vHCU with holders, and
  // (Unavailable) one whose state, card or holders cannot be read. A forced
  // destroy removes the mark files and intents that name its id (they
  // would claim the id's next vHCU). NotFound when it does not exist.
  StatusOr<NodeDestroyedVhcu> DestroyVhcu(int id, bool force = false);

  // --- For library objects that still take a Backend (HamiAgent,
  // VhcuManager, dra::Preparer) until they take the Node. Callers outside
  // libhcudp never call its Discover(): Look() and Snapshot() are the way
  // (a test keeps hcu-dp-daemon/ and hcuctl/ free of it).
  Backend& backend();
  Clock& clock();
  const Options& options() const;

  class Impl;  // libhcudp/src/node/node_impl.h

 private:
  explicit Node(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace hcudp

#endif  // HCUDP_NODE_H_
