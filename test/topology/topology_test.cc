// BDF ids and the vendor's hcu-topology-info matrix (seed-behaviour.md §5.9,
// §6.3).
#include "hcudp/topology.h"

#include <boost/test/unit_test.hpp>
#include <string>

#include "naming/demo_inventories.h"

namespace hcudp {
namespace {

BOOST_AUTO_TEST_SUITE(topology)

BOOST_AUTO_TEST_CASE(bdf_id_uses_the_rsmi_layout) {
  BOOST_TEST(*BdfToId("0000:0a:00.0") == 2560u);
  BOOST_TEST(*BdfToId("0000:09:00.0") == 2304u);  // = KFD location_id
  BOOST_TEST(*BdfToId("0000:e9:00.0") == 59648u);
  BOOST_TEST(*BdfToId("0000:00:1f.7") == 0xffu);  // device<<3 | function
  BOOST_TEST(*BdfToId("0001:00:00.0") == (1ull << 32));
  BOOST_TEST(*BdfToId("0000:0A:00.0") == 2560u);  // hex case does not matter
}

BOOST_AUTO_TEST_CASE(bdf_round_trips_through_its_id) {
  for (const char* bdf : {"0000:0a:00.0", "0000:8e:00.0", "0000:b9:00.0", "0012:ff:1f.7"}) {
    BOOST_TEST(BdfFromId(*BdfToId(bdf)) == bdf);
  }
}

BOOST_AUTO_TEST_CASE(bdf_from_id_ignores_the_partition_bits) {
  BOOST_TEST(BdfFromId(2560u | (0xfull << 28)) == "0000:0a:00.0");
}

BOOST_AUTO_TEST_CASE(malformed_bdfs_are_invalid_arguments) {
  for (const char* bad : {"", "0a:00.0", "0000:0a:00", "0000:0a:20.0", "0000:0a:00.8",
                          "zzzz:0a:00.0", "0000:a:00.0", "0000:0a:00.0 ", "0000-0a-00.0"}) {
    BOOST_TEST_CONTEXT("\"" << bad << "\"") {
      auto id = BdfToId(bad);
      BOOST_TEST(!id.ok());
      BOOST_TEST(static_cast<int>(id.status().code()) ==
                 static_cast<int>(StatusCode::kInvalidArgument));
    }
  }
}

// Two cards at 0000:09:00.0 and 0000:0a:00.0 joined by two up HSL links.
NodeInventory VendorExamplePair() {
  NodeInventory inv = testing::K100ai8Inventory();
  inv.cards.resize(2);
  inv.cards[1].bdf = "0000:0a:00.0";
  inv.links.clear();
  for (auto [s, d] : {std::pair{0, 1}, std::pair{1, 0}}) {
    Link l;
    l.src = s;
    l.dst = d;
    l.type = LinkType::kHsl;
    l.hops = 1;
    l.weight = 15;
    l.up_links = 2;
    inv.links.push_back(l);
  }
  return inv;
}

BOOST_AUTO_TEST_CASE(json_matches_the_vendor_example_pair) {
  std::string json = TopologyInfoJson(BuildTopologyInfo(VendorExamplePair()));
  BOOST_TEST(json ==
             "{\"DeviceCount\":2,\"Matrix\":["
             "[{\"SrcDvInd\":0,\"DstDvInd\":0,\"BdfID\":2304,\"PciID\":\"0000:09:00.0\","
             "\"LinkType\":\"NONE\",\"Weight\":-1,\"Hops\":0},"
             "{\"SrcDvInd\":0,\"DstDvInd\":1,\"BdfID\":2560,\"PciID\":\"0000:0a:00.0\","
             "\"LinkType\":\"HSL\",\"Weight\":2,\"Hops\":0}],"
             "[{\"SrcDvInd\":1,\"DstDvInd\":0,\"BdfID\":2304,\"PciID\":\"0000:09:00.0\","
             "\"LinkType\":\"HSL\",\"Weight\":2,\"Hops\":0},"
             "{\"SrcDvInd\":1,\"DstDvInd\":1,\"BdfID\":2560,\"PciID\":\"0000:0a:00.0\","
             "\"LinkType\":\"NONE\",\"Weight\":-1,\"Hops\":0}]]}");
}

BOOST_AUTO_TEST_CASE(diagonal_is_none_with_weight_minus_one) {
  TopologyInfo info = BuildTopologyInfo(testing::K100ai8Inventory());
  BOOST_TEST(info.device_count == 8);
  BOOST_REQUIRE(info.matrix.size() == 8u);
  for (int i = 0; i < 8; ++i) {
    BOOST_REQUIRE(info.matrix[i].size() == 8u);
    BOOST_TEST(LinkTypeName(info.matrix[i][i].type) == "NONE");
    BOOST_TEST(info.matrix[i][i].weight == -1);
  }
}

BOOST_AUTO_TEST_CASE(hsl_weight_is_the_number_of_up_links_and_hops_are_always_zero) {
  TopologyInfo info = BuildTopologyInfo(testing::K100ai8Inventory());
  const TopologyLink& cell = info.matrix[2][5];
  BOOST_TEST(cell.src == 2);
  BOOST_TEST(cell.dst == 5);
  BOOST_TEST(LinkTypeName(cell.type) == "HSL");
  BOOST_TEST(cell.weight == 1);
  BOOST_TEST(cell.hops == 0);  // the driver says 1; the vendor never fills it
  BOOST_TEST(cell.pci_id == "0000:a9:00.0");
  BOOST_TEST(cell.bdf_id == 43264u);
}

BOOST_AUTO_TEST_CASE(pcie_weight_is_1_within_a_numa_node_and_0_across) {
  TopologyInfo info = BuildTopologyInfo(testing::Z100lMixedInventory());
  BOOST_TEST(LinkTypeName(info.matrix[0][1].type) == "PCIE");
  BOOST_TEST(info.matrix[0][1].weight == 1);  // NUMA 0 and 0
  BOOST_TEST(info.matrix[3][2].weight == 1);  // NUMA 1 and 1
  BOOST_TEST(LinkTypeName(info.matrix[0][2].type) == "PCIE");
  BOOST_TEST(info.matrix[0][2].weight == 0);  // NUMA 0 and 1
  BOOST_TEST(info.matrix[3][1].weight == 0);
}

BOOST_AUTO_TEST_CASE(hyswitch_weight_is_card_count_minus_one) {
  NodeInventory inv = testing::K100ai8Inventory();
  for (Link& l : inv.links) l.type = LinkType::kHyswitch;
  TopologyInfo info = BuildTopologyInfo(inv);
  BOOST_TEST(LinkTypeName(info.matrix[0][7].type) == "HYSWITCH");
  BOOST_TEST(info.matrix[0][7].weight == 7);
}

BOOST_AUTO_TEST_CASE(a_pair_without_a_known_link_is_unknown_with_weight_0) {
  NodeInventory inv = testing::Z100lMixedInventory();
  inv.links.erase(inv.links.begin());  // (0, 1)
  TopologyInfo info = BuildTopologyInfo(inv);
  BOOST_TEST(LinkTypeName(info.matrix[0][1].type) == "UNKNOWN");
  BOOST_TEST(info.matrix[0][1].weight == 0);
  BOOST_TEST(LinkTypeName(info.matrix[1][0].type) == "PCIE");
}

BOOST_AUTO_TEST_CASE(an_empty_node_has_an_empty_matrix) {
  BOOST_TEST(TopologyInfoJson(BuildTopologyInfo(NodeInventory())) ==
             "{\"DeviceCount\":0,\"Matrix\":[]}");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp
