// The state the HAMi agent's parts share (agent_context.h).
#include "hami/agent_context.h"

#include "hcudp/hami/pending_pod.h"

namespace hcudp::internal {
namespace {

VhcuManagerOptions ManagerOptions(const HamiAgentOptions& o) {
  VhcuManagerOptions m;
  m.host_root = o.host_root;
  m.crash_after = o.crash_after;
  return m;
}

}  // namespace

bool PodEnded(const Pod& pod) { return pod.phase == "Succeeded" || pod.phase == "Failed"; }

std::string PodKey(const Pod& pod) { return pod.metadata.namespace_name + "/" + pod.metadata.name; }

// ---------------------------------------------------------------- ledger ----

bool PodLedger::Claim(const std::string& key) {
  MutexLock lock(mu_);
  return claimed_.insert(key).second;
}

void PodLedger::Unclaim(const std::string& key) {
  MutexLock lock(mu_);
  claimed_.erase(key);
}

bool PodLedger::InProgress(const std::string& key) const {
  MutexLock lock(mu_);
  return claimed_.count(key) > 0 || patched_.count(key) > 0;
}

std::optional<Pod> PodLedger::Patched(const std::string& key) const {
  MutexLock lock(mu_);
  auto it = patched_.find(key);
  if (it == patched_.end()) return std::nullopt;
  return it->second;
}

bool PodLedger::HasPatched(const std::string& key) const {
  MutexLock lock(mu_);
  return patched_.count(key) > 0;
}

void PodLedger::SetPatched(const std::string& key, Pod pod) {
  MutexLock lock(mu_);
  patched_[key] = std::move(pod);
}

void PodLedger::ErasePatched(const std::string& key) {
  MutexLock lock(mu_);
  patched_.erase(key);
}

void PodLedger::ErasePatchedOf(const std::string& key, const std::string& uid) {
  MutexLock lock(mu_);
  auto it = patched_.find(key);
  if (it != patched_.end() && it->second.metadata.uid == uid) patched_.erase(it);
}

bool PodLedger::Failed(const std::string& uid) const {
  MutexLock lock(mu_);
  return failed_uids_.count(uid) > 0;
}

void PodLedger::SetFailed(const std::string& uid) {
  MutexLock lock(mu_);
  failed_uids_.insert(uid);
}

void PodLedger::ClearFailed(const std::string& uid) {
  MutexLock lock(mu_);
  failed_uids_.erase(uid);
}

void PodLedger::Fail(const std::string& key, const std::string& uid) {
  MutexLock lock(mu_);
  patched_.erase(key);
  failed_uids_.insert(uid);
}

std::map<std::string, std::string> PodLedger::Unmarked() const {
  MutexLock lock(mu_);
  return unmarked_failures_;
}

void PodLedger::AddUnmarked(const std::string& key, const std::string& uid) {
  MutexLock lock(mu_);
  unmarked_failures_[key] = uid;
}

void PodLedger::EraseUnmarked(const std::string& key) {
  MutexLock lock(mu_);
  unmarked_failures_.erase(key);
}

// ------------------------------------------------------------- inventory ----

StatusOr<NodeInventory> InventoryCache::Refresh() {
  HCUDP_ASSIGN_OR_RETURN(NodeInventory inventory, look_());
  MutexLock lock(mu_);
  inventory_ = inventory;
  return inventory;
}

StatusOr<NodeInventory> InventoryCache::Get(bool fresh) {
  if (!fresh) {
    MutexLock lock(mu_);
    if (inventory_) return *inventory_;
  }
  return Refresh();
}

// --------------------------------------------------------------- context ----

AgentContext::AgentContext(Backend* backend_in, KubeClient* client_in, HamiAgentOptions options_in,
                           Clock& clock_in, NodeAccess node)
    : backend(backend_in),
      client(client_in),
      options(std::move(options_in)),
      clock(clock_in),
      vhcus(backend_in, ManagerOptions(options), clock_in),
      inventory(std::move(node.look)),
      holdings(std::move(node.holdings)),
      hcumem_resource(options.hcumem_resource),
      name_hcumem(std::move(node.hcumem_resource)) {}

void SeenNode::Set(NodeObject node, Clock::TimePoint at) {
  MutexLock lock(mu_);
  node_ = std::move(node);
  at_ = at;
}

std::optional<NodeObject> SeenNode::Get(Clock::TimePoint now,
                                        std::chrono::milliseconds max_age) const {
  MutexLock lock(mu_);
  if (!node_ || now - at_ > max_age) return std::nullopt;
  return node_;
}

CallOptions AgentContext::CallBy(Clock::TimePoint deadline) const {
  CallOptions call;
  call.deadline = deadline;
  call.cancel = &stopping;
  // kubelet's deadline: retries of its own inside it, none of the shared
  // ladder's long pauses.
  call.within_deadline = true;
  return call;
}

CallOptions AgentContext::BackgroundCall() const {
  CallOptions call;
  call.deadline = clock.Now() + options.background_call_deadline;
  call.cancel = &stopping;
  return call;
}

std::set<std::string> AgentContext::LivePodUids() const {
  std::set<std::string> live;
  for (const Pod& pod : pods->List()) {
    if (!PodEnded(pod)) live.insert(pod.metadata.uid);
  }
  return live;
}

bool AgentContext::IsLive(const std::string& uid, const std::set<std::string>& live) const {
  return live.count(uid) > 0 && !ledger.Failed(uid);
}

bool AgentContext::IsAllocating(const std::string& uid) const {
  if (ledger.Failed(uid)) return false;
  for (const Pod& pod : pods->List()) {
    if (pod.metadata.uid == uid && !PodEnded(pod) &&
        hami::IsAllocatingOn(pod.metadata.annotations, options.node_name)) {
      return true;
    }
  }
  return false;
}

}  // namespace hcudp::internal
