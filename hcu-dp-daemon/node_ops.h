// NodeOps: the daemon's node agent operations (DESIGN.md §10) — node labels
// (--node-labels) and Kubernetes Events (--events) — built from Options and
// fed by the node monitor. Everything that talks to the API server or writes
// a file runs on the publisher's and recorder's own threads: the hooks below
// only hand values over, so neither the monitor nor an Allocate ever waits.
#ifndef HCU_DP_DAEMON_NODE_OPS_H_
#define HCU_DP_DAEMON_NODE_OPS_H_

#include <memory>
#include <string>

#include "hcudp/device.h"
#include "hcudp/kube_client.h"
#include "hcudp/node_events.h"
#include "hcudp/node_labels.h"
#include "hcudp/options.h"
#include "hcudp/status.h"
#include "hcudp/vhcu_manager.h"

namespace hcudp::daemon {

class NodeOps {
 public:
  // Resolves the cluster credentials when a mode needs them. --events=auto
  // turns events on only when credentials and --node-name exist (else it
  // logs why not); --events=true or --node-labels=node without them is an
  // input error (exit 2). Nothing starts yet.
  static StatusOr<std::unique_ptr<NodeOps>> New(const Options& options);
  ~NodeOps();

  // Starts the publisher and the recorder (those that are on).
  Status Start();
  // Ends API calls in flight and joins the threads; idempotent.
  void Stop();

  // The node's inventory changed (the node monitor published).
  void OnInventory(const NodeInventory& inventory);
  // A card's reported health changed (after hysteresis), with the reason the
  // health source gave.
  void OnHealthChanged(const Card& card, Health health, const std::string& reason);
  // The vHCU journal recovery at start-up cleaned up after a crash.
  void OnVhcusRecovered(const VhcuSweepResult& result);

  bool labels_on() const { return labels_ != nullptr; }
  bool events_on() const { return events_ != nullptr; }

 private:
  NodeOps() = default;

  Strategy strategy_ = Strategy::kMixed;
  std::unique_ptr<KubeClient> client_;
  std::unique_ptr<NodeLabelPublisher> labels_;
  std::unique_ptr<EventRecorder> events_;
};

}  // namespace hcudp::daemon

#endif  // HCU_DP_DAEMON_NODE_OPS_H_
