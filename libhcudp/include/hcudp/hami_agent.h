// HamiAgent: HAMi mode on one node (DESIGN.md §5, reference/seed-behaviour.md
// §5) — the node registration the HCU scheduler reads, Allocate for the
// hcunum/hcucores resources, and the vHCU lifecycle driven by a pod cache.
//
// Background (one thread, plus the pod cache's):
//   - registration: hami.io/node-hcu-register, hygon.com/node-hcu-register
//     and hami.io/node-handshake-hcu, patched at start, after every vHCU
//     change and at least every register_interval (unchanged lists are not
//     re-sent, the handshake always is); with resource_multiple also
//     status.capacity/allocatable <hcumem resource> when the node's value
//     differs; with topology_register the kube-system/hcu-topology-info
//     entry of this node when it changed. A failed patch is retried in 5 s.
//   - lifecycle: once the pod cache (spec.nodeName=<node>) has synced,
//     VhcuManager::Recover; then Reconcile on every pod deletion or
//     Succeeded/Failed transition and every sweep_interval, and
//     VhcuManager::Tick every second for busy-destroy retries.
//   - opt-in (evict_unaccounted_pods): Running pods that request hcumem and
//     hold no mark file are deleted with a UID precondition.
//   - stale node lock: at the first sync and on every sweep, a
//     hami.io/mutex.lock whose pod's Allocate can no longer complete is
//     released (exact value): the pod is gone, has ended, is bound to another
//     node or no longer allocating on this one, its Allocate failed in this
//     process, or the lock was already there when this process started and
//     no Allocate of this process has served the pod. A pod still allocating
//     on this node is marked bind-phase=failed as the failure path does, and
//     its vHCUs are reconciled (it no longer counts as live). A lock whose pod
//     is being allocated here, or not bound yet, is left alone.
//
// Health: registration publishes `card_health` (the daemon's verdict, what
// ListAndWatch sends) when set; Discover()'s raw health only without it.
//
// Deadlines: every API call carries a deadline and the agent's stop flag
// (KubeClient CallOptions), so Stop() aborts calls in flight within ~50 ms.
//
// Allocate (hcunum) finds the pod being bound from the node lock and the
// pod cache (never a LIST), serves the first container still to allocate,
// creates its vHCU (or marks whole cards), patches the pod and, after the
// last container, sets bind-phase success and releases the lock (exact
// namespace and name). Every failure undoes what it created, marks the pod
// failed, releases the lock, and returns the error. One Allocate per pod at a
// time (a second one for the same pod is refused); no lock is held across an
// API call. Each Allocate returns by allocate_deadline, failure path
// included: the work gets allocate_deadline - failure_reserve, and marking
// the pod failed and releasing the lock get what is left. What the failure
// path could not finish is retried by the next sweep (stale lock above).
//
// Thread-safety: all public methods may be called from any thread.
#ifndef HCUDP_HAMI_AGENT_H_
#define HCUDP_HAMI_AGENT_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "hcudp/allocation.h"
#include "hcudp/backend.h"
#include "hcudp/export.h"
#include "hcudp/hami/size_rule.h"
#include "hcudp/kube_client.h"
#include "hcudp/kube_objects.h"
#include "hcudp/pod_cache.h"
#include "hcudp/status.h"
#include "hcudp/vhcu_manager.h"

namespace hcudp {

struct HamiAgentOptions {
  // Required: this node's name (--node-name).
  std::string node_name;
  // vHCUs per card (--device-split-count). Default 4.
  int split_count = 4;
  // Also report hcumem in node status (--resource-multiple). Default false.
  bool resource_multiple = false;
  // The node-status resource, e.g. "hygon.com/hcumem" (naming policy
  // applied). Used with resource_multiple.
  std::string hcumem_resource = "hygon.com/hcumem";
  // Maintain kube-system/hcu-topology-info (--topology-register).
  bool topology_register = false;
  // Delete Running hcumem pods that hold no mark file. Default false.
  bool evict_unaccounted_pods = false;
  // Prefix of node files ("/" on a node). Required.
  std::string host_root;
  // Host path of the vendor runtime, mounted read-only at /opt/hyhal.
  std::string hyhal_path = "/opt/hyhal";
  // Wall clock. Default system_clock::now.
  std::function<std::chrono::system_clock::time_point()> now;
  std::chrono::milliseconds register_interval{20000};
  std::chrono::milliseconds sweep_interval{30000};
  std::chrono::milliseconds allocate_deadline{10000};
  // The part of allocate_deadline kept for the failure path.
  std::chrono::milliseconds failure_reserve{2500};
  // Deadline of each background API call (registration, sweep, lock checks).
  std::chrono::milliseconds background_call_deadline{10000};
  // How long Start() waits for the pod cache before returning (the agent
  // keeps trying in the background; Allocate is Unavailable until then).
  std::chrono::milliseconds start_wait{10000};
  // The daemon's health verdict for the card with this PCI address (after
  // its hysteresis: what ListAndWatch sends), or nullopt when it has none
  // yet (the card is then registered unhealthy). Unset: Discover()'s health.
  std::function<std::optional<Health>(const std::string& bdf)> card_health;
  // Testing only: passed to VhcuManagerOptions::crash_after.
  std::function<bool(VhcuCreateStep)> crash_after;
};

// One Kubernetes permission the HAMi code uses.
struct RbacRule {
  std::string resource;  // "nodes", "nodes/status", "pods", "configmaps"
  std::string verb;      // "get", "patch", ...
  // Needed only with evict_unaccounted_pods.
  bool opt_in = false;
};
// Every (resource, verb) the agent's calls need, one entry per kube_ops call
// site kind, sorted and without duplicates. The RBAC of the HAMi manifests
// (manifests/rbac-verbs.txt) must grant exactly the non-opt-in ones.
HCUDP_EXPORT std::vector<RbacRule> HamiRbacRules();

class HCUDP_EXPORT HamiAgent {
 public:
  // `backend` and `client` are not owned and must outlive the agent.
  HamiAgent(Backend* backend, KubeClient* client, HamiAgentOptions options);
  ~HamiAgent();  // Stop()s
  HamiAgent(const HamiAgent&) = delete;
  HamiAgent& operator=(const HamiAgent&) = delete;

  // Starts the pod cache and the background thread; waits up to start_wait
  // for the cache sync, the journal recovery and the first registration.
  // InvalidArgument for bad options; Cancelled when Stop() is called during
  // the wait; otherwise OK (not being ready yet is logged, and retried in
  // the background).
  Status Start();
  // Aborts API calls in flight (Allocates fail with Cancelled), stops the
  // background work and joins the threads; idempotent, any thread.
  void Stop();
  // True once the pod cache synced and Recover ran.
  bool ready() const { return ready_.load(); }
  // True once ready() and the first registration went through.
  bool settled() const { return ready_.load() && first_register_done_.load(); }

  // hcunum: one allocation per container request; `device_counts[i]` is the
  // number of device IDs kubelet chose for request i.
  StatusOr<std::vector<ContainerAllocation>> AllocateCount(const std::vector<int>& device_counts);
  // hcucores: exactly one allocation (kfd and mkfd, rwm), whatever the
  // number of requests.
  StatusOr<std::vector<ContainerAllocation>> AllocateCores() const;

  // Asks the background thread to re-register soon (e.g. after a node change).
  void RequestRegister();

 private:
  struct PendingPod {
    Pod pod;
    std::string lock_value;  // the node lock, when this pod holds it
  };

  std::chrono::system_clock::time_point Now() const;
  void Loop();
  bool SyncAndRecover();
  void RegisterIfDue(bool force);
  Status Register(bool lists_only_if_changed);
  void ReportHcumem(const NodeInventory& inventory, const Node& node);
  void ReportTopology(const NodeInventory& inventory);
  void Sweep();
  // Releases the node lock when its pod's Allocate can no longer complete
  // (see the header comment). `first` at the first sync.
  void ReleaseStaleLock(bool first);
  // Retries the bind-phase=failed patches the failure path could not make.
  void MarkUnmarkedFailures();
  // Liveness for Reconcile: live in the cache and not failed by us.
  bool IsLive(const std::string& uid, const std::set<std::string>& live) const;
  CallOptions BackgroundCall() const;
  // Waits up to `delay` for Stop(); true when stopping.
  bool WaitForStop(std::chrono::milliseconds delay);
  void EvictUnaccountedPods(const std::vector<MarkFile>& marks);
  void OnPodEvent(const PodEvent& event);
  std::set<std::string> LivePodUids() const;
  bool IsAllocating(const std::string& uid) const;

  StatusOr<PendingPod> FindPendingPod(std::chrono::steady_clock::time_point deadline);
  std::optional<Pod> FreshestPod(const std::string& namespace_name, const std::string& name);
  StatusOr<ContainerAllocation> AllocateOne(int device_count,
                                            std::chrono::steady_clock::time_point work_deadline,
                                            std::chrono::steady_clock::time_point hard_deadline);
  Status ServeContainer(PendingPod& pending, int device_count,
                        std::chrono::steady_clock::time_point work_deadline,
                        std::chrono::steady_clock::time_point hard_deadline,
                        std::vector<hami::MarkFileName>* created, ContainerAllocation* out);
  void FailPod(const PendingPod& pending, const std::vector<hami::MarkFileName>& created,
               const Status& why, std::chrono::steady_clock::time_point deadline);
  void ReleaseLock(const PendingPod& pending, std::chrono::steady_clock::time_point deadline);
  // Marks pod "ns/name" as having an Allocate (or a lock release) in
  // progress; false when it already has one.
  bool Claim(const std::string& key);
  void Unclaim(const std::string& key);
  CallOptions CallBy(std::chrono::steady_clock::time_point deadline) const;
  ContainerAllocation CommonEdits() const;
  // The vHCU a mark of `owner` on the plan's card already holds, when it
  // has the planned size (a retried Allocate).
  std::optional<CreatedVhcu> MarkedVhcu(const VhcuOwner& owner, const hami::DevicePlan& plan);
  // The cards as the registration loop last saw them (they change only
  // with hardware or driver events); Discover()s when there is none yet.
  StatusOr<NodeInventory> CardInventory(bool fresh);

  Backend* const backend_;
  KubeClient* const client_;
  const HamiAgentOptions options_;
  VhcuManager vhcus_;
  std::unique_ptr<PodCache> pods_;

  // Never held across an API call or a backend call.
  mutable std::mutex pods_mu_;
  // Guarded by pods_mu_: the pod as our last patch returned it, by
  // "ns/name", while more of its containers are to be served (the cache may
  // not have seen our own patch yet).
  std::map<std::string, Pod> patched_;
  // Guarded by pods_mu_: pods ("ns/name") with an Allocate or a stale-lock
  // release in progress.
  std::set<std::string> claimed_;
  // Guarded by pods_mu_: UIDs of pods whose allocation failed here (they no
  // longer hold vHCUs; their lock is released by the next sweep if the
  // failure path could not).
  std::set<std::string> failed_uids_;
  // Guarded by pods_mu_: pods ("ns/name" -> UID) failed here whose
  // bind-phase=failed patch did not go through; the sweep retries it.
  std::map<std::string, std::string> unmarked_failures_;
  // Set by Stop(): the cancel flag of every API call.
  std::atomic<bool> stopping_{false};

  std::mutex inventory_mu_;
  std::optional<NodeInventory> inventory_;  // guarded by inventory_mu_

  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;               // guarded by mu_
  bool register_requested_ = true;  // guarded by mu_
  bool sweep_requested_ = false;    // guarded by mu_
  std::atomic<bool> ready_{false};
  std::atomic<bool> first_register_done_{false};

  // Background thread only.
  std::string last_full_;
  std::string last_remaining_;
  std::chrono::steady_clock::time_point last_handshake_{};
  std::chrono::steady_clock::time_point next_register_retry_{};
  std::optional<uint64_t> last_hcumem_mib_;
  std::string last_topology_;
  std::chrono::steady_clock::time_point next_sweep_{};
  // The node lock found at the first sync (left by an earlier process).
  std::string inherited_lock_;
  bool inherited_known_ = false;
  std::thread thread_;
  bool started_ = false;
};

}  // namespace hcudp

#endif  // HCUDP_HAMI_AGENT_H_
