#include <boost/test/unit_test.hpp>

#include "hcudp/sim_node.h"
#include "testing/testutil.h"

namespace hcudp {
namespace {

using testing::LoadSourceNode;

BOOST_AUTO_TEST_SUITE(demo_nodes)

BOOST_AUTO_TEST_CASE(k100ai_8_is_eight_cards_in_a_full_hsl_mesh) {
  SimNode node = LoadSourceNode("demo/nodes/k100ai-8.yaml");
  BOOST_REQUIRE(node.cards.size() == 8u);
  for (const SimCard& c : node.cards) {
    BOOST_TEST(c.model == "K100_AI");
    BOOST_TEST(c.pci_device_id == 0x6210);
    BOOST_TEST(c.compute_units == 120);
    BOOST_TEST(c.memory_mib == 65520u);
    BOOST_TEST(c.numa_node == c.index);
    BOOST_TEST(c.render_minor == 128 + c.index);
  }
  BOOST_TEST(node.cards[5].bdf == "0000:a9:00.0");
  BOOST_TEST(node.cards[0].serial == "T6T8290019020401");
  for (int a = 0; a < 8; ++a) {
    for (int b = 0; b < 8; ++b) {
      if (a == b) continue;
      BOOST_TEST((node.LinkBetween(a, b).type == LinkType::kHsl));
      BOOST_TEST(node.LinkBetween(a, b).hops == 1);
      BOOST_TEST(node.LinkBetween(a, b).weight == 15);
    }
  }
  BOOST_TEST(node.vhcus.empty());
  BOOST_TEST(!node.mig_enabled);
}

BOOST_AUTO_TEST_CASE(z100l_mixed_has_two_numa_nodes_and_six_vhcus) {
  SimNode node = LoadSourceNode("demo/nodes/z100l-mixed.yaml");
  BOOST_REQUIRE(node.cards.size() == 4u);
  BOOST_TEST(node.cards[3].bdf == "0000:8e:00.0");
  BOOST_TEST(node.cards[3].memory_mib == 32752u);
  BOOST_TEST(node.cards[1].numa_node == 0);
  BOOST_TEST(node.cards[2].numa_node == 1);
  BOOST_TEST(node.LinkBetween(0, 1).weight == 40);
  BOOST_TEST(node.LinkBetween(3, 2).hops == 2);
  BOOST_TEST(node.LinkBetween(1, 2).weight == 72);
  BOOST_TEST(node.LinkBetween(0, 3).hops == 3);
  BOOST_REQUIRE(node.vhcus.size() == 6u);
  BOOST_TEST(node.vhcus[4].card == 3);
  BOOST_TEST(node.vhcus[4].compute_units == 30);
  BOOST_TEST(node.vhcus[4].memory_mib == 16376u);
  BOOST_TEST(node.vhcus[3].pipe_id == 3);
}

BOOST_AUTO_TEST_CASE(bw_mig_has_nine_instances_in_mig_mode) {
  SimNode node = LoadSourceNode("demo/nodes/bw-mig.yaml");
  BOOST_REQUIRE(node.cards.size() == 4u);
  BOOST_TEST(node.cards[3].bdf == "0000:b9:00.0");
  BOOST_TEST(node.cards[0].pci_device_id == 0x6310);
  BOOST_TEST(node.mig_enabled);
  BOOST_REQUIRE(node.mig_instances.size() == 9u);
  int per_profile[3] = {0, 0, 0};
  for (const SimMigInstance& mi : node.mig_instances) {
    if (mi.profile == "2g.15gb") ++per_profile[0];
    if (mi.profile == "4g.31gb") ++per_profile[1];
    if (mi.profile == "8g.63gb") ++per_profile[2];
  }
  BOOST_TEST(per_profile[0] == 5);
  BOOST_TEST(per_profile[1] == 3);
  BOOST_TEST(per_profile[2] == 1);
  BOOST_TEST(node.LinkBetween(0, 3).weight == 72);
}

BOOST_AUTO_TEST_CASE(two_islands_links_hsl_inside_and_pcie_across) {
  SimNode node = LoadSourceNode("test/fixtures/two-islands.yaml");
  BOOST_REQUIRE(node.cards.size() == 8u);
  BOOST_TEST((node.LinkBetween(0, 3).type == LinkType::kHsl));
  BOOST_TEST((node.LinkBetween(6, 5).type == LinkType::kHsl));
  BOOST_TEST((node.LinkBetween(3, 4).type == LinkType::kPcie));
  BOOST_TEST(node.LinkBetween(3, 4).weight == 72);
  BOOST_TEST(node.cards[3].numa_node == 0);
  BOOST_TEST(node.cards[4].numa_node == 1);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp
