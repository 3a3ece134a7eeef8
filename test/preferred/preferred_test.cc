#include "hcudp/preferred.h"

#include <boost/test/unit_test.hpp>

#include "allocation/test_inventory.h"

namespace hcudp {
namespace {

using testing::CardResource;
using testing::MakeInventory;

void Connect(NodeInventory& inv, int a, int b, LinkType type, int hops, int weight) {
  for (auto [s, d] : {std::pair{a, b}, std::pair{b, a}}) {
    Link l;
    l.src = s;
    l.dst = d;
    l.type = type;
    l.hops = hops;
    l.weight = weight;
    inv.links.push_back(l);
  }
}

// 8 cards in two HSL islands {0,1,2,3} and {4,5,6,7}; PCIe between islands.
// Islands are interleaved in BDF order on purpose, via card numbering.
NodeInventory TwoIslands() {
  NodeInventory inv = MakeInventory(8);
  for (int a = 0; a < 8; ++a) {
    for (int b = a + 1; b < 8; ++b) {
      bool same = (a < 4) == (b < 4);
      if (same) {
        Connect(inv, a, b, LinkType::kHsl, 1, 15);
      } else {
        Connect(inv, a, b, LinkType::kPcie, 3, 72);
      }
    }
  }
  return inv;
}

std::string Bdf(int i) { return testing::MakeCard(i).bdf; }

std::vector<std::string> Bdfs(std::vector<int> cards) {
  std::vector<std::string> out;
  for (int c : cards) out.push_back(Bdf(c));
  std::sort(out.begin(), out.end());
  return out;
}

BOOST_AUTO_TEST_SUITE(preferred)

BOOST_AUTO_TEST_CASE(hsl_pair_beats_pcie_pair_whatever_the_weights) {
  NodeInventory inv = MakeInventory(2);
  Connect(inv, 0, 1, LinkType::kHsl, 9, 900);
  uint64_t hsl = CardPairCost(inv, 0, 1);
  inv.links.clear();
  Connect(inv, 0, 1, LinkType::kPcie, 1, 1);
  BOOST_TEST(hsl < CardPairCost(inv, 0, 1));
}

BOOST_AUTO_TEST_CASE(cost_orders_weight_then_hops_then_numa) {
  NodeInventory inv = MakeInventory(4);       // NUMA: 0,0,1,1
  Connect(inv, 0, 1, LinkType::kHsl, 3, 10);  // same NUMA, more hops
  Connect(inv, 0, 2, LinkType::kHsl, 1, 10);  // other NUMA, fewer hops
  Connect(inv, 0, 3, LinkType::kHsl, 1, 11);  // heavier
  BOOST_TEST(CardPairCost(inv, 0, 2) < CardPairCost(inv, 0, 1));
  BOOST_TEST(CardPairCost(inv, 0, 1) < CardPairCost(inv, 0, 3));
  Connect(inv, 1, 2, LinkType::kHsl, 1, 10);
  BOOST_TEST(CardPairCost(inv, 0, 2) == CardPairCost(inv, 1, 2));
  BOOST_TEST(CardPairCost(inv, 0, 0) == 0u);
}

// A pair whose two directions are listed differently is judged by the link
// from the lower card index, whichever way round it is asked: as the search
// judges it.
BOOST_AUTO_TEST_CASE(a_pair_costs_the_same_asked_either_way_round) {
  NodeInventory inv = MakeInventory(2);
  Connect(inv, 0, 1, LinkType::kHsl, 1, 15);
  inv.links[1].type = LinkType::kPcie;  // 1 -> 0
  inv.links[1].weight = 72;
  BOOST_TEST(CardPairCost(inv, 1, 0) == CardPairCost(inv, 0, 1));
  NodeInventory hsl = MakeInventory(2);
  Connect(hsl, 0, 1, LinkType::kHsl, 1, 15);
  BOOST_TEST(CardPairCost(inv, 1, 0) == CardPairCost(hsl, 0, 1));
}

BOOST_AUTO_TEST_CASE(two_cards_come_from_one_island) {
  NodeInventory inv = TwoIslands();
  // Only cards 3 and 4..5 free: the pair must be 4,5 (HSL), not 3 + 4.
  auto got = PreferredAllocation(inv, CardResource(inv), {Bdfs({3, 4, 5}), {}, 2});
  BOOST_TEST(got == Bdfs({4, 5}));
}

BOOST_AUTO_TEST_CASE(four_cards_fill_one_island) {
  NodeInventory inv = TwoIslands();
  auto got = PreferredAllocation(inv, CardResource(inv), {Bdfs({0, 1, 4, 5, 6, 7}), {}, 4});
  BOOST_TEST(got == Bdfs({4, 5, 6, 7}));
}

BOOST_AUTO_TEST_CASE(must_include_is_honoured_and_pulls_its_island) {
  NodeInventory inv = TwoIslands();
  auto got = PreferredAllocation(inv, CardResource(inv), {Bdfs({0, 1, 2, 4, 5, 6}), Bdfs({1}), 3});
  BOOST_TEST(got == Bdfs({0, 1, 2}));
  got = PreferredAllocation(inv, CardResource(inv), {Bdfs({0, 1, 2, 4, 5, 6}), Bdfs({5}), 2});
  BOOST_TEST(got.size() == 2u);
  BOOST_TEST((std::find(got.begin(), got.end(), Bdf(5)) != got.end()));
  BOOST_TEST((std::find(got.begin(), got.end(), Bdf(4)) != got.end() ||
              std::find(got.begin(), got.end(), Bdf(6)) != got.end()));
}

BOOST_AUTO_TEST_CASE(same_numa_breaks_ties_between_equal_links) {
  NodeInventory inv = MakeInventory(4);  // NUMA 0,0,1,1; all links default
  auto got = PreferredAllocation(inv, CardResource(inv), {Bdfs({1, 2, 3}), {}, 2});
  BOOST_TEST(got == Bdfs({2, 3}));
}

BOOST_AUTO_TEST_CASE(requests_it_cannot_serve_give_no_preference) {
  NodeInventory inv = TwoIslands();
  Resource r = CardResource(inv);
  struct Case {
    std::string name;
    PreferredRequest request;
  };
  const std::vector<Case> cases = {
      {"size zero", {Bdfs({0, 1}), {}, 0}},
      {"size above available", {Bdfs({0, 1}), {}, 3}},
      {"must not available", {Bdfs({0, 1}), Bdfs({2}), 1}},
      {"must above size", {Bdfs({0, 1, 2}), Bdfs({0, 1}), 1}},
      {"unknown id", {{"nope", Bdf(0)}, {}, 1}},
  };
  for (const auto& c : cases) {
    BOOST_TEST_CONTEXT("case " << c.name) {
      BOOST_TEST(PreferredAllocation(inv, r, c.request).empty());
    }
  }
}

BOOST_AUTO_TEST_CASE(all_available_means_all) {
  NodeInventory inv = TwoIslands();
  auto got = PreferredAllocation(inv, CardResource(inv), {Bdfs({0, 5}), {}, 2});
  BOOST_TEST(got == Bdfs({0, 5}));
}

BOOST_AUTO_TEST_CASE(large_pools_use_the_greedy_search_and_still_find_an_island) {
  // 64 cards in 8 HSL islands of 8: C(64, 8) is far above the exhaustive bound.
  NodeInventory inv = MakeInventory(64);
  for (int a = 0; a < 64; ++a) {
    for (int b = a + 1; b < 64; ++b) {
      if (a / 8 == b / 8) {
        Connect(inv, a, b, LinkType::kHsl, 1, 15);
      } else {
        Connect(inv, a, b, LinkType::kPcie, 3, 72);
      }
    }
  }
  std::vector<int> avail;
  for (int i = 0; i < 64; ++i) {
    if (i != 0 && i != 9) avail.push_back(i);  // islands 0 and 1 are incomplete
  }
  auto got = PreferredAllocation(inv, CardResource(inv), {Bdfs(avail), {}, 8});
  BOOST_REQUIRE(got.size() == 8u);
  BOOST_TEST(got == Bdfs({16, 17, 18, 19, 20, 21, 22, 23}));
}

BOOST_AUTO_TEST_CASE(vhcus_map_to_their_cards) {
  NodeInventory inv = TwoIslands();
  Resource r;
  r.kind = DeviceKind::kVhcu;
  for (auto [id, card] : {std::pair{0, 0}, {1, 4}, {2, 5}}) {
    ResourceDevice d;
    d.id = "vdev" + std::to_string(id);
    d.card = card;
    d.vhcu_id = id;
    r.devices.push_back(d);
  }
  auto got = PreferredAllocation(inv, r, {{"vdev0", "vdev1", "vdev2"}, {}, 2});
  BOOST_TEST(got == (std::vector<std::string>{"vdev1", "vdev2"}));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp
