// Hand-built inventories for allocation, CDI and preferred-allocation tests
// (independent of the sim, so each test states exactly the node it needs).
#ifndef HCUDP_TEST_ALLOCATION_TEST_INVENTORY_H_
#define HCUDP_TEST_ALLOCATION_TEST_INVENTORY_H_

#include <string>

#include "hcudp/device.h"
#include "hcudp/naming.h"

namespace hcudp::testing {

// Card i: BDF 0000:<0x09+i>:00.0, card<i+1>, renderD<128+i>, NUMA i/2.
inline Card MakeCard(int i) {
  Card c;
  c.index = i;
  char bdf[32];
  std::snprintf(bdf, sizeof bdf, "0000:%02x:00.0", 0x09 + i);
  c.bdf = bdf;
  c.model = "K100_AI";
  c.compute_units = 120;
  c.memory_bytes = 65520 * kMiB;
  c.numa_node = i / 2;
  c.dri_nodes = {"/dev/dri/card" + std::to_string(i + 1),
                 "/dev/dri/renderD" + std::to_string(128 + i)};
  return c;
}

inline NodeInventory MakeInventory(int cards) {
  NodeInventory inv;
  inv.has_kfd = true;
  inv.has_mkfd = true;
  for (int i = 0; i < cards; ++i) inv.cards.push_back(MakeCard(i));
  return inv;
}

inline Resource CardResource(const NodeInventory& inv) {
  Resource r;
  r.name = "hygon.com/hcu";
  r.last_name = "hcu";
  r.kind = DeviceKind::kCard;
  for (const auto& c : inv.cards) {
    ResourceDevice d;
    d.id = c.bdf;
    d.card = c.index;
    d.numa_node = c.numa_node;
    r.devices.push_back(d);
  }
  return r;
}

}  // namespace hcudp::testing

#endif  // HCUDP_TEST_ALLOCATION_TEST_INVENTORY_H_
