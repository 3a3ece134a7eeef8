// HamiMode: the daemon's HAMi strategy — a Kubernetes client and a
// HamiAgent on the shared backend, and the Allocate delegate the hcunum and
// hcucores plugins use (DESIGN.md §5).
#ifndef HCU_DP_DAEMON_HAMI_MODE_H_
#define HCU_DP_DAEMON_HAMI_MODE_H_

#include <functional>
#include <memory>

#include "hcudp/backend.h"
#include "hcudp/hami_agent.h"
#include "hcudp/kube_client.h"
#include "hcudp/node_state.h"
#include "hcudp/options.h"
#include "plugin_service.h"

namespace hcudp::daemon {

#ifdef HCUDP_TEST_CRASH_POINTS
// Only in the test copy hcu-dp-daemon-crashpoints (never in the shipped
// daemon): set to "intent-recorded", "vhcu-created", "id-recorded" or
// "mark-written" and the daemon SIGKILLs itself right after that step of a
// vHCU creation (crash-safety tests).
inline constexpr char kCrashAfterEnv[] = "HCUDP_TEST_ONLY_CRASH_AFTER";
#endif

class HamiMode {
 public:
  // Resolves the kubeconfig (--kubeconfig/KUBECONFIG, in-cluster, ~/.kube)
  // and builds the agent; nothing is started. The registration publishes
  // the card health of `state` (the verdict ListAndWatch sends); `state`
  // must outlive the mode.
  // `on_recovered` gets the start-up vHCU journal recovery's result.
  static StatusOr<std::unique_ptr<HamiMode>> New(
      const Options& options, Backend& backend, const NodeState& state,
      std::function<void(const VhcuSweepResult&)> on_recovered = nullptr);
  ~HamiMode();

  // Starts the agent (pod cache, registration) and waits up to 10 s for it
  // to settle; call before serving. A SIGTERM/SIGINT (blocked, as the
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
  std::unique_ptr<HamiAgent> agent_;
};

}  // namespace hcudp::daemon

#endif  // HCU_DP_DAEMON_HAMI_MODE_H_
