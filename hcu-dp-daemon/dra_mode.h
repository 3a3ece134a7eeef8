// DraMode: the daemon's DRA strategy (--strategy=dra, DESIGN.md §9). It
// wires the library's DRA parts to the node monitor and to kubelet:
//   - a KubeClient (kubeconfig as in HAMi mode) and the Node's UID (the
//     slices' owner; one bounded GET at start, none if the API is down);
//   - the claim Preparer over a VhcuManager (the crash-safe vHCU lifecycle),
//     with Recover() before serving and Tick() every kTickPeriod;
//   - the SlicePublisher, fed the inventory (card health through the
//     monitor's hysteresis) on every node change, with the vHCUs this node
//     created for claims (or HAMi pods) left out: they are capacity taken
//     from a card, not devices of their own;
//   - the whole-card CDI spec, rewritten on every node change;
//   - the DraPlugin (kubelet's sockets), whose handler this is; a kubelet
//     (re-)registration asks the publisher for a resync, as kubelet deletes
//     the node's slices when it starts;
//   - the health stream: every prepared device, unhealthy when its card
//     (by BDF) is, pushed on every change;
//   - metrics (--metrics-address, DaemonMetrics::Active()): each claim's
//     Prepare/Unprepare by result and latency, the client's API requests,
//     and /metrics made to answer once kubelet has registered the plugin
//     (the readiness probe), with the driver as the registered resource.
// No device-plugin socket is served in this mode. After every Unprepare the
// tick thread gives free heap pages back to the kernel (malloc_trim).
//
// Thread-safety: OnNodeChanged runs on the monitor thread, the handler
// methods on gRPC threads, Tick on a thread of its own; the state they share
// is behind mu_ (a leaf lock, never held across I/O or a call out).
#ifndef HCU_DP_DAEMON_DRA_MODE_H_
#define HCU_DP_DAEMON_DRA_MODE_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "dra/dra_handler.h"
#include "dra/dra_plugin.h"
#include "hcudp/backend.h"
#include "hcudp/dra/preparer.h"
#include "hcudp/dra/slice_publisher.h"
#include "hcudp/kube_client.h"
#include "hcudp/node_state.h"
#include "hcudp/options.h"
#include "hcudp/vhcu_manager.h"
#include "hcudp_internal/thread_annotations.h"

namespace hcudp::daemon {

class DraMode : public dra::DraHandler {
 public:
  // How often Preparer::Tick runs (claims whose GET failed at start, vHCU
  // destroys to retry).
  static constexpr std::chrono::milliseconds kTickPeriod{2000};
  // Bound of one claim GET (kubelet's own call timeout is 45 s); a Prepare's
  // GET also ends before the call's deadline, leaving at most kAnswerMargin
  // (and at most a fifth of the time left) for the answer.
  static constexpr std::chrono::milliseconds kClaimGetTimeout{10000};
  static constexpr std::chrono::milliseconds kAnswerMargin{1000};
  // Bound of the Node GET at start.
  static constexpr std::chrono::milliseconds kNodeGetTimeout{3000};

  // Resolves the kubeconfig, builds the client, reads the Node's UID and
  // builds every part; nothing is served yet. A start-up input error
  // (kubeconfig, CDI directory) is InvalidArgument. `backend` and `state`
  // must outlive the mode.
  static StatusOr<std::unique_ptr<DraMode>> New(const Options& options, Backend& backend,
                                                const NodeState& state);
  ~DraMode() override;

  // Call once the node monitor has published the first snapshot: starts the
  // publisher, recovers the checkpoint (Preparer::Recover, which may wait
  // for the API server), then serves kubelet and starts the tick thread. A
  // SIGTERM/SIGINT during the recovery (the signals are blocked in every
  // thread; it is taken here) ends it at once: Cancelled.
  Status Start();
  // Bounded: API calls in flight are cancelled first. Returns false when a
  // kubelet call was still running and had to be left behind (the caller
  // must not destroy what it uses). Idempotent.
  bool Stop();

  // The node changed (the NodeState listener): whole-card spec, slices,
  // health stream.
  void OnNodeChanged();
  // The mode's API client, shared with NodeOps (labels, events).
  KubeClient* client() const { return client_.get(); }

  // dra::DraHandler.
  StatusOr<std::map<std::string, dra::PrepareResult>> Prepare(
      const std::vector<dra::Claim>& claims, const dra::CallContext& call) override;
  StatusOr<std::map<std::string, std::string>> Unprepare(const std::vector<dra::Claim>& claims,
                                                         const dra::CallContext& call) override;
  std::vector<dra::DeviceHealth> HealthSnapshot() override;

 private:
  DraMode(const Options& options, Backend& backend, const NodeState& state);
  // Recomputes the prepared devices' health; NotifyHealthChanged on change.
  void RefreshHealth();
  void TickLoop();
  // When a Prepare's claim GET must have ended, from kubelet's deadline.
  static std::optional<Clock::TimePoint> GetDeadline(const dra::CallContext& call);
  // The first kubelet registration makes /metrics answer.
  void ServeMetrics();

  // What a scrape reads for the driver's registration. Shared with the
  // metrics endpoint, which outlives the mode: Stop() clears it.
  struct RegistrationView;

  const Options options_;
  Backend& backend_;
  const NodeState& state_;
  std::atomic<bool> stopping_{false};  // cancels API calls in flight
  std::unique_ptr<KubeClient> client_;
  std::unique_ptr<VhcuManager> vhcus_;
  std::unique_ptr<hcudp::dra::Preparer> preparer_;
  std::unique_ptr<hcudp::dra::SlicePublisher> publisher_;
  std::unique_ptr<dra::DraPlugin> plugin_;
  std::shared_ptr<RegistrationView> registration_view_;

  // Serialises RefreshHealth, so that a list computed from an older state
  // never replaces a newer one. Held across Preparer::Prepared() and
  // NodeState::Current() (in-memory, leaf locks), never across I/O.
  Mutex refresh_mu_;
  Mutex mu_;  // a leaf
  std::condition_variable cv_;
  bool tick_stop_ HCUDP_GUARDED_BY(mu_) = false;
  // An Unprepare finished: the tick thread returns free memory (malloc_trim).
  bool trim_requested_ HCUDP_GUARDED_BY(mu_) = false;
  // The health stream's list, without timestamps (compared for changes).
  std::vector<dra::DeviceHealth> health_ HCUDP_GUARDED_BY(mu_);
  std::thread ticker_;
  bool started_ = false;  // Start() got as far as serving; Start/Stop thread only
  bool stopped_ = false;
};

}  // namespace hcudp::daemon

#endif  // HCU_DP_DAEMON_DRA_MODE_H_
