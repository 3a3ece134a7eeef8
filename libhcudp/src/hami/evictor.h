// Evictor: the vendor's pod killer (seed-behaviour §5.6), opt-in only
// (evict_unaccounted_pods) and restricted to Running pods (defect §8.21).
// Called from the sweep thread. Internal to the agent.
#ifndef HCUDP_SRC_HAMI_EVICTOR_H_
#define HCUDP_SRC_HAMI_EVICTOR_H_

#include <vector>

#include "hami/agent_context.h"

namespace hcudp::internal {

class Evictor {
 public:
  explicit Evictor(AgentContext& ctx) : ctx_(ctx) {}
  // Deletes (with a UID precondition) every Running pod that requests
  // hcumem and holds none of `marks`.
  void EvictUnaccountedPods(const std::vector<MarkFile>& marks);

 private:
  AgentContext& ctx_;
};

}  // namespace hcudp::internal

#endif  // HCUDP_SRC_HAMI_EVICTOR_H_
