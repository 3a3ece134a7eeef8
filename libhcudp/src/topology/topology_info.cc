// The vendor's interconnect matrix and its hcu-topology-info JSON
// (seed-behaviour.md §5.9): vendor weight semantics, not the driver's.
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "hcudp/topology.h"

namespace hcudp {
namespace {

// The vendor's weight for a link between two distinct cards.
TopologyLink CellFor(const NodeInventory& inv, const Card& src, const Card& dst) {
  TopologyLink cell;
  cell.src = src.index;
  cell.dst = dst.index;
  StatusOr<uint64_t> id = BdfToId(dst.bdf);
  cell.bdf_id = id.ok() ? *id : 0;
  cell.pci_id = dst.bdf;
  cell.hops = 0;  // the vendor never fills Hops
  if (src.index == dst.index) {
    cell.type = LinkType::kNone;
    cell.weight = -1;
    return cell;
  }
  const Link* link = inv.FindLink(src.index, dst.index);
  LinkType type = link == nullptr ? LinkType::kUnknown : link->type;
  switch (type) {
    case LinkType::kPcie:
      cell.type = LinkType::kPcie;
      cell.weight = src.numa_node == dst.numa_node ? 1 : 0;
      break;
    case LinkType::kHsl:
      cell.type = LinkType::kHsl;
      cell.weight = link->up_links;
      break;
    case LinkType::kHyswitch:
      cell.type = LinkType::kHyswitch;
      cell.weight = static_cast<int>(inv.cards.size()) - 1;
      break;
    case LinkType::kNone:
    case LinkType::kUnknown:
      cell.type = LinkType::kUnknown;
      cell.weight = 0;
      break;
  }
  return cell;
}

}  // namespace

TopologyInfo BuildTopologyInfo(const NodeInventory& inventory) {
  TopologyInfo info;
  info.device_count = static_cast<int>(inventory.cards.size());
  for (const Card& src : inventory.cards) {
    std::vector<TopologyLink> row;
    row.reserve(inventory.cards.size());
    for (const Card& dst : inventory.cards) row.push_back(CellFor(inventory, src, dst));
    info.matrix.push_back(std::move(row));
  }
  return info;
}

std::string TopologyInfoJson(const TopologyInfo& info) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  w.StartObject();
  w.Key("DeviceCount");
  w.Int(info.device_count);
  w.Key("Matrix");
  w.StartArray();
  for (const auto& row : info.matrix) {
    w.StartArray();
    for (const TopologyLink& cell : row) {
      w.StartObject();
      w.Key("SrcDvInd");
      w.Int(cell.src);
      w.Key("DstDvInd");
      w.Int(cell.dst);
      w.Key("BdfID");
      w.Uint64(cell.bdf_id);
      w.Key("PciID");
      w.String(cell.pci_id.c_str(), static_cast<rapidjson::SizeType>(cell.pci_id.size()));
      w.Key("LinkType");
      std::string_view type = LinkTypeName(cell.type);
      w.String(type.data(), static_cast<rapidjson::SizeType>(type.size()));
      w.Key("Weight");
      w.Int(cell.weight);
      w.Key("Hops");
      w.Int(cell.hops);
      w.EndObject();
    }
    w.EndArray();
  }
  w.EndArray();
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

}  // namespace hcudp
