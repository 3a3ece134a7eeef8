// The shared synthetic inventory of the slice tests.
#ifndef HCUDP_TEST_DRA_SLICES_MANY_CARDS_H_
#define HCUDP_TEST_DRA_SLICES_MANY_CARDS_H_

#include <cstdio>
#include <string>

#include "hcudp/device.h"

namespace hcudp::dra {

// A node of `n` healthy 120-CU cards on distinct buses, whose index order is
// not PCI order (as on many real nodes, where the index is the probe
// order): neighbouring indices have their buses swapped, so index 0 sits
// on the second bus, index 1 on the first, and so on.
inline NodeInventory ManyCards(int n) {
  NodeInventory inv;
  for (int i = 0; i < n; ++i) {
    const int rank = (i ^ 1) < n ? (i ^ 1) : i;
    Card c;
    c.index = i;
    char bdf[24];
    std::snprintf(bdf, sizeof bdf, "0000:%02x:%02x.0", rank / 32 + 1, rank % 32);
    c.bdf = bdf;
    c.model = "K100_AI";
    c.serial = "S" + std::to_string(i);
    c.compute_units = 120;
    c.memory_bytes = 65520 * kMiB;
    inv.cards.push_back(c);
  }
  return inv;
}

}  // namespace hcudp::dra

#endif  // HCUDP_TEST_DRA_SLICES_MANY_CARDS_H_
