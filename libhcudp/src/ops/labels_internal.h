// Internals of the node label publisher, exposed for its unit test.
#ifndef HCUDP_SRC_OPS_LABELS_INTERNAL_H_
#define HCUDP_SRC_OPS_LABELS_INTERNAL_H_

#include <optional>
#include <string>

#include "hcudp/node_labels.h"

namespace hcudp {

// The merge patch of metadata.labels that makes a Node carrying `have` carry
// `want`: changed or new keys set, keys of ManagedNodeLabelKeys() not in
// `want` deleted (null); other keys untouched. nullopt when nothing differs.
std::optional<std::string> NodeLabelPatch(const NodeLabels& have, const NodeLabels& want);

}  // namespace hcudp

#endif  // HCUDP_SRC_OPS_LABELS_INTERNAL_H_
