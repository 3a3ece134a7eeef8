// Interconnect topology between cards: the driver's link matrix (type, hops,
// weight) and the vendor's hcu-topology-info JSON (seed-behaviour.md §5.9).
#ifndef HCUDP_TOPOLOGY_H_
#define HCUDP_TOPOLOGY_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "hcudp/device.h"
#include "hcudp/export.h"
#include "hcudp/status.h"

namespace hcudp {

// One cell of the vendor's matrix; weight uses the vendor's semantics
// (PCIE: 1 same NUMA else 0; HSL: up links; HYSWITCH: N-1; self: -1).
struct TopologyLink {
  int src = 0;
  int dst = 0;
  uint64_t bdf_id = 0;   // of dst
  std::string pci_id;    // BDF of dst
  LinkType type = LinkType::kNone;
  int weight = -1;
  int hops = 0;
};

struct TopologyInfo {
  int device_count = 0;
  std::vector<std::vector<TopologyLink>> matrix;  // [src][dst]
};

// domain<<32 | bus<<8 | device<<3 | function; InvalidArgument on bad text.
HCUDP_EXPORT StatusOr<uint64_t> BdfToId(std::string_view bdf);
// "%04x:%02x:%02x.%x" of the RSMI BDFID layout (partition bits ignored).
HCUDP_EXPORT std::string BdfFromId(uint64_t id);

HCUDP_EXPORT TopologyInfo BuildTopologyInfo(const NodeInventory& inventory);
// {"DeviceCount":N,"Matrix":[[{"SrcDvInd":..,"DstDvInd":..,"BdfID":..,
//  "PciID":"..","LinkType":"..","Weight":..,"Hops":0},..],..]}
HCUDP_EXPORT std::string TopologyInfoJson(const TopologyInfo& info);

}  // namespace hcudp

#endif  // HCUDP_TOPOLOGY_H_
