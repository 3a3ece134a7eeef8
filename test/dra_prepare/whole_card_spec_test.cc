// The whole-card CDI spec under concurrent inventory changes: the file
// always ends up describing the newest inventory the preparer was given; a
// writer that lost the race never leaves its older spec behind.
#include <boost/test/unit_test.hpp>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "dra_prepare/prepare_fixture.h"

namespace hcudp::testing {
namespace {

struct TwoInventories {
  explicit TwoInventories(SimDraNode& node) : full(node.Inventory()), less(full) {
    less.cards.erase(less.cards.begin() + 3);
    removed = dra::CardDeviceName(full.cards[3]);
  }
  NodeInventory full;
  NodeInventory less;  // card 3 gone
  std::string removed;
};

// A writer of the older inventory is held right after its file write while
// a newer inventory arrives: the newer spec must still be the one on disk
// when both calls have returned (before, the newer call saw the older
// writer's spec as "already written" only by comparing it in memory, and
// the older one then recorded its own).
BOOST_AUTO_TEST_CASE(a_newer_inventory_during_a_spec_write_is_written_too) {
  std::mutex mu;
  std::condition_variable cv;
  bool held = false;
  bool newer_returned = false;
  bool hold_next = false;
  dra::PreparerOptions options;
  options.crash_after = [&](dra::PrepareStep step) {
    if (step != dra::PrepareStep::kWholeCardSpecWritten) return false;
    std::unique_lock<std::mutex> lock(mu);
    if (!hold_next) return false;
    hold_next = false;
    held = true;
    cv.notify_all();
    cv.wait_for(lock, std::chrono::seconds(10), [&] { return newer_returned; });
    return false;
  };
  SimDraNode node("k100ai-8-probe-order.yaml");
  node.Restart(options);
  BOOST_REQUIRE(node.preparer->Recover().ok());
  TwoInventories inv(node);
  const std::string spec = node.Path("/var/run/cdi/dra.hygon.com-hcu.json");
  BOOST_REQUIRE(node.preparer->WriteWholeCardSpec(inv.less).ok());
  BOOST_REQUIRE(ReadFile(spec).find(inv.removed) == std::string::npos);

  {
    std::lock_guard<std::mutex> lock(mu);
    hold_next = true;
  }
  std::thread older([&] { BOOST_TEST(node.preparer->WriteWholeCardSpec(inv.full).ok()); });
  {
    std::unique_lock<std::mutex> lock(mu);
    BOOST_REQUIRE(cv.wait_for(lock, std::chrono::seconds(10), [&] { return held; }));
  }
  BOOST_TEST(node.preparer->WriteWholeCardSpec(inv.less).ok());  // the newer one
  {
    std::lock_guard<std::mutex> lock(mu);
    newer_returned = true;
    cv.notify_all();
  }
  older.join();
  BOOST_TEST(ReadFile(spec).find(inv.removed) == std::string::npos,
             "the whole-card spec still offers " << inv.removed);
  BOOST_TEST(CdiSchemaErrors(spec) == "");
}

// Many racing pairs, then a settling call: the file follows it every time.
BOOST_AUTO_TEST_CASE(a_stale_whole_card_spec_never_outlives_a_newer_one) {
  SimDraNode node("k100ai-8-probe-order.yaml");
  BOOST_REQUIRE(node.preparer->Recover().ok());
  TwoInventories inv(node);
  const std::string spec = node.Path("/var/run/cdi/dra.hygon.com-hcu.json");
  for (int round = 0; round < 40; ++round) {
    std::thread a([&] { (void)node.preparer->WriteWholeCardSpec(inv.less); });
    std::thread b([&] { (void)node.preparer->WriteWholeCardSpec(inv.full); });
    a.join();
    b.join();
    BOOST_REQUIRE(node.preparer->WriteWholeCardSpec(inv.less).ok());
    BOOST_REQUIRE_MESSAGE(ReadFile(spec).find(inv.removed) == std::string::npos,
                          "round " << round << ": the spec still offers " << inv.removed);
    BOOST_REQUIRE(node.preparer->WriteWholeCardSpec(inv.full).ok());
    BOOST_REQUIRE_MESSAGE(ReadFile(spec).find(inv.removed) != std::string::npos,
                          "round " << round << ": the spec lacks " << inv.removed);
  }
}

}  // namespace
}  // namespace hcudp::testing
