// Allocator::AllocateCount / AllocateCores: reference/seed-behaviour.md §5.4
// with the defects of §8.15-8.20 fixed (see hami_agent.h).

#include <algorithm>
#include <cstdlib>

#include "hami/allocator.h"
#include "hcudp/hami/container_index.h"
#include "hcudp/hami/keys.h"
#include "hcudp/hami/mark_file.h"
#include "hcudp/hami/node_lock.h"
#include "hcudp/hami/pending_pod.h"
#include "hcudp/hami/pod_devices.h"
#include "hcudp/hami/size_rule.h"
#include "hcudp/hami_agent.h"
#include "hcudp/kube_ops.h"
#include "hcudp_internal/host_fs.h"
#include "hcudp_internal/log.h"

namespace hcudp::internal {
namespace {

constexpr int kFindAttempts = 5;
constexpr std::chrono::milliseconds kFindRetryDelay{200};
constexpr char kVdevContainerDir[] = "/etc/vdev/docker/";

std::string Annotation(const Pod& pod, std::string_view key) {
  auto it = pod.metadata.annotations.find(std::string(key));
  return it == pod.metadata.annotations.end() ? std::string() : it->second;
}

std::string PodName(const Pod& pod) { return PodKey(pod); }

// kfd, mkfd where the node has it (containerd fails a container whose device
// is missing), and HCU_VISIBLE_DEVICES=void so that Hygon's runtime adds no
// card of its own (DESIGN §4.5). Kept as it was: kfd is given even when the
// node lacks it (AllocationBuilder checks has_kfd), with "rwm" where the
// builder gives "rw".
ContainerAllocation CommonEdits(const NodeInventory& inventory) {
  ContainerAllocation out;
  const std::string kfd(host_path::kDevKfd);
  const std::string mkfd(host_path::kDevMkfd);
  out.devices.push_back({kfd, kfd, "rwm"});
  if (inventory.has_mkfd) out.devices.push_back({mkfd, mkfd, "rwm"});
  out.envs.emplace_back(kVisibleDevicesEnv, kVisibleDevicesVoid);
  return out;
}

bool IsPendingOn(const Pod& pod, const std::string& node) {
  return pod.phase == "Pending" && pod.node_name == node &&
         hami::IsAllocatingOn(pod.metadata.annotations, node);
}

// The newer of two copies of one pod: resourceVersions are etcd revisions,
// compared as numbers; when either is not a number, `ours` wins.
const Pod& Newer(const Pod& cached, const Pod& ours) {
  char* end1 = nullptr;
  char* end2 = nullptr;
  unsigned long long a = std::strtoull(cached.metadata.resource_version.c_str(), &end1, 10);
  unsigned long long b = std::strtoull(ours.metadata.resource_version.c_str(), &end2, 10);
  if (end1 == cached.metadata.resource_version.c_str() || *end1 != '\0' ||
      end2 == ours.metadata.resource_version.c_str() || *end2 != '\0') {
    return ours;
  }
  return a > b ? cached : ours;
}

}  // namespace

Allocator::Allocator(AgentContext& ctx, Wakeup& stop, std::function<void()> on_done)
    : ctx_(ctx), stop_(stop), on_done_(std::move(on_done)) {}

Status Allocator::CheckDeadline(Clock::TimePoint deadline, std::string_view step) const {
  if (ctx_.clock.Now() <= deadline) return OkStatus();
  return DeadlineExceededError("HAMi Allocate ran out of time before " + std::string(step));
}

std::optional<CreatedVhcu> Allocator::MarkedVhcu(const VhcuOwner& owner,
                                                 const hami::DevicePlan& plan) {
  auto marks = ListMarkFiles(ctx_.options.host_root, nullptr);
  if (!marks.ok()) return std::nullopt;
  std::optional<NodeInventory> inventory;  // discovered once, at the first matching mark
  for (const MarkFile& mark : *marks) {
    const hami::MarkFileName& n = mark.name;
    if (n.pod_uid != owner.pod_uid || n.container != owner.container || n.card != plan.card ||
        n.whole_card()) {
      continue;
    }
    if (!inventory) {
      auto discovered = ctx_.backend->Discover();
      if (!discovered.ok()) return std::nullopt;
      inventory = std::move(discovered).value();
    }
    Lookup<Vhcu> found = inventory->LookupVhcu(n.vhcu_id);
    if (found.certainty() == Certainty::kUnknown) {
      LOG(WARNING) << "HAMi: " << mark.path << ": " << found.why() << "; not reused";
      continue;
    }
    const Vhcu* v = found.certainty() == Certainty::kFound ? &found.value() : nullptr;
    if (v != nullptr && v->card == plan.card && v->compute_units == plan.vhcu_compute_units &&
        v->memory_mib == plan.vhcu_memory_mib) {
      LOG(INFO) << "HAMi: reusing vHCU " << v->id << " of " << mark.path << " (a retried Allocate)";
      return CreatedVhcu{*v, mark};
    }
  }
  return std::nullopt;
}

StatusOr<std::vector<ContainerAllocation>> Allocator::AllocateCores() const {
  HCUDP_ASSIGN_OR_RETURN(NodeInventory inventory, ctx_.inventory.Get(/*fresh=*/false));
  return std::vector<ContainerAllocation>{CommonEdits(inventory)};
}

StatusOr<std::vector<ContainerAllocation>> Allocator::AllocateCount(
    const std::vector<int>& device_counts) {
  if (ctx_.stopping) return UnavailableError("HAMi: the device plugin is stopping");
  // The whole Allocate, failure path included, ends by `hard`; the work
  // leaves failure_reserve of it for marking the pod failed and releasing
  // the lock.
  const auto start = ctx_.clock.Now();
  // Kubelet does not retry a failed Allocate (the pod fails admission), and
  // admits pods one at a time: one that comes before the agent can serve it
  // (nothing is advertised before, but kubelet may ask anyway) waits a
  // short, bounded time for readiness.
  const auto ready_by =
      start + std::min(ctx_.options.allocate_ready_wait, ctx_.options.allocate_deadline);
  while (!ctx_.Servable() && !stop_.stopped() && ctx_.clock.Now() < ready_by) {
    stop_.WaitUntil(std::min(ready_by, ctx_.clock.Now() + std::chrono::milliseconds(50)));
  }
  if (stop_.stopped()) return Status(StatusCode::kCancelled, "HAMi: the device plugin is stopping");
  if (!ctx_.Servable()) {
    return UnavailableError("HAMi: node " + ctx_.options.node_name + " is not ready (" +
                            (ctx_.ready ? "pod cache not current: relisting"
                                        : "pod cache sync, node lock check, vHCU recovery") +
                            ") after waiting " +
                            std::to_string(ctx_.options.allocate_ready_wait.count()) + " ms");
  }
  const auto hard = start + ctx_.options.allocate_deadline;
  const auto work = std::max(start, hard - ctx_.options.failure_reserve);
  std::vector<ContainerAllocation> out;
  Status failed;
  for (int count : device_counts) {
    auto one = AllocateOne(count, work, hard);
    if (!one.ok()) {
      failed = one.status();
      break;
    }
    out.push_back(std::move(*one));
  }
  if (on_done_) on_done_();
  if (!failed.ok()) return failed;
  return out;
}

std::optional<Pod> Allocator::FreshestPod(const std::string& namespace_name,
                                          const std::string& name) {
  std::optional<Pod> cached = ctx_.pods->Get(namespace_name, name);
  const std::string key = namespace_name + "/" + name;
  std::optional<Pod> ours = ctx_.ledger.Patched(key);
  if (!ours) return cached;
  if (!cached || cached->metadata.uid != ours->metadata.uid) {
    if (cached) ctx_.ledger.ErasePatchedOf(key, ours->metadata.uid);
    return cached;
  }
  return Newer(*cached, *ours);
}

StatusOr<Allocator::PendingPod> Allocator::FindPendingPod(Clock::TimePoint deadline) {
  Status last;
  for (int attempt = 0; attempt < kFindAttempts; ++attempt) {
    if (attempt > 0) {
      const Clock::TimePoint retry_at = ctx_.clock.Now() + kFindRetryDelay;
      if (retry_at > deadline) break;
      stop_.WaitUntil(retry_at);
      if (stop_.stopped()) {
        return Status(StatusCode::kCancelled, "HAMi: the device plugin is stopping");
      }
    }
    auto node = GetNode(*ctx_.client, ctx_.options.node_name, ctx_.CallBy(deadline));
    if (!node.ok() && (node.status().code() == StatusCode::kCancelled ||
                       node.status().code() == StatusCode::kDeadlineExceeded)) {
      return node.status();
    }
    if (!node.ok()) {
      last = node.status();
      continue;
    }
    std::optional<hami::NodeLock> lock;
    std::string lock_value;
    auto lock_it = node->metadata.annotations.find(std::string(hami::kNodeLockAnnotation));
    if (lock_it != node->metadata.annotations.end()) {
      auto parsed = hami::ParseNodeLock(lock_it->second);
      if (parsed.ok()) {
        lock = *parsed;
        lock_value = lock_it->second;
      } else {
        LOG(WARNING) << "HAMi: node lock not understood: " << parsed.status().ToString();
      }
    }
    if (lock) {
      std::optional<Pod> holder = FreshestPod(lock->pod_namespace, lock->pod_name);
      if (!holder || !IsPendingOn(*holder, ctx_.options.node_name)) {
        // The cache may lag behind the scheduler's bind: ask once.
        auto got = GetPod(*ctx_.client, lock->pod_namespace, lock->pod_name, ctx_.CallBy(deadline));
        if (got.ok()) holder = std::move(*got);
      }
      if (holder && IsPendingOn(*holder, ctx_.options.node_name)) {
        return PendingPod{std::move(*holder), lock_value};
      }
    }
    // No usable lock holder: the oldest pod being allocated here.
    std::optional<Pod> oldest;
    int64_t oldest_time = 0;
    for (const Pod& listed : ctx_.pods->List()) {
      std::optional<Pod> pod = FreshestPod(listed.metadata.namespace_name, listed.metadata.name);
      if (!pod || !IsPendingOn(*pod, ctx_.options.node_name)) continue;
      auto bind_time = hami::ParseBindTime(Annotation(*pod, hami::kBindTimeAnnotation));
      if (!bind_time.ok()) continue;
      if (!oldest || *bind_time < oldest_time) {
        oldest_time = *bind_time;
        oldest = std::move(pod);
      }
    }
    if (oldest) {
      bool holds = lock && hami::NodeLockHeldBy(*lock, oldest->metadata.namespace_name,
                                                oldest->metadata.name);
      return PendingPod{std::move(*oldest), holds ? lock_value : std::string()};
    }
    last = NotFoundError("HAMi: no pod on node " + ctx_.options.node_name +
                         " is pending with hami.io/bind-phase=allocating (lock: " +
                         (lock ? lock->pod_namespace + "/" + lock->pod_name : "none") + ")");
  }
  return last.ok() ? DeadlineExceededError("HAMi: no time left to find the pending pod") : last;
}

StatusOr<ContainerAllocation> Allocator::AllocateOne(int device_count,
                                                     Clock::TimePoint work_deadline,
                                                     Clock::TimePoint hard_deadline) {
  HCUDP_ASSIGN_OR_RETURN(PendingPod pending, FindPendingPod(work_deadline));
  const std::string key = PodName(pending.pod);
  if (!ctx_.ledger.Claim(key)) {
    return AbortedError("HAMi: another Allocate for pod " + key + " is in progress");
  }
  ctx_.ledger.ClearFailed(pending.pod.metadata.uid);  // allocating again
  std::vector<hami::MarkFileName> created;
  ContainerAllocation out;
  Status st = ServeContainer(pending, device_count, work_deadline, hard_deadline, &created, &out);
  if (!st.ok()) FailPod(pending, created, st, hard_deadline);
  ctx_.ledger.Unclaim(key);
  if (!st.ok()) return st;
  return out;
}

Status Allocator::ServeContainer(PendingPod& pending, int device_count, Clock::TimePoint deadline,
                                 Clock::TimePoint hard_deadline,
                                 std::vector<hami::MarkFileName>* created,
                                 ContainerAllocation* out) {
  const Pod& pod = pending.pod;
  const std::string to_allocate = Annotation(pod, hami::kDevicesToAllocateAnnotation);
  const std::string allocated = Annotation(pod, hami::kDevicesAllocatedAnnotation);
  // Which container is served: hygon.com/container-index, computed from
  // hcu-devices-allocated before the first container.
  const bool first = allocated == to_allocate;
  auto indexes =
      first
          ? hami::ContainerIndexesFromAllocated(allocated, static_cast<int>(pod.containers.size()))
          : hami::DecodeContainerIndex(Annotation(pod, hami::kContainerIndexAnnotation));
  if (!indexes.ok()) {
    return InvalidArgumentError("pod " + PodName(pod) + ": " + indexes.status().message());
  }
  if (indexes->empty() || (*indexes)[0] < 0 ||
      (*indexes)[0] >= static_cast<int>(pod.containers.size())) {
    return InvalidArgumentError("pod " + PodName(pod) + ": no valid container index in " +
                                std::string(hami::kContainerIndexAnnotation));
  }
  const std::string& container = pod.containers[(*indexes)[0]].name;
  hami::ContainerDevices served;
  auto erased = hami::VendorEraseFirstContainer(to_allocate, &served);
  if (!erased.ok()) {
    return FailedPreconditionError("pod " + PodName(pod) +
                                   ": device request not found: " + erased.status().message());
  }
  if (static_cast<int>(served.size()) != device_count) {
    return InvalidArgumentError("pod " + PodName(pod) + " container " + container +
                                ": device number not matched: the scheduler assigned " +
                                std::to_string(served.size()) + ", kubelet asked for " +
                                std::to_string(device_count));
  }
  HCUDP_RETURN_IF_ERROR(CheckDeadline(deadline, "creating devices"));
  HCUDP_ASSIGN_OR_RETURN(NodeInventory inventory, ctx_.inventory.Get(/*fresh=*/false));
  auto planned = hami::PlanContainerDevices(served, inventory);
  if (!planned.ok()) {  // the cards may have changed since the last look
    HCUDP_ASSIGN_OR_RETURN(inventory, ctx_.inventory.Get(/*fresh=*/true));
    planned = hami::PlanContainerDevices(served, inventory);
  }
  HCUDP_ASSIGN_OR_RETURN(std::vector<hami::DevicePlan> plans, std::move(planned));
  *out = CommonEdits(inventory);
  out->mounts.push_back({ctx_.options.hyhal_path, std::string(kHyhalContainerPath), true});
  const VhcuOwner owner{pod.metadata.uid, container};
  for (const hami::DevicePlan& plan : plans) {
    const Card* card = inventory.FindCard(plan.card);
    if (card == nullptr || card->dri_nodes.empty()) {
      return FailedPreconditionError("card " + plan.card_bdf + " has no DRI nodes");
    }
    for (const auto& node : card->dri_nodes) out->devices.push_back({node, node, "rw"});
    if (!plan.create_vhcu) {
      HCUDP_ASSIGN_OR_RETURN(MarkFile mark, ctx_.vhcus.MarkWholeCard(owner, plan.card));
      created->push_back(mark.name);
      continue;
    }
    // kubelet retries an Allocate whose answer it never got (e.g. the daemon
    // died after the mark was written): hand out the same vHCU again.
    std::optional<CreatedVhcu> existing = MarkedVhcu(owner, plan);
    if (!existing) {
      HCUDP_ASSIGN_OR_RETURN(
          existing,
          ctx_.vhcus.CreateVhcu(owner, plan.card, plan.vhcu_compute_units, plan.vhcu_memory_mib));
    }
    const CreatedVhcu& vhcu = *existing;
    created->push_back(vhcu.mark.name);
    HCUDP_RETURN_IF_ERROR(ValidateVhcuConfFile(ctx_.options.host_root, vhcu.vhcu.conf_path));
    const std::string file = vhcu.vhcu.conf_path.substr(vhcu.vhcu.conf_path.rfind('/') + 1);
    out->mounts.push_back({vhcu.vhcu.conf_path, kVdevContainerDir + file, true});
    LOG(INFO) << "HAMi: pod " << PodName(pod) << " container " << container << ": vHCU "
              << vhcu.vhcu.id << " (" << plan.vhcu_compute_units << " CUs, " << plan.vhcu_memory_mib
              << " MiB) on card " << plan.card;
  }
  HCUDP_RETURN_IF_ERROR(CheckDeadline(deadline, "updating the pod"));
  // One patch: the served entry erased, the remaining container indexes
  // (the last list stays, as the vendor leaves it), success after the last.
  std::vector<int> rest(indexes->begin() + 1, indexes->end());
  HCUDP_ASSIGN_OR_RETURN(hami::PodDevices left, hami::DecodePodDevices(*erased));
  const bool done = !hami::HasPendingDevices(left);
  std::map<std::string, std::optional<std::string>> patch;
  patch[std::string(hami::kDevicesToAllocateAnnotation)] = *erased;
  patch[std::string(hami::kContainerIndexAnnotation)] =
      hami::EncodeContainerIndex(rest.empty() ? *indexes : rest);
  if (done) patch[std::string(hami::kBindPhaseAnnotation)] = std::string(hami::kBindPhaseSuccess);
  HCUDP_ASSIGN_OR_RETURN(
      Pod patched, PatchPodAnnotations(*ctx_.client, pod.metadata.namespace_name, pod.metadata.name,
                                       patch, ctx_.CallBy(deadline)));
  const std::string key = PodName(pod);
  if (done) {
    ctx_.ledger.ErasePatched(key);
    // Not releasing it is no failure: the pod is allocated, and the next
    // sweep releases the lock of a pod no longer allocating.
    ReleaseLock(pending, hard_deadline);
    LOG(INFO) << "HAMi: pod " << key << " allocated";
  } else {
    ctx_.ledger.SetPatched(key, std::move(patched));
  }
  return OkStatus();
}

void Allocator::FailPod(const PendingPod& pending, const std::vector<hami::MarkFileName>& created,
                        const Status& why, Clock::TimePoint deadline) {
  const Pod& pod = pending.pod;
  LOG(WARNING) << "HAMi: Allocate for pod " << PodName(pod) << " failed: " << why.ToString();
  // Whatever the calls below manage, the pod holds nothing any more, and
  // the next sweep finishes what they could not (stale lock).
  ctx_.ledger.Fail(PodName(pod), pod.metadata.uid);
  ctx_.vhcus.ForgetFresh(pod.metadata.uid);
  for (const auto& mark : created) {
    Status st = ctx_.vhcus.Release(mark);
    if (!st.ok()) LOG(WARNING) << "HAMi: undo: " << st.ToString();
  }
  // The lock first: while it is held the scheduler can place nothing here.
  ReleaseLock(pending, deadline);
  auto patched = PatchPodAnnotations(
      *ctx_.client, pod.metadata.namespace_name, pod.metadata.name,
      {{std::string(hami::kBindPhaseAnnotation), std::string(hami::kBindPhaseFailed)}},
      ctx_.CallBy(deadline));
  if (!patched.ok()) {
    LOG(WARNING) << "HAMi: marking pod " << PodName(pod)
                 << " failed: " << patched.status().ToString() << " (retried by the next sweep)";
    ctx_.ledger.AddUnmarked(PodName(pod), pod.metadata.uid);
  }
}

void Allocator::ReleaseLock(const PendingPod& pending, Clock::TimePoint deadline) {
  if (pending.lock_value.empty()) return;
  auto removed = RemoveNodeAnnotationIfEquals(*ctx_.client, ctx_.options.node_name,
                                              std::string(hami::kNodeLockAnnotation),
                                              pending.lock_value, 5, ctx_.CallBy(deadline));
  if (!removed.ok()) {
    LOG(WARNING) << "HAMi: releasing the node lock of pod " << PodName(pending.pod)
                 << " failed: " << removed.status().ToString();
  }
}

}  // namespace hcudp::internal
