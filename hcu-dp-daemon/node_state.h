// NodeState: the daemon's cached view of the node — inventory (card health
// already through hysteresis) and the resources with their device lists —
// published by the node monitor and read by every gRPC handler without I/O.
//
// Thread-safety: all methods are safe from any thread. Snapshots are
// immutable and shared; holding one never blocks a publisher.
#ifndef HCU_DP_DAEMON_NODE_STATE_H_
#define HCU_DP_DAEMON_NODE_STATE_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "hcudp/device.h"
#include "hcudp/naming.h"
#include "hcudp_internal/thread_annotations.h"

namespace hcudp::daemon {

struct NodeSnapshot {
  uint64_t generation = 0;
  NodeInventory inventory;
  // Every resource ever registered by this process; one that vanished from
  // the node stays with an empty device list.
  std::vector<Resource> resources;

  const Resource* FindResource(const std::string& name) const;
};

class NodeState {
 public:
  NodeState();

  std::shared_ptr<const NodeSnapshot> Current() const;

  // Publishes a new snapshot (generation + 1), wakes waiters and calls the
  // change listener (outside the lock).
  void Publish(NodeInventory inventory, std::vector<Resource> resources);

  // Blocks until a snapshot newer than `seen` exists, Wake() is called, or
  // `timeout` passes; returns the current snapshot either way.
  std::shared_ptr<const NodeSnapshot> WaitNewer(uint64_t seen, std::chrono::milliseconds timeout);

  // Wakes every WaitNewer caller (used when servers stop).
  void Wake();

  // Called after each Publish, from the publishing thread. Set before any
  // Publish; not changed afterwards.
  void set_listener(std::function<void()> listener) { listener_ = std::move(listener); }

 private:
  mutable Mutex mu_;  // a leaf: nothing else is locked under it
  std::condition_variable_any cv_;
  std::shared_ptr<const NodeSnapshot> current_ HCUDP_GUARDED_BY(mu_);
  uint64_t wakes_ HCUDP_GUARDED_BY(mu_) = 0;
  std::function<void()> listener_;
};

}  // namespace hcudp::daemon

#endif  // HCU_DP_DAEMON_NODE_STATE_H_
