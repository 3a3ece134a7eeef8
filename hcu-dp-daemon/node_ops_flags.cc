#include "node_ops_flags.h"

#include "hcudp/node_events.h"
#include "hcudp/node_labels.h"

namespace hcudp::daemon {

void AddNodeOpsFlags(FlagSet& set, Options& o) {
  set.Add(Flag::Enum("node-labels", "NODE_LABELS",
                     "Publish node labels: off, nfd (an NFD features.d file), node (patch the "
                     "Node; needs RBAC nodes get/patch and --node-name).",
                     {"off", "nfd", "node"}, "off", [&o](const std::string& v) {
                       o.node_labels = *ParseNodeLabelMode(v);
                       return OkStatus();
                     }));
  set.Add(Flag::String("nfd-features-dir", "NFD_FEATURES_DIR",
                       "Where --node-labels=nfd writes its features.d file.", &o.nfd_features_dir));
  set.Add(Flag::Enum("events", "EVENTS",
                     "Kubernetes Events on health changes: auto (on when cluster credentials and "
                     "--node-name exist), true, false.",
                     {"auto", "true", "false"}, "false", [&o](const std::string& v) {
                       o.events = *ParseEventsMode(v);
                       return OkStatus();
                     }));
}

Status ValidateNodeOpsOptions(const Options& o) {
  if (o.node_labels == NodeLabelMode::kNode && o.node_name.empty()) {
    return InvalidArgumentError(
        "--node-name: required with --node-labels=node (set it, or NODE_NAME, to this node's "
        "name)");
  }
  if (o.events == EventsMode::kTrue && o.node_name.empty()) {
    return InvalidArgumentError(
        "--node-name: required with --events=true (set it, or NODE_NAME, to this node's name)");
  }
  // NFD reads its features.d from a fixed host path: a relative directory
  // would be under the daemon's working directory, where NFD never looks.
  if (o.node_labels == NodeLabelMode::kNfd &&
      (o.nfd_features_dir.empty() || o.nfd_features_dir.front() != '/')) {
    return InvalidArgumentError("--nfd-features-dir: \"" + o.nfd_features_dir +
                                "\" is not an absolute path (required with --node-labels=nfd)");
  }
  return OkStatus();
}

}  // namespace hcudp::daemon
