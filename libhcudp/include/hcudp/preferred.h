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
// A pair of cards is judged by the link listed from the lower card index to
// the higher one, else by the reverse link, else as PCIe (weight 40, 2 hops).
// Search: exhaustive when C(candidates, free slots) <= 50,000 (and the
// enumeration stays under a fixed work bound); otherwise greedy (grow from
// must_include, or from each seed device when it is empty) followed by
// pairwise-swap improvement. Ties go to the first candidate in ID order, so
// the answer is deterministic.
//
// Bounded work. Pair costs come from one table built per call (links and
// cards indexed once, not searched per pair), and every phase counts its
// steps against a fixed budget (kubelet gives the call no deadline of its
// own, and a big node must not keep cores busy): when growing from every
// seed would exceed it, seeds are taken evenly spaced over the candidates,
// and the swap phase stops at the budget. Requests too large to judge within
// the budget (candidates × size above ~16M) get no preference. Measured in
// BENCHMARKS.md: ≤ 10 ms p99 at 256 cards, ≤ 50 ms at 1024.
//
// Never an error: any request it cannot serve (size out of range, an ID not
// available, must_include larger than size, too large, cancelled) yields an
// empty preference, and kubelet falls back to its own choice.
#ifndef HCUDP_PREFERRED_H_
#define HCUDP_PREFERRED_H_

#include <cstdint>
#include <functional>
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
// The same, polling `cancelled` between steps of the search: once it returns
// true the search stops and the answer is "no preference" (the caller has
// gone, or the daemon is stopping).
HCUDP_EXPORT std::vector<std::string> PreferredAllocation(const NodeInventory& inventory,
                                                          const Resource& resource,
                                                          const PreferredRequest& request,
                                                          const std::function<bool()>& cancelled);

}  // namespace hcudp

#endif  // HCUDP_PREFERRED_H_
