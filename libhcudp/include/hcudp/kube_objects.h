// Typed views of the Kubernetes objects the HAMi flow reads (Pod, Node),
// parsed from API JSON, and builders for the patches it sends.
//
// A view holds only the fields listed (a Node also keeps its whole JSON in
// `raw_json`, for the status fields the HAMi flow compares). Parsers are
// strict about the fields they read (wrong JSON type → InvalidArgument
// naming the field) and ignore the rest.
#ifndef HCUDP_KUBE_OBJECTS_H_
#define HCUDP_KUBE_OBJECTS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hcudp/export.h"
#include "hcudp/status.h"

namespace hcudp {

struct ObjectMeta {
  std::string name;
  std::string namespace_name;  // empty for cluster-scoped objects
  std::string uid;
  std::string resource_version;
  // RFC 3339 as sent, e.g. "2026-03-01T10:00:00Z" (checked by the parsers;
  // hami::ParseRfc3339 in hcudp/hami/rfc3339.h reads it).
  std::string creation_timestamp;
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
};

struct Container {
  std::string name;
  // resources.limits / resources.requests, quantities as sent ("1", "8Gi").
  std::map<std::string, std::string> limits;
  std::map<std::string, std::string> requests;
};

struct Pod {
  ObjectMeta metadata;
  std::string node_name;              // spec.nodeName
  std::vector<Container> containers;  // spec.containers, in order
  std::string phase;                  // status.phase: Pending, Running, Succeeded, Failed, Unknown
};

// A Node object of the API server (named NodeObject: hcudp::Node is the
// node's own door, hcudp/node.h).
struct NodeObject {
  ObjectMeta metadata;
  std::string raw_json;
};

struct PodList {
  std::vector<Pod> items;
  std::string resource_version;  // metadata.resourceVersion of the list
  std::string continue_token;    // metadata.continue; empty on the last page
};

HCUDP_EXPORT StatusOr<Pod> ParsePod(std::string_view json);
HCUDP_EXPORT StatusOr<NodeObject> ParseNode(std::string_view json);
HCUDP_EXPORT StatusOr<PodList> ParsePodList(std::string_view json);
// Just the metadata of any object (for BOOKMARK events, ConfigMaps, ...).
HCUDP_EXPORT StatusOr<ObjectMeta> ParseObjectMeta(std::string_view object_json);

// {"metadata":{"annotations":{k: v | null}}} — a value of nullopt deletes
// the key. Valid as merge and strategic-merge patch. With a non-empty
// `resource_version` the patch also carries metadata.resourceVersion, which
// makes the server refuse it with 409 if the object changed meanwhile.
HCUDP_EXPORT std::string AnnotationsPatch(
    const std::map<std::string, std::optional<std::string>>& annotations,
    const std::string& resource_version = "");

// Quotes `text` as a JSON string literal, escaping as RFC 8259 requires.
HCUDP_EXPORT std::string JsonQuote(std::string_view text);

}  // namespace hcudp

#endif  // HCUDP_KUBE_OBJECTS_H_
