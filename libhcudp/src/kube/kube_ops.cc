// Typed operations on nodes, pods and ConfigMaps.
#include "hcudp/kube_ops.h"
#include "hcudp_internal/log.h"

namespace hcudp {

StatusOr<NodeObject> GetNode(KubeClient& client, const std::string& node_name,
                             const CallOptions& call) {
  HCUDP_ASSIGN_OR_RETURN(std::string json, client.Get(NodePath(node_name), call));
  return ParseNode(json);
}

StatusOr<Pod> GetPod(KubeClient& client, const std::string& namespace_name,
                     const std::string& pod_name, const CallOptions& call) {
  HCUDP_ASSIGN_OR_RETURN(std::string json, client.Get(PodPath(namespace_name, pod_name), call));
  return ParsePod(json);
}

StatusOr<PodList> ListPods(KubeClient& client, const std::string& namespace_name,
                           ListOptions options, const CallOptions& call) {
  if (options.limit <= 0) options.limit = 500;
  PodList all;
  for (;;) {
    HCUDP_ASSIGN_OR_RETURN(std::string json, client.List(PodsPath(namespace_name), options, call));
    HCUDP_ASSIGN_OR_RETURN(PodList page, ParsePodList(json));
    for (Pod& pod : page.items) all.items.push_back(std::move(pod));
    // The first page's resourceVersion is the snapshot the pages belong to.
    if (all.resource_version.empty()) all.resource_version = page.resource_version;
    if (page.continue_token.empty()) break;
    options.continue_token = page.continue_token;
    options.resource_version.clear();  // not allowed together with continue
  }
  return all;
}

StatusOr<NodeObject> PatchNodeAnnotations(
    KubeClient& client, const std::string& node_name,
    const std::map<std::string, std::optional<std::string>>& annotations, const CallOptions& call) {
  HCUDP_ASSIGN_OR_RETURN(std::string json,
                         client.Patch(NodePath(node_name), PatchType::kStrategicMerge,
                                      AnnotationsPatch(annotations), call));
  return ParseNode(json);
}

StatusOr<Pod> PatchPodAnnotations(
    KubeClient& client, const std::string& namespace_name, const std::string& pod_name,
    const std::map<std::string, std::optional<std::string>>& annotations, const CallOptions& call) {
  HCUDP_ASSIGN_OR_RETURN(std::string json,
                         client.Patch(PodPath(namespace_name, pod_name), PatchType::kStrategicMerge,
                                      AnnotationsPatch(annotations), call));
  return ParsePod(json);
}

StatusOr<NodeObject> PatchNodeStatus(KubeClient& client, const std::string& node_name,
                                     const std::string& status_patch_json,
                                     const CallOptions& call) {
  HCUDP_ASSIGN_OR_RETURN(
      std::string json,
      client.Patch(NodeStatusPath(node_name), PatchType::kStrategicMerge, status_patch_json, call));
  return ParseNode(json);
}

StatusOr<bool> RemoveNodeAnnotationIfEquals(KubeClient& client, const std::string& node_name,
                                            const std::string& key,
                                            const std::string& expected_value, int max_attempts,
                                            const CallOptions& call) {
  Status last;
  for (int attempt = 0; attempt < std::max(1, max_attempts); ++attempt) {
    HCUDP_ASSIGN_OR_RETURN(NodeObject node, GetNode(client, node_name, call));
    auto it = node.metadata.annotations.find(key);
    if (it == node.metadata.annotations.end() || it->second != expected_value) return false;
    // The resourceVersion makes the patch conditional: if the annotation
    // changed since the GET, the server answers 409 and we look again.
    StatusOr<std::string> patched =
        client.Patch(NodePath(node_name), PatchType::kMerge,
                     AnnotationsPatch({{key, std::nullopt}}, node.metadata.resource_version), call);
    if (patched.ok()) return true;
    if (!IsConflict(patched.status())) return patched.status();
    last = patched.status();
    VLOG(2) << "node " << node_name << " changed while removing " << key << "; re-reading";
  }
  return last.WithContext("removing annotation " + key + " from node " + node_name);
}

Status MergeConfigMapData(KubeClient& client, const std::string& namespace_name,
                          const std::string& name, const std::map<std::string, std::string>& data,
                          const CallOptions& call) {
  std::string data_json = "{";
  for (const auto& [k, v] : data) {
    if (data_json.size() > 1) data_json += ",";
    data_json += JsonQuote(k) + ":" + JsonQuote(v);
  }
  data_json += "}";
  const std::string patch = "{\"data\":" + data_json + "}";
  StatusOr<std::string> patched =
      client.Patch(ConfigMapPath(namespace_name, name), PatchType::kMerge, patch, call);
  if (patched.ok()) return OkStatus();
  if (!IsNotFound(patched.status())) return patched.status();
  const std::string object =
      "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{"
      "\"name\":" +
      JsonQuote(name) + ",\"namespace\":" + JsonQuote(namespace_name) + "},\"data\":" + data_json +
      "}";
  StatusOr<std::string> created = client.Create(ConfigMapsPath(namespace_name), object, call);
  if (created.ok()) return OkStatus();
  if (!IsAlreadyExists(created.status())) return created.status();
  return client.Patch(ConfigMapPath(namespace_name, name), PatchType::kMerge, patch, call).status();
}

Status DeletePodWithUid(KubeClient& client, const std::string& namespace_name,
                        const std::string& pod_name, const std::string& uid,
                        std::optional<int64_t> grace_period_seconds, const CallOptions& call) {
  DeleteOptions options;
  options.precondition_uid = uid;
  options.grace_period_seconds = grace_period_seconds;
  return client.Delete(PodPath(namespace_name, pod_name), options, call).status();
}

}  // namespace hcudp
