// Evictor::EvictUnaccountedPods: the vendor's pod killer (seed-behaviour
// §5.6), opt-in only and restricted to Running pods (defect §8.21).

#include <cstdlib>

#include "hami/evictor.h"
#include "hcudp/kube_ops.h"
#include "hcudp_internal/log.h"

namespace hcudp::internal {
namespace {

// A limit hygon.com/...hcumem with a value above 0.
bool RequestsHcumem(const Pod& pod) {
  for (const Container& c : pod.containers) {
    for (const auto& [name, value] : c.limits) {
      if (name.find("hygon.com") == std::string::npos || name.find("hcumem") == std::string::npos) {
        continue;
      }
      if (std::strtoll(value.c_str(), nullptr, 10) > 0) return true;
    }
  }
  return false;
}

}  // namespace

void Evictor::EvictUnaccountedPods(const std::vector<MarkFile>& marks) {
  std::set<std::string> accounted;
  for (const MarkFile& m : marks) accounted.insert(m.name.pod_uid);
  for (const Pod& pod : ctx_.pods->List()) {
    if (pod.phase != "Running" || !RequestsHcumem(pod) || accounted.count(pod.metadata.uid)) {
      continue;
    }
    LOG(WARNING) << "HAMi: pod " << pod.metadata.namespace_name << "/" << pod.metadata.name
                 << " uses HCU memory without a mark file; deleting it "
                    "(--evict-unaccounted-pods)";
    Status st = DeletePodWithUid(*ctx_.client, pod.metadata.namespace_name, pod.metadata.name,
                                 pod.metadata.uid, 0, ctx_.BackgroundCall());
    if (!st.ok() && !IsNotFound(st)) LOG(WARNING) << "HAMi: delete failed: " << st.ToString();
  }
}

}  // namespace hcudp::internal
