// HamiMode: the daemon's HAMi strategy — a Kubernetes client and a
// HamiAgent on the node's one door (hcudp/node.h), and the Allocate
// delegate the hcunum and hcucores plugins use (DESIGN.md §5).
#ifndef HCU_DP_DAEMON_HAMI_MODE_H_
#define HCU_DP_DAEMON_HAMI_MODE_H_

#include <functional>
#include <memory>
#include <mutex>

#include "hcudp/hami_agent.h"
#include "hcudp/kube_client.h"
#include "hcudp/node.h"
#include "hcudp/options.h"
#include "plugin_service.h"

namespace hcudp::daemon {

class HamiMode {
 public:
  // Resolves the kubeconfig (--kubeconfig/KUBECONFIG, in-cluster, ~/.kube)
  // and the agent's options; nothing is started, the agent is built by
  // Start() (after the node watcher's first look, whose cards name the
  // hcumem resource). `node` must outlive the mode.
  // `on_recovered` gets the start-up vHCU journal recovery's result.
  static StatusOr<std::unique_ptr<HamiMode>> New(
      const Options& options, Node& node,
      std::function<void(const VhcuSweepResult&)> on_recovered = nullptr);
  ~HamiMode();

  // Builds and starts the agent (pod cache, registration) and waits up to
  // 10 s for it to settle; call once, after the node watcher started and
  // before serving. A SIGTERM/SIGINT (blocked, as the
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
  HamiMode(Node& node, NamingPolicy naming_policy) : node_(node), naming_policy_(naming_policy) {}
  // The agent once Start() made it, else null.
  HamiAgent* agent();
  grpc::Status Allocate(DeviceKind kind, const v1beta1::AllocateRequest& request,
                        v1beta1::AllocateResponse* response);

  Node& node_;
  const NamingPolicy naming_policy_;
  std::unique_ptr<KubeClient> client_;
  HamiAgentOptions agent_options_;  // moved into the agent by Start()
  // Guards agent_'s creation against RequestRegister and Stop, which the
  // node watcher's thread and the signal path may call at any time; held
  // only for the pointer (and Stop), never across the agent's Start.
  std::mutex mu_;
  std::unique_ptr<HamiAgent> agent_;
};

}  // namespace hcudp::daemon

#endif  // HCU_DP_DAEMON_HAMI_MODE_H_
