// HamiAgent: HAMi mode on one node (DESIGN.md §5, reference/seed-behaviour.md
// §5) — the node registration the HCU scheduler reads, Allocate for the
// hcunum/hcucores resources, and the vHCU lifecycle driven by a pod cache.
//
// Background (two threads, plus the pod cache's; neither waits for the
// other, so a slow destroy or a busy vHCU lock never delays the handshake):
//   - registration (its own thread): hami.io/node-hcu-register,
//     hygon.com/node-hcu-register and hami.io/node-handshake-hcu, patched at
//     start, after every vHCU change and at least every register_interval
//     (unchanged lists are not re-sent, the handshake always is; nothing is
//     read first: one PATCH per interval, whose answer also serves the
//     sweep's stale-lock check); with
//     resource_multiple also status.capacity/allocatable <hcumem resource>
//     when the node's value differs; with topology_register the
//     kube-system/hcu-topology-info entry of this node when it changed. A
//     failed patch is retried after the client's RetryPolicy pause.
//   - lifecycle (the sweep thread): once the pod cache
//     (spec.nodeName=<node>) has synced, VhcuManager::Recover; then Reconcile
//     on every pod deletion or Succeeded/Failed transition and every
//     sweep_interval, and VhcuManager::Tick every second for busy-destroy
//     retries.
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
// Ready before advertised: the registration annotations are published only
// once ready() (below); an Allocate that comes before waits up to
// allocate_ready_wait for it. While the pod cache is not current (its
// history lost, a relist pending), the cards are registered unhealthy.
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

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hcudp/allocation.h"
#include "hcudp/backend.h"
#include "hcudp/clock.h"
#include "hcudp/export.h"
#include "hcudp/hami/size_rule.h"
#include "hcudp/kube_client.h"
#include "hcudp/node.h"
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
  // applied). Used with resource_multiple. Empty on a Node: named at Start()
  // after the Node's cards and naming policy, as the plugins' names are
  // ("hygon.com/hcumem" while it has none).
  std::string hcumem_resource = "hygon.com/hcumem";
  // Maintain kube-system/hcu-topology-info (--topology-register).
  bool topology_register = false;
  // Delete Running hcumem pods that hold no mark file. Default false.
  bool evict_unaccounted_pods = false;
  // Prefix of node files ("/" on a node). Required on a bare backend; on a
  // Node, empty means the Node's.
  std::string host_root;
  // Host path of the vendor runtime, mounted read-only at /opt/hyhal.
  std::string hyhal_path = "/opt/hyhal";
  // How often the handshake is rewritten (one PATCH of the Node, no GET);
  // the HAMi scheduler drops a node whose handshake is older than 60 s.
  // Default 30 s, as the seed plugin.
  std::chrono::milliseconds register_interval{30000};
  std::chrono::milliseconds sweep_interval{30000};
  std::chrono::milliseconds allocate_deadline{10000};
  // How long an Allocate that comes before the agent can serve it (not
  // ready, or the pod cache not current) waits for that, inside
  // allocate_deadline. Kubelet sets no deadline and admits one pod at a
  // time: keep it short. Default 4 s.
  std::chrono::milliseconds allocate_ready_wait{4000};
  // The part of allocate_deadline kept for the failure path.
  std::chrono::milliseconds failure_reserve{2500};
  // Deadline of each background API call (registration, sweep, lock checks).
  std::chrono::milliseconds background_call_deadline{10000};
  // How long Start() waits for the pod cache before returning (the agent
  // keeps trying in the background; Allocate is Unavailable until then).
  std::chrono::milliseconds start_wait{10000};
  // The daemon's health verdict for the card with this PCI address (after
  // its hysteresis: what ListAndWatch sends), or nullopt when it has none
  // yet (the card is then registered unhealthy). Unset: on a Node, the
  // Node's snapshot; on a bare backend, Discover()'s health.
  std::function<std::optional<Health>(const std::string& bdf)> card_health;
  // Called once, on the agent's thread, after the start-up journal recovery
  // (VhcuManager::Recover) succeeded, with what it did. Unset: nothing.
  std::function<void(const VhcuSweepResult&)> on_recovered;
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
  // On the node's one door (hcudp/node.h): the agent looks at the node
  // through Node::Look (fail closed), registers by the Node's ledger
  // (Node::ReadHoldings) and, unless `options` say otherwise, the Node's
  // host root and card health (its snapshot: what ListAndWatch sends).
  // `node` and `client` are not owned and must outlive the agent. The
  // agent runs on the client's clock (KubeClientOptions::clock): it times
  // every interval, backoff and deadline of the agent and its VhcuManager
  // and stamps the handshake (its wall time), and the deadlines the agent
  // hands to the client are measured on the same clock.
  HamiAgent(Node& node, KubeClient* client, HamiAgentOptions options);
  // The same on a bare backend (tests of the agent alone): raw discovery,
  // the ledger under options.host_root.
  HamiAgent(Backend* backend, KubeClient* client, HamiAgentOptions options);
  ~HamiAgent();  // Stop()s
  HamiAgent(const HamiAgent&) = delete;
  HamiAgent& operator=(const HamiAgent&) = delete;

  // Starts the pod cache and the background threads; waits up to start_wait
  // for the cache sync, the journal recovery and the first registration.
  // InvalidArgument for bad options; Cancelled when Stop() is called during
  // the wait; otherwise OK (not being ready yet is logged, and retried in
  // the background).
  Status Start();
  // Aborts API calls in flight (Allocates fail with Cancelled), stops the
  // background work and joins the threads; idempotent, any thread.
  void Stop();
  // True while Allocate can succeed: the pod cache synced and current (no
  // relist pending after a 410), the node lock checked and Recover done.
  // Nothing is registered before; what is registered says when it is lost
  // (the cards registered unhealthy).
  bool ready() const;
  // True once ready() and the first registration went through.
  bool settled() const;

  // hcunum: one allocation per container request; `device_counts[i]` is the
  // number of device IDs kubelet chose for request i.
  StatusOr<std::vector<ContainerAllocation>> AllocateCount(const std::vector<int>& device_counts);
  // hcucores: exactly one allocation (kfd and mkfd, rwm), whatever the
  // number of requests.
  StatusOr<std::vector<ContainerAllocation>> AllocateCores() const;

  // Asks the registration thread to re-register soon (e.g. after a node
  // change).
  void RequestRegister();

  class Impl;  // libhcudp/src/hami/agent_impl.h

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace hcudp

#endif  // HCUDP_HAMI_AGENT_H_
