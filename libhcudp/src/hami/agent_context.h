// The parts of the HAMi agent (hcudp/hami_agent.h) and what they share.
// Internal to the agent.
//
// One job each, wired by HamiAgent::Impl (agent_impl.h):
//   Registrar   (registrar.h)   node registration and the handshake; own thread
//   Allocator   (allocator.h)   Allocate; the caller's (kubelet's) threads
//   Sweeper     (sweeper.h)     Recover, Reconcile, Tick; own thread
//   StaleLock   (stale_lock.h)  the stale node lock; the sweep thread
//   Evictor     (evictor.h)     the opt-in pod killer; the sweep thread
//   PodLedger, InventoryCache   shared in-memory state (below)
//
// Locks: every lock of the agent is a leaf, held only to read or write its
// own fields: never across an API call, a backend or VhcuManager call, a
// file operation, a sleep or a wait on another lock. (A Wakeup's lock is held
// while its waiter polls PodCache::HasSynced, which takes the cache's lock.)
// Below the agent: the host-wide vHCU lock, then VhcuManager's state lock
// (vhcu_manager_impl.h), then the backend's and the vendor library's locks.
#ifndef HCUDP_SRC_HAMI_AGENT_CONTEXT_H_
#define HCUDP_SRC_HAMI_AGENT_CONTEXT_H_

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "hcudp/backend.h"
#include "hcudp/clock.h"
#include "hcudp/hami_agent.h"
#include "hcudp/kube_client.h"
#include "hcudp/kube_objects.h"
#include "hcudp/ledger.h"
#include "hcudp/pod_cache.h"
#include "hcudp/vhcu_manager.h"
#include "hcudp_internal/thread_annotations.h"

namespace hcudp::internal {

// What this process knows about pods beyond the pod cache. Any thread.
class PodLedger {
 public:
  // Marks pod "ns/name" as having an Allocate (or a lock release) in
  // progress; false when it already has one.
  bool Claim(const std::string& key) HCUDP_EXCLUDES(mu_);
  void Unclaim(const std::string& key) HCUDP_EXCLUDES(mu_);
  // Claimed, or served in part (more containers to come).
  bool InProgress(const std::string& key) const HCUDP_EXCLUDES(mu_);

  // The pod as our last patch returned it, while more of its containers are
  // to be served (the cache may not have seen our own patch yet).
  std::optional<Pod> Patched(const std::string& key) const HCUDP_EXCLUDES(mu_);
  bool HasPatched(const std::string& key) const HCUDP_EXCLUDES(mu_);
  void SetPatched(const std::string& key, Pod pod) HCUDP_EXCLUDES(mu_);
  void ErasePatched(const std::string& key) HCUDP_EXCLUDES(mu_);
  // Erases the patched copy of `key` when it is of the pod with `uid`.
  void ErasePatchedOf(const std::string& key, const std::string& uid) HCUDP_EXCLUDES(mu_);

  // Pods (by UID) whose allocation failed here: they no longer hold vHCUs;
  // their lock is released by the next sweep if the failure path could not.
  bool Failed(const std::string& uid) const HCUDP_EXCLUDES(mu_);
  void SetFailed(const std::string& uid) HCUDP_EXCLUDES(mu_);
  void ClearFailed(const std::string& uid) HCUDP_EXCLUDES(mu_);
  // The failure path: the pod holds nothing any more.
  void Fail(const std::string& key, const std::string& uid) HCUDP_EXCLUDES(mu_);

  // Pods ("ns/name" -> UID) failed here whose bind-phase=failed patch did not
  // go through; the sweep retries it.
  std::map<std::string, std::string> Unmarked() const HCUDP_EXCLUDES(mu_);
  void AddUnmarked(const std::string& key, const std::string& uid) HCUDP_EXCLUDES(mu_);
  void EraseUnmarked(const std::string& key) HCUDP_EXCLUDES(mu_);

 private:
  mutable Mutex mu_;
  std::set<std::string> claimed_ HCUDP_GUARDED_BY(mu_);
  std::map<std::string, Pod> patched_ HCUDP_GUARDED_BY(mu_);
  std::set<std::string> failed_uids_ HCUDP_GUARDED_BY(mu_);
  std::map<std::string, std::string> unmarked_failures_ HCUDP_GUARDED_BY(mu_);
};

// How the agent reads the node: a look at it, and the ownership ledger.
// HamiAgent's Node constructor gives the Node's (Node::Look, fail closed,
// and Node::ReadHoldings); the Backend one a raw discovery and the ledger
// under host_root.
struct NodeAccess {
  std::function<StatusOr<NodeInventory>()> look;
  std::function<Holdings()> holdings;
  // The hcumem resource when HamiAgentOptions::hcumem_resource is empty.
  std::function<std::string()> hcumem_resource;
};

// The cards as the registration last saw them (they change only with
// hardware or driver events). Any thread.
class InventoryCache {
 public:
  explicit InventoryCache(std::function<StatusOr<NodeInventory>()> look) : look_(std::move(look)) {}
  // Looks at the node and keeps the result.
  StatusOr<NodeInventory> Refresh() HCUDP_EXCLUDES(mu_);
  // The kept inventory; Refresh()es when there is none yet or `fresh`.
  StatusOr<NodeInventory> Get(bool fresh) HCUDP_EXCLUDES(mu_);

 private:
  const std::function<StatusOr<NodeInventory>()> look_;
  Mutex mu_;
  std::optional<NodeInventory> inventory_ HCUDP_GUARDED_BY(mu_);
};

// The Node as the registrar's last write returned it, and when: the sweep
// reads the node lock from it instead of a GET of its own (one request per
// interval, the handshake, not two). Any thread.
class SeenNode {
 public:
  void Set(NodeObject node, Clock::TimePoint at) HCUDP_EXCLUDES(mu_);
  // The node, if seen at `now - max_age` or later.
  std::optional<NodeObject> Get(Clock::TimePoint now, std::chrono::milliseconds max_age) const
      HCUDP_EXCLUDES(mu_);

 private:
  mutable Mutex mu_;
  std::optional<NodeObject> node_ HCUDP_GUARDED_BY(mu_);
  Clock::TimePoint at_ HCUDP_GUARDED_BY(mu_);
};

// What the parts share; owned by HamiAgent::Impl.
struct AgentContext {
  AgentContext(Backend* backend, KubeClient* client, HamiAgentOptions options, Clock& clock,
               NodeAccess node);

  // A call that ends by `deadline` or when the agent stops, for a caller
  // with its own deadline (Allocate): CallOptions::within_deadline.
  CallOptions CallBy(Clock::TimePoint deadline) const;
  // A background call: background_call_deadline from now; its retries wait
  // a fresh ladder unless the caller sets CallOptions::backoff (its loop's).
  CallOptions BackgroundCall() const;
  // Live in the cache (not Succeeded or Failed) and not failed here.
  bool IsLive(const std::string& uid, const std::set<std::string>& live) const;
  // UIDs of the cached pods that have not ended.
  std::set<std::string> LivePodUids() const;
  // Live, allocating on this node, and not failed here.
  bool IsAllocating(const std::string& uid) const;

  Backend* const backend;
  KubeClient* const client;
  const HamiAgentOptions options;
  Clock& clock;
  VhcuManager vhcus;
  std::unique_ptr<PodCache> pods;  // set by Start(), before any thread runs
  PodLedger ledger;
  InventoryCache inventory;
  // Who holds what, read now (the registration's offer rule).
  const std::function<Holdings()> holdings;
  // The node-status resource; named by Start(), before any thread runs.
  std::string hcumem_resource;
  const std::function<std::string()> name_hcumem;
  SeenNode seen_node;
  // Set by Stop(): the cancel flag of every API call.
  std::atomic<bool> stopping{false};
  // The pod cache synced, the node lock was checked and Recover ran (once;
  // never cleared).
  std::atomic<bool> ready{false};

  // Allocate can succeed now: ready, and the pod cache current (no event
  // missed: PodCache::Current). What the agent advertises follows it.
  bool Servable() const { return ready.load() && pods != nullptr && pods->Current(); }
};

bool PodEnded(const Pod& pod);
std::string PodKey(const Pod& pod);  // "ns/name"

}  // namespace hcudp::internal

#endif  // HCUDP_SRC_HAMI_AGENT_CONTEXT_H_
