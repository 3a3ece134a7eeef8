// HamiAgent::ReleaseStaleLock: the node lock of a pod whose Allocate can no
// longer complete is released, so that the scheduler does not wait for it to
// expire (issue 9 item 6; see hami_agent.h).
#include <glog/logging.h>

#include "hcudp/hami/keys.h"
#include "hcudp/hami/node_lock.h"
#include "hcudp/hami/pending_pod.h"
#include "hcudp/hami_agent.h"
#include "hcudp/kube_ops.h"

namespace hcudp {
namespace {

bool Ended(const Pod& pod) { return pod.phase == "Succeeded" || pod.phase == "Failed"; }

}  // namespace

void HamiAgent::ReleaseStaleLock(bool first) {
  if (first) inherited_known_ = true;
  auto node = GetNode(*client_, options_.node_name, BackgroundCall());
  if (!node.ok()) {
    LOG(WARNING) << "HAMi: cannot check the node lock: " << node.status().ToString();
    return;
  }
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
  auto in_progress = [&] {
    std::lock_guard<std::mutex> guard(pods_mu_);
    return claimed_.count(key) > 0 || patched_.count(key) > 0;
  };
  if (in_progress()) return;  // being allocated by this process

  // Why can the Allocate of the lock's pod no longer complete, if it can't?
  std::string why;
  auto pod = GetPod(*client_, lock->pod_namespace, lock->pod_name, BackgroundCall());
  if (!pod.ok() && !IsNotFound(pod.status())) {
    LOG(WARNING) << "HAMi: cannot check the pod of the node lock " << value << ": "
                 << pod.status().ToString();
    return;
  }
  bool allocating_here = false;
  if (!pod.ok()) {
    why = "the pod is gone";
  } else if (Ended(*pod)) {
    why = "the pod has ended (" + pod->phase + ")";
  } else if (!pod->node_name.empty() && pod->node_name != options_.node_name) {
    why = "the pod is bound to node " + pod->node_name;
  } else if (!hami::IsAllocatingOn(pod->metadata.annotations, options_.node_name)) {
    why = "the pod is no longer allocating on this node";
  } else if (pod->node_name.empty()) {
    return;  // the scheduler has not bound it yet
  } else {
    allocating_here = true;
    bool failed_here = false;
    {
      std::lock_guard<std::mutex> guard(pods_mu_);
      failed_here = failed_uids_.count(pod->metadata.uid) > 0;
    }
    if (failed_here) {
      why = "its Allocate failed";
    } else if (value == inherited_lock_) {
      why = "the lock was taken before this process started and no Allocate of it is in progress";
    } else {
      return;  // kubelet's Allocate is still to come
    }
  }
  if (!Claim(key)) return;  // an Allocate for it started meanwhile
  struct Unclaimer {
    HamiAgent* agent;
    const std::string& key;
    ~Unclaimer() { agent->Unclaim(key); }
  } unclaim{this, key};
  {
    std::lock_guard<std::mutex> guard(pods_mu_);
    if (patched_.count(key)) return;
  }
  LOG(WARNING) << "HAMi: releasing the node lock of pod " << key << ": " << why;
  if (allocating_here) {
    // As the failure path: the scheduler sees bind-phase=failed, and the
    // pod's vHCUs are reclaimed by the reconcile that follows.
    {
      std::lock_guard<std::mutex> guard(pods_mu_);
      failed_uids_.insert(pod->metadata.uid);
    }
    vhcus_.ForgetFresh(pod->metadata.uid);
    auto patched = PatchPodAnnotations(
        *client_, lock->pod_namespace, lock->pod_name,
        {{std::string(hami::kBindPhaseAnnotation), std::string(hami::kBindPhaseFailed)}},
        BackgroundCall());
    if (!patched.ok()) {
      LOG(WARNING) << "HAMi: marking pod " << key << " failed: " << patched.status().ToString();
      return;  // the lock stays until the pod is marked; next sweep
    }
  }
  auto removed = RemoveNodeAnnotationIfEquals(*client_, options_.node_name,
                                              std::string(hami::kNodeLockAnnotation), value,
                                              /*max_attempts=*/5, BackgroundCall());
  if (!removed.ok()) {
    LOG(WARNING) << "HAMi: releasing the node lock of pod " << key
                 << " failed: " << removed.status().ToString();
  } else if (*removed && value == inherited_lock_) {
    inherited_lock_.clear();
  }
}

void HamiAgent::MarkUnmarkedFailures() {
  std::map<std::string, std::string> todo;
  {
    std::lock_guard<std::mutex> guard(pods_mu_);
    todo = unmarked_failures_;
  }
  for (const auto& [key, uid] : todo) {
    const size_t slash = key.find('/');
    const std::string ns = key.substr(0, slash);
    const std::string name = key.substr(slash + 1);
    auto pod = GetPod(*client_, ns, name, BackgroundCall());
    bool done = !pod.ok() && IsNotFound(pod.status());
    if (pod.ok()) {
      // Only the very pod, and only while it still waits for us.
      done = pod->metadata.uid != uid || Ended(*pod) ||
             !hami::IsAllocatingOn(pod->metadata.annotations, options_.node_name);
      if (!done) {
        auto patched = PatchPodAnnotations(
            *client_, ns, name,
            {{std::string(hami::kBindPhaseAnnotation), std::string(hami::kBindPhaseFailed)}},
            BackgroundCall());
        done = patched.ok();
        if (done) LOG(INFO) << "HAMi: pod " << key << " marked failed (its Allocate failed)";
      }
    }
    if (done) {
      std::lock_guard<std::mutex> guard(pods_mu_);
      unmarked_failures_.erase(key);
    }
  }
}

}  // namespace hcudp
