// What the simulated node's files contain, computed from a SimNode without
// touching the disk: KFD topology, vHCU confs, MIG confs. RenderSimNode and
// SimVendorLib share these so the files and the library answers agree.
#ifndef HCUDP_SRC_SIM_SIM_LAYOUT_H_
#define HCUDP_SRC_SIM_SIM_LAYOUT_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/fnv1a.h"  // Fnv1a64: simulated ids and host-root names
#include "hcudp/mig_conf.h"
#include "hcudp/sim_node.h"
#include "hcudp/vdev_conf.h"

namespace hcudp::sim {

inline constexpr uint16_t kHygonVendorId = 0x1d94;

// The card's RSMI unique id (also KFD `unique_id`): a stable hash of its serial.
uint64_t UniqueIdOf(const SimCard& card);

// --- KFD topology: sys/class/kfd/kfd/topology/nodes/<n>/{gpu_id,properties} ---
struct KfdNode {
  uint32_t gpu_id = 0;     // 0 for CPU nodes
  std::string properties;  // "name value\n" lines
};
// CPU nodes first (one per distinct NUMA node of the cards, at least one),
// then one GPU node per card in index order.
std::vector<KfdNode> KfdTopology(const SimNode& node);

// --- vHCUs ---
struct CuMask {
  uint64_t lo = 0;
  uint64_t hi = 0;
  int Count() const;
  bool Test(int bit) const;
  void Set(int bit);
  CuMask operator|(const CuMask& o) const { return {lo | o.lo, hi | o.hi}; }
};
// The `count` lowest CUs of a card with `card_cus` CUs that are not in
// `used`; nullopt when fewer are free.
std::optional<CuMask> LowestFreeCus(const CuMask& used, int card_cus, int count);
// The vdev confs of node.vhcus as the driver would have written them, keyed
// by vHCU id: masks are the lowest free CUs of the card in id order.
std::map<int, VdevConf> SeedVdevConfs(const SimNode& node);

// --- MIG ---
// File name ("dev3gi1ci0.conf") -> conf, for every instance of `node`.
// Placement: each GI takes the lowest free run of its size aligned to its
// size, in listing order.
std::map<std::string, MigConf> MigConfs(const SimNode& node);

}  // namespace hcudp::sim

#endif  // HCUDP_SRC_SIM_SIM_LAYOUT_H_
