// DraMode: the daemon's DRA strategy (--strategy=dra, DESIGN.md §9): wiring
// between the library's DraAgent (preparer, slices, tick, health verdict,
// recover-before-serve; hcudp/dra/agent.h) and kubelet's sockets (DraPlugin).
// It owns the API client (kubeconfig as in HAMi mode), takes SIGTERM during
// the recovery, answers kubelet's calls claim by claim with metrics, asks
// for a slice resync on every kubelet (re-)registration and makes /metrics
// answer once kubelet has registered the plugin (the readiness probe).
//
// Thread-safety: OnNodeChanged runs on the monitor thread, the handler
// methods on gRPC threads; the agent synchronises itself.
#ifndef HCU_DP_DAEMON_DRA_MODE_H_
#define HCU_DP_DAEMON_DRA_MODE_H_

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "dra/dra_handler.h"
#include "dra/dra_plugin.h"
#include "hcudp/dra/agent.h"
#include "hcudp/kube_client.h"
#include "hcudp/node.h"
#include "hcudp/options.h"

namespace hcudp::daemon {

class DraMode : public dra::DraHandler {
 public:
  // Resolves the kubeconfig, builds the client and the agent on `node`;
  // nothing is served yet. A start-up input error (kubeconfig, CDI
  // directory, a bad name) is InvalidArgument naming the flag. `node` must
  // outlive the mode.
  static StatusOr<std::unique_ptr<DraMode>> New(const Options& options, Node& node);
  ~DraMode() override;

  // Recovers the checkpoint (which may wait for the API server), then starts
  // the agent and serves kubelet. A SIGTERM/SIGINT during the recovery (the
  // signals are blocked in every thread; it is taken here) ends it: Cancelled.
  Status Start();
  // Bounded; false when a kubelet call had to be left behind. Idempotent.
  bool Stop();

  void OnNodeChanged() { agent_->OnNodeChanged(); }
  // The mode's API client, shared with NodeOps (labels, events).
  KubeClient* client() const { return client_.get(); }

  // dra::DraHandler.
  StatusOr<std::map<std::string, dra::PrepareResult>> Prepare(
      const std::vector<dra::Claim>& claims, const dra::CallContext& call) override;
  StatusOr<std::map<std::string, std::string>> Unprepare(const std::vector<dra::Claim>& claims,
                                                         const dra::CallContext& call) override;
  std::vector<dra::DeviceHealth> HealthSnapshot() override { return agent_->Health(); }

 private:
  explicit DraMode(const Options& options) : options_(options) {}
  void ServeMetrics();
  // What a scrape reads for the driver's registration; shared with the
  // metrics endpoint, which outlives the mode: Stop() clears it.
  struct RegistrationView;

  const Options options_;
  std::atomic<bool> stopping_{false};
  std::unique_ptr<KubeClient> client_;
  std::unique_ptr<hcudp::dra::DraAgent> agent_;
  std::unique_ptr<dra::DraPlugin> plugin_;
  std::shared_ptr<RegistrationView> registration_view_;
  bool stopped_ = false;
};

}  // namespace hcudp::daemon

#endif  // HCU_DP_DAEMON_DRA_MODE_H_
