// The search's work is bounded (issue 10 item 9): 2 of 1024 cards on a fully
// linked node comes back in a fraction of kubelet's patience, the picks are
// still good ones, and a cancelled search stops.
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <set>

#include "allocation/test_inventory.h"
#include "hcudp/preferred.h"

namespace hcudp {
namespace {

using SteadyClock = std::chrono::steady_clock;

// n cards, HSL islands of 8 (weight 15), PCIe (weight 72) between: n² links.
NodeInventory Islands(int n) {
  NodeInventory inv = testing::MakeInventory(n);
  for (int a = 0; a < n; ++a) {
    for (int b = 0; b < n; ++b) {
      if (a == b) continue;
      Link l;
      l.src = a;
      l.dst = b;
      bool island = a / 8 == b / 8;
      l.type = island ? LinkType::kHsl : LinkType::kPcie;
      l.weight = island ? 15 : 72;
      l.hops = island ? 1 : 3;
      inv.links.push_back(l);
    }
  }
  return inv;
}

std::vector<std::string> AllIds(const Resource& r) {
  std::vector<std::string> ids;
  for (const auto& d : r.devices) ids.push_back(d.id);
  return ids;
}

BOOST_AUTO_TEST_SUITE(preferred_bounds)

BOOST_AUTO_TEST_CASE(two_of_1024_cards_is_quick_and_picks_an_hsl_pair) {
  NodeInventory inv = Islands(1024);
  Resource r = testing::CardResource(inv);
  for (int size : {2, 8}) {
    BOOST_TEST_CONTEXT("size " << size) {
      auto start = SteadyClock::now();
      auto got = PreferredAllocation(inv, r, {AllIds(r), {}, size});
      auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(SteadyClock::now() - start);
      BOOST_TEST_MESSAGE(size << " of 1024: " << ms.count() << " ms");
      // kubelet waits for nobody; the benchmark holds the real figure (50 ms
      // p99). This bound only has to hold on a loaded test machine.
      BOOST_TEST(ms.count() < 1000);
      BOOST_REQUIRE_EQUAL(got.size(), static_cast<size_t>(size));
      // All from one island: every pair HSL.
      std::set<int> islands;
      for (const auto& id : got) {
        for (const auto& d : r.devices) {
          if (d.id == id) islands.insert(d.card / 8);
        }
      }
      BOOST_TEST(islands.size() == 1u);
    }
  }
}

BOOST_AUTO_TEST_CASE(must_include_on_a_big_node_pulls_its_island) {
  NodeInventory inv = Islands(1024);
  Resource r = testing::CardResource(inv);
  const std::string must = r.devices[517].id;  // island 64
  auto got = PreferredAllocation(inv, r, {AllIds(r), {must}, 4});
  BOOST_REQUIRE_EQUAL(got.size(), 4u);
  for (const auto& id : got) {
    for (const auto& d : r.devices) {
      if (d.id == id) BOOST_TEST(d.card / 8 == 64);
    }
  }
}

BOOST_AUTO_TEST_CASE(a_cancelled_search_gives_no_preference) {
  NodeInventory inv = Islands(256);
  Resource r = testing::CardResource(inv);
  int polls = 0;
  auto got = PreferredAllocation(inv, r, {AllIds(r), {}, 4}, [&polls] {
    ++polls;
    return true;
  });
  BOOST_TEST(got.empty());
  BOOST_TEST(polls >= 1);
  // Not cancelled: an answer.
  BOOST_TEST(PreferredAllocation(inv, r, {AllIds(r), {}, 4}, [] { return false; }).size() == 4u);
}

BOOST_AUTO_TEST_CASE(a_request_too_big_to_judge_gets_no_preference_at_once) {
  // 20,000 candidates × 10,000 wanted is beyond any bounded search.
  NodeInventory inv = testing::MakeInventory(4);
  Resource r;
  r.name = "hygon.com/hcu-share-1c-1g";
  r.kind = DeviceKind::kVhcu;
  for (int i = 0; i < 20000; ++i) {
    ResourceDevice d;
    d.id = "vdev" + std::to_string(i);
    d.card = i % 4;
    r.devices.push_back(d);
  }
  auto start = SteadyClock::now();
  auto got = PreferredAllocation(inv, r, {AllIds(r), {}, 10000});
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(SteadyClock::now() - start);
  BOOST_TEST(got.empty());
  BOOST_TEST(ms.count() < 1000);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp
