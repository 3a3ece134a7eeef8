// StaleLock::Release: the node lock of a pod whose Allocate can no
// longer complete is released, so that the scheduler does not wait for it to
// expire (issue 9 item 6; see hami_agent.h).

#include "hami/stale_lock.h"
#include "hcudp/hami/keys.h"
#include "hcudp/hami/node_lock.h"
#include "hcudp/hami/pending_pod.h"
#include "hcudp/hami_agent.h"
#include "hcudp/kube_ops.h"
#include "hcudp_internal/log.h"

namespace hcudp::internal {
namespace {

// How much older than the registration interval the registrar's view of the
// Node may be (a handshake that took a while) and still stand in for a GET.
constexpr std::chrono::milliseconds kSeenNodeSlack{5000};

}  // namespace

void StaleLock::Release(bool first, bool fresh) {
  // The registrar's last handshake returned the Node: a periodic look reads
  // the lock from it while it is that recent, instead of a GET every sweep.
  // The first look (what an earlier process left) and a look after a pod
  // event read the node itself, and so does one that finds a lock: nothing
  // is done on an old view.
  std::optional<NodeObject> seen;
  if (!first && !fresh) {
    seen = ctx_.seen_node.Get(ctx_.clock.Now(), ctx_.options.register_interval + kSeenNodeSlack);
    if (seen && seen->metadata.annotations.count(std::string(hami::kNodeLockAnnotation)) != 0) {
      seen.reset();
    }
  }
  StatusOr<NodeObject> node =
      seen ? StatusOr<NodeObject>(*seen)
           : GetNode(*ctx_.client, ctx_.options.node_name, ctx_.BackgroundCall());
  if (!node.ok()) {
    LOG(WARNING) << "HAMi: cannot check the node lock: " << node.status().ToString();
    return;
  }
  // Known only once the node was read: a later first look would take a lock
  // the scheduler set since for one left by the earlier process.
  if (first) inherited_known_ = true;
  auto it = node->metadata.annotations.find(std::string(hami::kNodeLockAnnotation));
  if (it == node->metadata.annotations.end()) {
    inherited_lock_.clear();
    return;
  }
  const std::string value = it->second;
  if (first) inherited_lock_ = value;
  auto lock = hami::ParseNodeLock(value);
  if (!lock.ok()) {
    VLOG(1) << "HAMi: node lock not understood, left alone: " << lock.status().ToString();
    return;
  }
  const std::string key = lock->pod_namespace + "/" + lock->pod_name;
  if (ctx_.ledger.InProgress(key)) return;  // being allocated by this process

  // Why can the Allocate of the lock's pod no longer complete, if it can't?
  std::string why;
  auto pod = GetPod(*ctx_.client, lock->pod_namespace, lock->pod_name, ctx_.BackgroundCall());
  if (!pod.ok() && !IsNotFound(pod.status())) {
    LOG(WARNING) << "HAMi: cannot check the pod of the node lock " << value << ": "
                 << pod.status().ToString();
    return;
  }
  bool allocating_here = false;
  if (!pod.ok()) {
    why = "the pod is gone";
  } else if (PodEnded(*pod)) {
    why = "the pod has ended (" + pod->phase + ")";
  } else if (!pod->node_name.empty() && pod->node_name != ctx_.options.node_name) {
    why = "the pod is bound to node " + pod->node_name;
  } else if (!hami::IsAllocatingOn(pod->metadata.annotations, ctx_.options.node_name)) {
    why = "the pod is no longer allocating on this node";
  } else if (pod->node_name.empty()) {
    return;  // the scheduler has not bound it yet
  } else {
    allocating_here = true;
    if (ctx_.ledger.Failed(pod->metadata.uid)) {
      why = "its Allocate failed";
    } else if (value == inherited_lock_) {
      why = "the lock was taken before this process started and no Allocate of it is in progress";
    } else {
      return;  // kubelet's Allocate is still to come
    }
  }
  if (!ctx_.ledger.Claim(key)) return;  // an Allocate for it started meanwhile
  struct Unclaimer {
    PodLedger& ledger;
    const std::string& key;
    ~Unclaimer() { ledger.Unclaim(key); }
  } unclaim{ctx_.ledger, key};
  if (ctx_.ledger.HasPatched(key)) return;
  LOG(WARNING) << "HAMi: releasing the node lock of pod " << key << ": " << why;
  if (allocating_here) {
    // As the failure path: the scheduler sees bind-phase=failed, and the
    // pod's vHCUs are reclaimed by the reconcile that follows.
    ctx_.ledger.SetFailed(pod->metadata.uid);
    ctx_.vhcus.ForgetFresh(pod->metadata.uid);
    auto patched = PatchPodAnnotations(
        *ctx_.client, lock->pod_namespace, lock->pod_name,
        {{std::string(hami::kBindPhaseAnnotation), std::string(hami::kBindPhaseFailed)}},
        ctx_.BackgroundCall());
    if (!patched.ok()) {
      LOG(WARNING) << "HAMi: marking pod " << key << " failed: " << patched.status().ToString();
      return;  // the lock stays until the pod is marked; next sweep
    }
  }
  auto removed = RemoveNodeAnnotationIfEquals(*ctx_.client, ctx_.options.node_name,
                                              std::string(hami::kNodeLockAnnotation), value,
                                              /*max_attempts=*/5, ctx_.BackgroundCall());
  if (!removed.ok()) {
    LOG(WARNING) << "HAMi: releasing the node lock of pod " << key
                 << " failed: " << removed.status().ToString();
  } else if (*removed && value == inherited_lock_) {
    inherited_lock_.clear();
  }
}

void StaleLock::MarkUnmarkedFailures() {
  const std::map<std::string, std::string> todo = ctx_.ledger.Unmarked();
  for (const auto& [key, uid] : todo) {
    const size_t slash = key.find('/');
    const std::string ns = key.substr(0, slash);
    const std::string name = key.substr(slash + 1);
    auto pod = GetPod(*ctx_.client, ns, name, ctx_.BackgroundCall());
    bool done = !pod.ok() && IsNotFound(pod.status());
    if (pod.ok()) {
      // Only the very pod, and only while it still waits for us.
      done = pod->metadata.uid != uid || PodEnded(*pod) ||
             !hami::IsAllocatingOn(pod->metadata.annotations, ctx_.options.node_name);
      if (!done) {
        auto patched = PatchPodAnnotations(
            *ctx_.client, ns, name,
            {{std::string(hami::kBindPhaseAnnotation), std::string(hami::kBindPhaseFailed)}},
            ctx_.BackgroundCall());
        done = patched.ok();
        if (done) LOG(INFO) << "HAMi: pod " << key << " marked failed (its Allocate failed)";
      }
    }
    if (done) ctx_.ledger.EraseUnmarked(key);
  }
}

}  // namespace hcudp::internal
