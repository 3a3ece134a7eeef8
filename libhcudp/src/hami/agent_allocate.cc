// HamiAgent::AllocateCount / AllocateCores: reference/seed-behaviour.md §5.4
// with the defects of §8.15-8.20 fixed (see hami_agent.h).
#include <glog/logging.h>

#include <algorithm>
#include <cstdlib>
#include <thread>

#include "hcudp/hami/container_index.h"
#include "hcudp/hami/keys.h"
#include "hcudp/hami/mark_file.h"
#include "hcudp/hami/node_lock.h"
#include "hcudp/hami/pending_pod.h"
#include "hcudp/hami/pod_devices.h"
#include "hcudp/hami/size_rule.h"
#include "hcudp/hami_agent.h"
#include "hcudp/kube_ops.h"

namespace hcudp {
namespace {

using SteadyClock = std::chrono::steady_clock;

constexpr int kFindAttempts = 5;
constexpr std::chrono::milliseconds kFindRetryDelay{200};
constexpr char kVdevContainerDir[] = "/etc/vdev/docker/";

std::string Annotation(const Pod& pod, std::string_view key) {
  auto it = pod.metadata.annotations.find(std::string(key));
  return it == pod.metadata.annotations.end() ? std::string() : it->second;
}

std::string PodName(const Pod& pod) {
  return pod.metadata.namespace_name + "/" + pod.metadata.name;
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

Status CheckDeadline(SteadyClock::time_point deadline, std::string_view step) {
  if (SteadyClock::now() <= deadline) return OkStatus();
  return DeadlineExceededError("HAMi Allocate ran out of time before " + std::string(step));
}

}  // namespace

ContainerAllocation HamiAgent::CommonEdits() const {
  ContainerAllocation out;
  out.devices.push_back({"/dev/kfd", "/dev/kfd", "rwm"});
  out.devices.push_back({"/dev/mkfd", "/dev/mkfd", "rwm"});
  return out;
}

StatusOr<NodeInventory> HamiAgent::CardInventory(bool fresh) {
  if (!fresh) {
    std::lock_guard<std::mutex> lock(inventory_mu_);
    if (inventory_) return *inventory_;
  }
  HCUDP_ASSIGN_OR_RETURN(NodeInventory inventory, backend_->Discover());
  std::lock_guard<std::mutex> lock(inventory_mu_);
  inventory_ = inventory;
  return inventory;
}

std::optional<CreatedVhcu> HamiAgent::MarkedVhcu(const VhcuOwner& owner,
                                                 const hami::DevicePlan& plan) {
  auto marks = ListMarkFiles(options_.host_root, nullptr);
  if (!marks.ok()) return std::nullopt;
  std::optional<NodeInventory> inventory;  // discovered once, at the first matching mark
  for (const MarkFile& mark : *marks) {
    const hami::MarkFileName& n = mark.name;
    if (n.pod_uid != owner.pod_uid || n.container != owner.container || n.card != plan.card ||
        n.whole_card()) {
      continue;
    }
    if (!inventory) {
      auto discovered = backend_->Discover();
      if (!discovered.ok()) return std::nullopt;
      inventory = std::move(discovered).value();
    }
    const Vhcu* v = inventory->FindVhcu(n.vhcu_id);
    if (v != nullptr && v->card == plan.card && v->compute_units == plan.vhcu_compute_units &&
        v->memory_mib == plan.vhcu_memory_mib) {
      LOG(INFO) << "HAMi: reusing vHCU " << v->id << " of " << mark.path << " (a retried Allocate)";
      return CreatedVhcu{*v, mark};
    }
  }
  return std::nullopt;
}

StatusOr<std::vector<ContainerAllocation>> HamiAgent::AllocateCores() const {
  return std::vector<ContainerAllocation>{CommonEdits()};
}

bool HamiAgent::Claim(const std::string& key) {
  std::lock_guard<std::mutex> lock(pods_mu_);
  return claimed_.insert(key).second;
}

void HamiAgent::Unclaim(const std::string& key) {
  std::lock_guard<std::mutex> lock(pods_mu_);
  claimed_.erase(key);
}

StatusOr<std::vector<ContainerAllocation>> HamiAgent::AllocateCount(
    const std::vector<int>& device_counts) {
  if (stopping_) return UnavailableError("HAMi: the device plugin is stopping");
  if (!ready_) {
    return UnavailableError("HAMi: the pod cache of node " + options_.node_name +
                            " has not synced yet; retry");
  }
  // The whole Allocate, failure path included, ends by `hard`; the work
  // leaves failure_reserve of it for marking the pod failed and releasing
  // the lock.
  const auto start = SteadyClock::now();
  const auto hard = start + options_.allocate_deadline;
  const auto work = std::max(start, hard - options_.failure_reserve);
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
  RequestRegister();
  if (!failed.ok()) return failed;
  return out;
}

std::optional<Pod> HamiAgent::FreshestPod(const std::string& namespace_name,
                                          const std::string& name) {
  std::optional<Pod> cached = pods_->Get(namespace_name, name);
  std::lock_guard<std::mutex> lock(pods_mu_);
  auto it = patched_.find(namespace_name + "/" + name);
  if (it == patched_.end()) return cached;
  if (!cached || cached->metadata.uid != it->second.metadata.uid) {
    if (cached) patched_.erase(it);
    return cached;
  }
  return Newer(*cached, it->second);
}

StatusOr<HamiAgent::PendingPod> HamiAgent::FindPendingPod(SteadyClock::time_point deadline) {
  Status last;
  for (int attempt = 0; attempt < kFindAttempts; ++attempt) {
    if (attempt > 0) {
      if (SteadyClock::now() + kFindRetryDelay > deadline) break;
      if (WaitForStop(kFindRetryDelay)) {
        return Status(StatusCode::kCancelled, "HAMi: the device plugin is stopping");
      }
    }
    auto node = GetNode(*client_, options_.node_name, CallBy(deadline));
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
      if (!holder || !IsPendingOn(*holder, options_.node_name)) {
        // The cache may lag behind the scheduler's bind: ask once.
        auto got = GetPod(*client_, lock->pod_namespace, lock->pod_name, CallBy(deadline));
        if (got.ok()) holder = std::move(*got);
      }
      if (holder && IsPendingOn(*holder, options_.node_name)) {
        return PendingPod{std::move(*holder), lock_value};
      }
    }
    // No usable lock holder: the oldest pod being allocated here.
    std::optional<Pod> oldest;
    int64_t oldest_time = 0;
    for (const Pod& listed : pods_->List()) {
      std::optional<Pod> pod = FreshestPod(listed.metadata.namespace_name, listed.metadata.name);
      if (!pod || !IsPendingOn(*pod, options_.node_name)) continue;
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
    last = NotFoundError("HAMi: no pod on node " + options_.node_name +
                         " is pending with hami.io/bind-phase=allocating (lock: " +
                         (lock ? lock->pod_namespace + "/" + lock->pod_name : "none") + ")");
  }
  return last.ok() ? DeadlineExceededError("HAMi: no time left to find the pending pod") : last;
}

StatusOr<ContainerAllocation> HamiAgent::AllocateOne(int device_count,
                                                     SteadyClock::time_point work_deadline,
                                                     SteadyClock::time_point hard_deadline) {
  HCUDP_ASSIGN_OR_RETURN(PendingPod pending, FindPendingPod(work_deadline));
  const std::string key = PodName(pending.pod);
  if (!Claim(key)) {
    return AbortedError("HAMi: another Allocate for pod " + key + " is in progress");
  }
  {
    std::lock_guard<std::mutex> lock(pods_mu_);
    failed_uids_.erase(pending.pod.metadata.uid);  // allocating again
  }
  std::vector<hami::MarkFileName> created;
  ContainerAllocation out;
  Status st = ServeContainer(pending, device_count, work_deadline, hard_deadline, &created, &out);
  if (!st.ok()) FailPod(pending, created, st, hard_deadline);
  Unclaim(key);
  if (!st.ok()) return st;
  return out;
}

Status HamiAgent::ServeContainer(PendingPod& pending, int device_count,
                                 SteadyClock::time_point deadline,
                                 SteadyClock::time_point hard_deadline,
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
  HCUDP_ASSIGN_OR_RETURN(NodeInventory inventory, CardInventory(/*fresh=*/false));
  auto planned = hami::PlanContainerDevices(served, inventory);
  if (!planned.ok()) {  // the cards may have changed since the last look
    HCUDP_ASSIGN_OR_RETURN(inventory, CardInventory(/*fresh=*/true));
    planned = hami::PlanContainerDevices(served, inventory);
  }
  HCUDP_ASSIGN_OR_RETURN(std::vector<hami::DevicePlan> plans, std::move(planned));
  *out = CommonEdits();
  out->mounts.push_back({options_.hyhal_path, std::string(kHyhalContainerPath), true});
  const VhcuOwner owner{pod.metadata.uid, container};
  for (const hami::DevicePlan& plan : plans) {
    const Card* card = inventory.FindCard(plan.card);
    if (card == nullptr || card->dri_nodes.empty()) {
      return FailedPreconditionError("card " + plan.card_bdf + " has no DRI nodes");
    }
    for (const auto& node : card->dri_nodes) out->devices.push_back({node, node, "rw"});
    if (!plan.create_vhcu) {
      HCUDP_ASSIGN_OR_RETURN(MarkFile mark, vhcus_.MarkWholeCard(owner, plan.card));
      created->push_back(mark.name);
      continue;
    }
    // kubelet retries an Allocate whose answer it never got (e.g. the daemon
    // died after the mark was written): hand out the same vHCU again.
    std::optional<CreatedVhcu> existing = MarkedVhcu(owner, plan);
    if (!existing) {
      HCUDP_ASSIGN_OR_RETURN(existing, vhcus_.CreateVhcu(owner, plan.card, plan.vhcu_compute_units,
                                                         plan.vhcu_memory_mib));
    }
    const CreatedVhcu& vhcu = *existing;
    created->push_back(vhcu.mark.name);
    HCUDP_RETURN_IF_ERROR(ValidateVhcuConfFile(options_.host_root, vhcu.vhcu.conf_path));
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
      Pod patched, PatchPodAnnotations(*client_, pod.metadata.namespace_name, pod.metadata.name,
                                       patch, CallBy(deadline)));
  const std::string key = PodName(pod);
  if (done) {
    {
      std::lock_guard<std::mutex> lock(pods_mu_);
      patched_.erase(key);
    }
    // Not releasing it is no failure: the pod is allocated, and the next
    // sweep releases the lock of a pod no longer allocating.
    ReleaseLock(pending, hard_deadline);
    LOG(INFO) << "HAMi: pod " << key << " allocated";
  } else {
    std::lock_guard<std::mutex> lock(pods_mu_);
    patched_[key] = std::move(patched);
  }
  return OkStatus();
}

void HamiAgent::FailPod(const PendingPod& pending, const std::vector<hami::MarkFileName>& created,
                        const Status& why, SteadyClock::time_point deadline) {
  const Pod& pod = pending.pod;
  LOG(WARNING) << "HAMi: Allocate for pod " << PodName(pod) << " failed: " << why.ToString();
  {
    // Whatever the calls below manage, the pod holds nothing any more, and
    // the next sweep finishes what they could not (stale lock).
    std::lock_guard<std::mutex> lock(pods_mu_);
    patched_.erase(PodName(pod));
    failed_uids_.insert(pod.metadata.uid);
  }
  vhcus_.ForgetFresh(pod.metadata.uid);
  for (const auto& mark : created) {
    Status st = vhcus_.Release(mark);
    if (!st.ok()) LOG(WARNING) << "HAMi: undo: " << st.ToString();
  }
  // The lock first: while it is held the scheduler can place nothing here.
  ReleaseLock(pending, deadline);
  auto patched = PatchPodAnnotations(
      *client_, pod.metadata.namespace_name, pod.metadata.name,
      {{std::string(hami::kBindPhaseAnnotation), std::string(hami::kBindPhaseFailed)}},
      CallBy(deadline));
  if (!patched.ok()) {
    LOG(WARNING) << "HAMi: marking pod " << PodName(pod)
                 << " failed: " << patched.status().ToString() << " (retried by the next sweep)";
    std::lock_guard<std::mutex> lock(pods_mu_);
    unmarked_failures_[PodName(pod)] = pod.metadata.uid;
  }
}

void HamiAgent::ReleaseLock(const PendingPod& pending, SteadyClock::time_point deadline) {
  if (pending.lock_value.empty()) return;
  auto removed = RemoveNodeAnnotationIfEquals(*client_, options_.node_name,
                                              std::string(hami::kNodeLockAnnotation),
                                              pending.lock_value, 5, CallBy(deadline));
  if (!removed.ok()) {
    LOG(WARNING) << "HAMi: releasing the node lock of pod " << PodName(pending.pod)
                 << " failed: " << removed.status().ToString();
  }
}

}  // namespace hcudp
