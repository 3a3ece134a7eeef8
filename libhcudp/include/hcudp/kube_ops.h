// Typed operations the HAMi flow performs, built on KubeClient. Each is one
// API call unless said otherwise; the RBAC verb each needs is in
// doc/kubernetes-client.md. `call` (deadline, cancel) covers all the API
// calls an operation makes.
#ifndef HCUDP_KUBE_OPS_H_
#define HCUDP_KUBE_OPS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "hcudp/export.h"
#include "hcudp/kube_client.h"
#include "hcudp/kube_objects.h"
#include "hcudp/status.h"

namespace hcudp {

HCUDP_EXPORT StatusOr<NodeObject> GetNode(KubeClient& client, const std::string& node_name,
                                          const CallOptions& call = {});
HCUDP_EXPORT StatusOr<Pod> GetPod(KubeClient& client, const std::string& namespace_name,
                                  const std::string& pod_name, const CallOptions& call = {});
// LIST, following `continue` pages (options.limit is the page size; 0 means
// 500). Empty namespace: all namespaces.
HCUDP_EXPORT StatusOr<PodList> ListPods(KubeClient& client, const std::string& namespace_name,
                                        ListOptions options, const CallOptions& call = {});

// Strategic-merge patch of metadata.annotations (nullopt deletes a key).
HCUDP_EXPORT StatusOr<NodeObject> PatchNodeAnnotations(
    KubeClient& client, const std::string& node_name,
    const std::map<std::string, std::optional<std::string>>& annotations,
    const CallOptions& call = {});
HCUDP_EXPORT StatusOr<Pod> PatchPodAnnotations(
    KubeClient& client, const std::string& namespace_name, const std::string& pod_name,
    const std::map<std::string, std::optional<std::string>>& annotations,
    const CallOptions& call = {});

// Strategic-merge patch of the nodes/<name>/status subresource, e.g.
// {"status":{"capacity":{"hygon.com/hcumem":"65520"}}}.
HCUDP_EXPORT StatusOr<NodeObject> PatchNodeStatus(KubeClient& client, const std::string& node_name,
                                                  const std::string& status_patch_json,
                                                  const CallOptions& call = {});

// Removes annotation `key` from the node only if its value is exactly
// `expected_value` (the HAMi lock `<RFC3339>,<ns>,<pod>`). GET, then a merge
// patch carrying the node's resourceVersion; on 409 re-GET and retry, up to
// `max_attempts` GETs. Returns true when removed, false when the annotation
// is absent or holds another value (someone else's lock).
HCUDP_EXPORT StatusOr<bool> RemoveNodeAnnotationIfEquals(
    KubeClient& client, const std::string& node_name, const std::string& key,
    const std::string& expected_value, int max_attempts = 5, const CallOptions& call = {});

// Sets `data` keys in ConfigMap namespace/name with a merge patch; when it
// does not exist, creates it; when that create loses a race (AlreadyExists),
// patches again.
HCUDP_EXPORT Status MergeConfigMapData(KubeClient& client, const std::string& namespace_name,
                                       const std::string& name,
                                       const std::map<std::string, std::string>& data,
                                       const CallOptions& call = {});

// DELETE with a UID precondition, so a re-created pod of the same name is
// never hit (409 → Aborted). NotFound when the pod is already gone.
HCUDP_EXPORT Status DeletePodWithUid(KubeClient& client, const std::string& namespace_name,
                                     const std::string& pod_name, const std::string& uid,
                                     std::optional<int64_t> grace_period_seconds = std::nullopt,
                                     const CallOptions& call = {});

}  // namespace hcudp

#endif  // HCUDP_KUBE_OPS_H_
