// The Kubernetes permissions of HAMi mode: one row per kube_ops call (or
// PodCache) the agent makes, with the verbs that call needs
// (doc/kubernetes-client.md). Keep this table in step with the agent's
// calls; test/hami/rbac_test.cc checks it against manifests/rbac-verbs.txt.
#include <algorithm>
#include <tuple>

#include "hcudp/hami_agent.h"

namespace hcudp {
namespace {

struct CallPermissions {
  const char* call;  // the kube_ops function (for readers)
  const char* resource;
  std::vector<const char*> verbs;
  bool opt_in;
};

const std::vector<CallPermissions>& AgentCalls() {
  static const auto* calls = new std::vector<CallPermissions>{
      // FindPendingPod: the node lock.
      {"GetNode", "nodes", {"get"}, false},
      // Register: the three node annotations.
      {"PatchNodeAnnotations", "nodes", {"patch"}, false},
      // ReleaseLock: GET + conditional merge patch.
      {"RemoveNodeAnnotationIfEquals", "nodes", {"get", "patch"}, false},
      // ReportHcumem (resource_multiple).
      {"PatchNodeStatus", "nodes/status", {"patch"}, false},
      // The pod cache of this node (never on the Allocate path).
      {"PodCache", "pods", {"list", "watch"}, false},
      // FindPendingPod when the cache lags behind the scheduler's bind.
      {"GetPod", "pods", {"get"}, false},
      // ServeContainer, FailPod.
      {"PatchPodAnnotations", "pods", {"patch"}, false},
      // ReportTopology (topology_register): patch, create on NotFound.
      {"MergeConfigMapData", "configmaps", {"patch", "create"}, false},
      // EvictUnaccountedPods (evict_unaccounted_pods only).
      {"DeletePodWithUid", "pods", {"delete"}, true},
  };
  return *calls;
}

}  // namespace

std::vector<RbacRule> HamiRbacRules() {
  std::vector<RbacRule> rules;
  for (const auto& call : AgentCalls()) {
    for (const char* verb : call.verbs) rules.push_back({call.resource, verb, call.opt_in});
  }
  auto key = [](const RbacRule& r) { return std::tie(r.resource, r.verb, r.opt_in); };
  std::sort(rules.begin(), rules.end(),
            [&](const RbacRule& a, const RbacRule& b) { return key(a) < key(b); });
  rules.erase(std::unique(rules.begin(), rules.end(),
                          [&](const RbacRule& a, const RbacRule& b) { return key(a) == key(b); }),
              rules.end());
  return rules;
}

}  // namespace hcudp
