// HamiMode: the daemon's HAMi strategy — a Kubernetes client and a
// HamiAgent on the node's one door (hcudp/node.h), and the Allocate
// delegate the hcunum and hcucores plugins use (DESIGN.md §5).
#ifndef HCU_DP_DAEMON_HAMI_MODE_H_
#define HCU_DP_DAEMON_HAMI_MODE_H_

#include <functional>
#include <memory>

#include "hcudp/hami_agent.h"
#include "hcudp/kube_client.h"
#include "hcudp/node.h"
#include "hcudp/options.h"
#include "plugin_service.h"

namespace hcudp::daemon {

class HamiMode {
 public:
  // Resolves the kubeconfig (--kubeconfig/KUBECONFIG, in-cluster, ~/.kube)
  // and builds the agent on `node`; nothing is started. `node` must outlive
  // the mode.
  // `on_recovered` gets the start-up vHCU journal recovery's result.
  static StatusOr<std::unique_ptr<HamiMode>> New(
      const Options& options, Node& node,
      std::function<void(const VhcuSweepResult&)> on_recovered = nullptr);
  ~HamiMode();

  // Starts the agent (pod cache, registration) and waits up to 10 s for it
  // to settle; call once, after the node watcher started (its first look
  // names the hcumem resource) and before serving. A SIGTERM/SIGINT (blocked, as the
  // daemon keeps them) ends the wait at once: Cancelled.
  Status Start();
  // Aborts API calls in flight (an Allocate waiting on the API server
  // fails at once) and stops the agent. Call before stopping the servers.
  void Stop();
  // The node changed (health, cards): re-register soon.
  void RequestRegister();
  AllocateDelegate Delegate();
  // Whether the agent can serve an Allocate now (HamiAgent::ready): the
  // devices towards kubelet are healthy only while it can.
  std::function<bool()> Ready();
  // The mode's API client, shared with NodeOps (labels, events); lives as
  // long as the mode.
  KubeClient* client() const { return client_.get(); }

 private:
  HamiMode() = default;
  grpc::Status Allocate(DeviceKind kind, const v1beta1::AllocateRequest& request,
                        v1beta1::AllocateResponse* response);

  std::unique_ptr<KubeClient> client_;
  std::unique_ptr<HamiAgent> agent_;  // after the client it uses
};

}  // namespace hcudp::daemon

#endif  // HCU_DP_DAEMON_HAMI_MODE_H_
