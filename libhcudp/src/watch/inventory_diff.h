// What makes the node watcher publish: comparisons of two looks at the node.
#ifndef HCUDP_WATCH_INVENTORY_DIFF_H_
#define HCUDP_WATCH_INVENTORY_DIFF_H_

#include <vector>

#include "hcudp/device.h"
#include "hcudp/naming.h"

namespace hcudp::watch {

// True when what DRA mode publishes from an inventory may differ: cards
// (identity, health, NUMA, size), vHCUs, MIG instances, unreadable vHCU state.
bool DraInventoryDiffers(const NodeInventory& a, const NodeInventory& b);

// True when the device lists (IDs, health, NUMA) of the two sets differ.
bool ResourcesDiffer(const std::vector<Resource>& a, const std::vector<Resource>& b);

// True when what Allocate and the CDI spec take from the inventory beyond
// the device lists differs: a card's /dev/dri nodes (udev may make them
// after the first look, a driver reload may renumber them), /dev/kfd and
// /dev/mkfd, conf paths.
bool AllocationInputsDiffer(const NodeInventory& a, const NodeInventory& b);

// True when what is unknown about the node differs: the unknown cards
// (identity, why) or the unreadable vHCU state (paths). A consumer of the
// snapshot must see state turn unknown even when no device list changed.
bool CertaintyDiffers(const NodeInventory& a, const NodeInventory& b);

}  // namespace hcudp::watch

#endif  // HCUDP_WATCH_INVENTORY_DIFF_H_
