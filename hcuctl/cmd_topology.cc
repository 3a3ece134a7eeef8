// hcuctl topology: the link matrix between cards, and the
// kube-system/hcu-topology-info JSON the daemon would write in HAMi mode.
#include <string>

#include "command.h"
#include "hcudp/topology.h"
#include "reports.h"

namespace hcuctl {

Report TopologyReport(const hcudp::NodeInventory& inv) {
  Report r;
  std::vector<std::string> headers = {"CARD", "BDF", "NUMA"};
  for (const hcudp::Card& c : inv.cards) headers.push_back(std::to_string(c.index));
  Table matrix(headers);
  Value links = Value::MakeArray();
  for (const hcudp::Card& src : inv.cards) {
    std::vector<std::string> row = {
        std::to_string(src.index), src.bdf,
        src.numa_node == hcudp::kNoNumaNode ? "-" : std::to_string(src.numa_node)};
    for (const hcudp::Card& dst : inv.cards) {
      if (src.index == dst.index) {
        row.push_back("-");
        continue;
      }
      const hcudp::Link* l = inv.FindLink(src.index, dst.index);
      if (l == nullptr) {
        row.push_back("?");
        continue;
      }
      row.push_back(std::string(hcudp::LinkTypeName(l->type)) + "/" + std::to_string(l->weight) +
                    "/" + std::to_string(l->hops));
      links.Push(Value::MakeObject()
                     .Set("src", l->src)
                     .Set("dst", l->dst)
                     .Set("type", hcudp::LinkTypeName(l->type))
                     .Set("weight", l->weight)
                     .Set("hops", l->hops));
    }
    matrix.AddRow(std::move(row));
  }

  hcudp::TopologyInfo info = hcudp::BuildTopologyInfo(inv);
  Value rows = Value::MakeArray();
  for (const auto& row : info.matrix) {
    Value cells = Value::MakeArray();
    for (const hcudp::TopologyLink& t : row) {
      cells.Push(Value::MakeObject()
                     .Set("SrcDvInd", t.src)
                     .Set("DstDvInd", t.dst)
                     .Set("BdfID", t.bdf_id)
                     .Set("PciID", t.pci_id)
                     .Set("LinkType", hcudp::LinkTypeName(t.type))
                     .Set("Weight", t.weight)
                     .Set("Hops", t.hops));
    }
    rows.Push(std::move(cells));
  }
  r.value = Value::MakeObject();
  r.value.Set("links", std::move(links))
      .Set("topologyInfo", Value::MakeObject()
                               .Set("DeviceCount", info.device_count)
                               .Set("Matrix", std::move(rows)));
  r.tables.emplace_back("links (type/weight/hops; weight is the driver's distance, lower is closer):",
                        std::move(matrix));
  r.notes.push_back("");
  r.notes.push_back("hcu-topology-info (HAMi mode, kube-system/hcu-topology-info data[<node>]):");
  r.notes.push_back(hcudp::TopologyInfoJson(info));
  return r;
}

namespace {

int RunTopology(Context& ctx, const std::vector<std::string>& args) {
  return RunInventoryReport(ctx, kTopologyCommand, args, TopologyReport);
}

}  // namespace

const Command kTopologyCommand = {"topology",
                                  "link matrix between cards and the hcu-topology-info JSON",
                                  "hcuctl [global flags] topology", RunTopology};

}  // namespace hcuctl
