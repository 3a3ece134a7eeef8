// The three demo nodes of reference/hcu-hardware.md §6.1-6.3 as
// NodeInventory values, the way discovery would report them. Shared by the
// naming, topology and backend tests.
#ifndef HCUDP_TEST_NAMING_DEMO_INVENTORIES_H_
#define HCUDP_TEST_NAMING_DEMO_INVENTORIES_H_

#include "hcudp/device.h"

namespace hcudp::testing {

// Node A: 8 x K100_AI (120 CU, 65520 MiB), one NUMA node per card, full HSL
// mesh (one up link per pair).
NodeInventory K100ai8Inventory();
// Node B: 4 x Z100L (60 CU, 32752 MiB), NUMA 0,0,1,1, PCIe only; vdev0-3
// (15 CU, 8188 MiB) on card 2, vdev4-5 (30 CU, 16376 MiB) on card 3.
NodeInventory Z100lMixedInventory();
// Node C: 4 x BW200 (80 CU, 65520 MiB), MIG mode with 5 x 2g.15gb,
// 3 x 4g.31gb and 1 x 8g.63gb instances.
NodeInventory BwMigInventory();

}  // namespace hcudp::testing

#endif  // HCUDP_TEST_NAMING_DEMO_INVENTORIES_H_
