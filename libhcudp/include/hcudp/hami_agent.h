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
//
// Allocate (hcunum) finds the pod being bound from the node lock and the
// pod cache (never a LIST), serves the first container still to allocate,
// creates its vHCU (or marks whole cards), patches the pod and, after the
// last container, sets bind-phase success and releases the lock (exact
// namespace and name). Every failure undoes what it created, marks the pod
// failed, releases the lock, and returns the error. Allocates are
// serialised; each is bounded by allocate_deadline.
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
  // How long Start() waits for the pod cache before returning (the agent
  // keeps trying in the background; Allocate is Unavailable until then).
  std::chrono::milliseconds start_wait{10000};
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
  // InvalidArgument for bad options; otherwise OK (not being ready yet is
  // logged, and retried in the background).
  Status Start();
  // Stops the background work and joins the threads; idempotent.
  void Stop();
  // True once the pod cache synced and Recover ran.
  bool ready() const { return ready_.load(); }

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
  void EvictUnaccountedPods(const std::vector<MarkFile>& marks);
  void OnPodEvent(const PodEvent& event);
  std::set<std::string> LivePodUids() const;
  bool IsAllocating(const std::string& uid) const;

  StatusOr<PendingPod> FindPendingPod(std::chrono::steady_clock::time_point deadline);
  std::optional<Pod> FreshestPod(const std::string& namespace_name, const std::string& name);
  StatusOr<ContainerAllocation> AllocateOne(int device_count,
                                            std::chrono::steady_clock::time_point deadline);
  Status ServeContainer(PendingPod& pending, int device_count,
                        std::chrono::steady_clock::time_point deadline,
                        std::vector<hami::MarkFileName>* created, ContainerAllocation* out);
  void FailPod(const PendingPod& pending, const std::vector<hami::MarkFileName>& created,
               const Status& why);
  void ReleaseLock(const PendingPod& pending);
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

  std::mutex allocate_mu_;  // serialises Allocate
  // Guarded by allocate_mu_: the pod as our last patch returned it, by UID
  // (the cache may not have seen our own patch yet).
  std::map<std::string, Pod> patched_;

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
  std::thread thread_;
  bool started_ = false;
};

}  // namespace hcudp

#endif  // HCUDP_HAMI_AGENT_H_
