// hcudp::Node's hidden half (hcudp/node.h says what it does). node.cc: open,
// look, watch; node_acts.cc: the guarded vHCU create and destroy.
#ifndef HCUDP_SRC_NODE_NODE_IMPL_H_
#define HCUDP_SRC_NODE_NODE_IMPL_H_

#include <memory>
#include <string>
#include <vector>

#include "hcudp/node.h"
#include "hcudp_internal/host_fs.h"
#include "hcudp_internal/thread_annotations.h"
#include "node/ledger_read.h"

namespace hcudp {

class Node::Impl {
 public:
  explicit Impl(NodeOptions options);

  StatusOr<NodeInventory> Look();
  Holdings ReadHoldings() const { return internal::ReadLedger(ledger_); }
  StatusOr<NodeCreatedVhcu> CreateVhcu(int card, int compute_units, uint64_t memory_mib,
                                       bool force);
  StatusOr<NodeDestroyedVhcu> DestroyVhcu(int id, bool force);
  // Remembers the vHCUs of a look (after the fail-closed merge) as the last
  // good, for the next Look.
  void Remember(const NodeInventory& inventory);

  const Options options_;
  Clock& clock_;
  std::unique_ptr<Backend> backend_;
  // The node's files: made once, here, from the backend's host-root.
  const internal::HostFs fs_;
  internal::LedgerSources ledger_;
  std::chrono::milliseconds lock_timeout_;
  std::function<void(const std::string&)> on_lock_wait_;
  NodeState state_;
  std::vector<NodeWatcher::InventoryListener> listeners_;  // set before the watcher starts
  std::unique_ptr<NodeWatcher> watcher_;                   // after what its listeners use

 private:
  // A leaf: only copies are made under it.
  mutable Mutex mu_;
  std::vector<Vhcu> last_good_ HCUDP_GUARDED_BY(mu_);
};

}  // namespace hcudp

#endif  // HCUDP_SRC_NODE_NODE_IMPL_H_
