// Preferred allocation on the two-islands SimNode fixture, discovered through
// the real backend (sim vendor library + host backend) and naming.
#include <boost/test/unit_test.hpp>

#include "hcudp/backend.h"
#include "hcudp/naming.h"
#include "hcudp/preferred.h"
#include "testing/testutil.h"

namespace hcudp {
namespace {

struct TwoIslandsNode {
  testing::TempDir root;
  NodeInventory inventory;
  Resource cards;

  TwoIslandsNode() {
    Options o;
    o.backend = BackendKind::kSim;
    o.sim_node_path = testing::SourcePath("test/fixtures/two-islands.yaml");
    o.host_root = root.path();
    auto backend = OpenBackend(o);
    BOOST_REQUIRE_MESSAGE(backend.ok(), backend.status().ToString());
    auto inv = (*backend)->Discover();
    BOOST_REQUIRE_MESSAGE(inv.ok(), inv.status().ToString());
    inventory = *inv;
    NamingParams p;
    p.strategy = Strategy::kHcu;
    auto resources = BuildResources(inventory, p);
    BOOST_REQUIRE(resources.ok());
    BOOST_REQUIRE(resources->size() == 1u);
    cards = resources->front();
  }

  std::vector<std::string> Bdfs(std::vector<int> indices) const {
    std::vector<std::string> out;
    for (int i : indices) out.push_back(inventory.FindCard(i)->bdf);
    std::sort(out.begin(), out.end());
    return out;
  }
};

BOOST_AUTO_TEST_SUITE(preferred_sim)

BOOST_FIXTURE_TEST_CASE(four_of_eight_is_one_whole_island, TwoIslandsNode) {
  std::vector<std::string> all;
  for (const auto& d : cards.devices) all.push_back(d.id);
  auto got = PreferredAllocation(inventory, cards, {all, {}, 4});
  BOOST_TEST((got == Bdfs({0, 1, 2, 3}) || got == Bdfs({4, 5, 6, 7})));
}

BOOST_FIXTURE_TEST_CASE(must_include_from_the_second_island_keeps_the_pick_there, TwoIslandsNode) {
  std::vector<std::string> all;
  for (const auto& d : cards.devices) all.push_back(d.id);
  auto got = PreferredAllocation(inventory, cards, {all, Bdfs({6}), 3});
  BOOST_REQUIRE(got.size() == 3u);
  for (const auto& id : got) {
    BOOST_TEST_CONTEXT(id) { BOOST_TEST(inventory.FindCardByBdf(id)->index >= 4); }
  }
}

BOOST_FIXTURE_TEST_CASE(two_from_a_broken_island_stay_on_hsl, TwoIslandsNode) {
  // Free: card 0 alone in island A, cards 5 and 7 in island B.
  auto got = PreferredAllocation(inventory, cards, {Bdfs({0, 5, 7}), {}, 2});
  BOOST_TEST(got == Bdfs({5, 7}));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp
