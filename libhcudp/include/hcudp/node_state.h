// NodeState: a cached view of the node — the inventory (card health already
// through the watcher's hysteresis) and the resources with their device
// lists — published by a NodeWatcher (hcudp/node_watcher.h) and read by
// anyone without I/O: the daemon's gRPC handlers, its metrics, an embedder.
//
//   hcudp::NodeState state;
//   std::shared_ptr<const hcudp::NodeSnapshot> now = state.Current();
//   auto next = state.WaitNewer(now->generation, std::chrono::seconds(5));
//
// Thread-safety: all methods are safe from any thread. Snapshots are
// immutable and shared; holding one never blocks a publisher.
#ifndef HCUDP_NODE_STATE_H_
#define HCUDP_NODE_STATE_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "hcudp/device.h"
#include "hcudp/export.h"
#include "hcudp/naming.h"

namespace hcudp {

struct HCUDP_EXPORT NodeSnapshot {
  // 0 before the first publish, then 1, 2, ...
  uint64_t generation = 0;
  NodeInventory inventory;
  // Every resource ever published into this state; one that vanished from
  // the node stays with an empty device list.
  std::vector<Resource> resources;

  const Resource* FindResource(const std::string& name) const;
};

class HCUDP_EXPORT NodeState {
 public:
  NodeState();
  ~NodeState();
  NodeState(const NodeState&) = delete;
  NodeState& operator=(const NodeState&) = delete;

  // The latest snapshot (generation 0, empty, before the first publish).
  std::shared_ptr<const NodeSnapshot> Current() const;

  // Publishes a new snapshot (generation + 1), wakes waiters and calls the
  // change listener (outside the lock, on the publishing thread).
  void Publish(NodeInventory inventory, std::vector<Resource> resources);

  // Blocks until a snapshot newer than `seen` exists, Wake() is called, or
  // `timeout` passes (real time); returns the current snapshot either way.
  std::shared_ptr<const NodeSnapshot> WaitNewer(uint64_t seen, std::chrono::milliseconds timeout);

  // Wakes every WaitNewer caller (e.g. when servers stop).
  void Wake();

  // Called after each Publish, from the publishing thread; it must not
  // block. Set before any Publish; not changed afterwards.
  void set_listener(std::function<void()> listener);

  class Impl;  // libhcudp/src/watch/node_state.cc

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace hcudp

#endif  // HCUDP_NODE_STATE_H_
