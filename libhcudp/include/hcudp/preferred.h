// Topology-aware GetPreferredAllocation: which `size` devices of a resource a
// container should get, so that multi-card jobs land on well-linked cards.
//
// Scoring. Every device maps to its card (a vHCU or MIG instance to its
// parent). The cost of a pair of distinct cards is, in order of importance:
//   1. link class: HSL or HYSWITCH (0) is better than PCIe or unknown (1);
//   2. the driver's link weight, a distance (lower is closer);
//   3. hops;
//   4. NUMA: 0 when both cards sit on the same NUMA node, else 1.
// A pair on the same card costs nothing. The pair cost is
//   class * 10^12 + min(weight, 10^6) * 10^5 + min(hops, 10^3) * 10^2 + numa
// so that summing pair costs over a set compares sets by total link class
// first, then total weight, then hops, then NUMA spread. The chosen set
// minimises the total over all pairs and always contains must_include.
// Search: exhaustive when C(candidates, free slots) <= 50,000; otherwise
// greedy (grow from must_include, or from each seed card when it is empty)
// followed by pairwise-swap improvement. Ties go to the lexicographically
// smaller ID list, so the answer is deterministic.
//
// Never an error: any request it cannot serve (size out of range, an ID not
// available, must_include larger than size) yields an empty preference, and
// kubelet falls back to its own choice.
#ifndef HCUDP_PREFERRED_H_
#define HCUDP_PREFERRED_H_

#include <cstdint>
#include <string>
#include <vector>

#include "hcudp/device.h"
#include "hcudp/export.h"
#include "hcudp/naming.h"

namespace hcudp {

struct PreferredRequest {
  std::vector<std::string> available;     // candidate device IDs
  std::vector<std::string> must_include;  // subset of available
  int size = 0;                           // how many to pick
};

// Cost of placing cards `a` and `b` in one allocation (see above).
HCUDP_EXPORT uint64_t CardPairCost(const NodeInventory& inventory, int a, int b);

// The preferred device IDs, sorted; empty when there is no preference.
HCUDP_EXPORT std::vector<std::string> PreferredAllocation(const NodeInventory& inventory,
                                                          const Resource& resource,
                                                          const PreferredRequest& request);

}  // namespace hcudp

#endif  // HCUDP_PREFERRED_H_
