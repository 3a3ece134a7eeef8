// The whole-card CDI spec under concurrent inventory changes: the file
// always ends up describing the newest inventory the preparer was given; a
// writer that lost the race never leaves its older spec behind. And a card
// a prepared claim holds keeps its entry while the node misses it or cannot
// read it (issue 28's model, I3): the running pod's CDI id must resolve.
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <utility>

#include "dra_prepare/prepare_fixture.h"
#include "dra/dra_cdi_spec.h"
#include "hcudp/dra/checkpoint.h"

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

// The sim node without the card at `bdf`: a discovery that misses it (the
// vendor library stopped listing it, or another BDF answers at its index).
class MissingCardBackend final : public Backend {
 public:
  MissingCardBackend(Backend* inner, std::string bdf) : inner_(inner), bdf_(std::move(bdf)) {}
  StatusOr<NodeInventory> Discover() override {
    StatusOr<NodeInventory> inv = inner_->Discover();
    if (inv.ok()) WithoutCard(&*inv, bdf_);
    return inv;
  }
  StatusOr<std::vector<CardHealthReport>> QueryHealth() override { return inner_->QueryHealth(); }
  StatusOr<Vhcu> CreateVhcu(int card, int compute_units, uint64_t memory_mib) override {
    return inner_->CreateVhcu(card, compute_units, memory_mib);
  }
  Status DestroyVhcu(int id) override { return inner_->DestroyVhcu(id); }
  const std::string& host_root() const override { return inner_->host_root(); }
  std::vector<std::string> WatchPaths() const override { return inner_->WatchPaths(); }

  static void WithoutCard(NodeInventory* inv, const std::string& bdf) {
    auto& cards = inv->cards;
    cards.erase(std::remove_if(cards.begin(), cards.end(),
                               [&](const Card& c) { return c.bdf == bdf; }),
                cards.end());
  }

 private:
  Backend* inner_;
  std::string bdf_;
};

// A whole-card claim prepared on the node; its card and CDI device name.
struct WholeCardClaim {
  dra::ClaimRef ref;
  std::string bdf;
  std::string device;  // hcu-<bdf>
};

WholeCardClaim PrepareWholeCard(SimDraNode& node) {
  WholeCardClaim c;
  c.ref = node.AllocateAndStore(ClaimJson("uid-w", "w", "[" + ExactRequest("hcu") + "]"), "pw");
  auto a = node.preparer->Prepare(c.ref);
  BOOST_REQUIRE(a.ok() && a->error.empty());
  c.device = a->devices.at(0).device_name;
  auto entry = dra::CheckpointStore(node.Root()).Read("uid-w");
  BOOST_REQUIRE(entry.ok());
  c.bdf = entry->devices.at(0).card_bdf;
  BOOST_REQUIRE(!c.bdf.empty());
  return c;
}

// The entry of `device` in the whole-card spec file; "" when absent.
std::string SpecEntry(SimDraNode& node, const std::string& device) {
  auto entries = dra::WholeCardSpecEntries(ReadFile(node.Path("/var/run/cdi/dra.hygon.com-hcu.json")));
  auto it = entries.find(device);
  return it == entries.end() ? "" : it->second;
}

// While running: the watcher's look misses the claimed card (model
// P4.10.4,M9.8.9). Its entry stays as it was; once the claim is
// unprepared, a look that still misses the card drops it.
BOOST_AUTO_TEST_CASE(a_claimed_card_missed_while_running_keeps_its_cdi_entry) {
  SimDraNode node("k100ai-8-probe-order.yaml");
  BOOST_REQUIRE(node.preparer->Recover().ok());
  WholeCardClaim c = PrepareWholeCard(node);
  const std::string before = SpecEntry(node, c.device);
  BOOST_REQUIRE(!before.empty());
  NodeInventory missed = node.Inventory();
  MissingCardBackend::WithoutCard(&missed, c.bdf);
  BOOST_REQUIRE(node.preparer->WriteWholeCardSpec(missed).ok());
  BOOST_TEST(SpecEntry(node, c.device) == before, c.device << " left the whole-card spec");
  const std::string spec = node.Path("/var/run/cdi/dra.hygon.com-hcu.json");
  BOOST_TEST(CdiSchemaErrors(spec) == "");
  // Still there after another look (kept from the spec as written).
  BOOST_REQUIRE(node.preparer->WriteWholeCardSpec(missed).ok());
  BOOST_TEST(SpecEntry(node, c.device) == before);

  BOOST_REQUIRE(node.preparer->Unprepare(c.ref).ok());
  BOOST_REQUIRE(node.preparer->WriteWholeCardSpec(missed).ok());
  BOOST_TEST(SpecEntry(node, c.device) == "", "no claim holds " << c.device << " any more");
}

// At start: this start's discovery misses the claimed card (model
// P8.3.8,M6.1.0). Recover keeps the claim and the card's entry from the
// spec on disk.
BOOST_AUTO_TEST_CASE(a_claimed_card_missed_at_start_keeps_its_cdi_entry) {
  SimDraNode node("k100ai-8-probe-order.yaml");
  BOOST_REQUIRE(node.preparer->Recover().ok());
  WholeCardClaim c = PrepareWholeCard(node);
  const std::string before = SpecEntry(node, c.device);
  BOOST_REQUIRE(!before.empty());
  node.Restart();
  MissingCardBackend missing(node.backend.get(), c.bdf);
  dra::PreparerOptions options;
  options.host_root = node.Root();
  options.pool_name = "node-a";
  node.preparer = std::make_unique<dra::Preparer>(&missing, node.manager.get(),
                                                  node.claims.Fetcher(), options, node.clock);
  auto r = node.preparer->Recover();
  BOOST_REQUIRE_MESSAGE(r.ok(), r.status().ToString());
  BOOST_TEST(r->unprepared == 0);
  BOOST_TEST(node.preparer->Prepared().size() == 1u);
  BOOST_TEST(SpecEntry(node, c.device) == before, c.device << " left the whole-card spec");
  // The next look (the watcher's) keeps it too.
  BOOST_REQUIRE(node.preparer->WriteWholeCardSpec(*missing.Discover()).ok());
  BOOST_TEST(SpecEntry(node, c.device) == before);
  node.preparer.reset();
}

// An unknown card is written from its own last known identity, by BDF:
// another card answering at its old index does not hide it or stand in
// for it (before, the entry was skipped when its index was taken).
BOOST_AUTO_TEST_CASE(an_unknown_card_keeps_its_entry_when_its_index_is_taken) {
  SimDraNode node("k100ai-8-probe-order.yaml");
  BOOST_REQUIRE(node.preparer->Recover().ok());
  NodeInventory full = node.Inventory();
  BOOST_REQUIRE(node.preparer->WriteWholeCardSpec(full).ok());
  const Card gone = full.cards.at(2);
  const std::string before = SpecEntry(node, dra::CardDeviceName(gone));
  BOOST_REQUIRE(!before.empty());
  // Card 2 missed; the cards after it renumbered, as the driver would.
  NodeInventory renumbered = full;
  renumbered.cards.erase(renumbered.cards.begin() + 2);
  for (size_t i = 2; i < renumbered.cards.size(); ++i) renumbered.cards[i].index -= 1;
  UnknownCard u;
  u.last_known = gone;
  u.reason = UnknownReason::kMissedDiscovery;
  renumbered.unknown_cards.push_back(u);
  BOOST_REQUIRE(node.preparer->WriteWholeCardSpec(renumbered).ok());
  BOOST_TEST(SpecEntry(node, dra::CardDeviceName(gone)) == before);
  // The card now at index 2 has its own DRI nodes, not the missed card's.
  const Card& moved = renumbered.cards.at(2);
  const std::string moved_entry = SpecEntry(node, dra::CardDeviceName(moved));
  for (const std::string& dri : moved.dri_nodes) {
    BOOST_TEST(moved_entry.find("\"" + dri + "\"") != std::string::npos, dri);
  }
  for (const std::string& dri : gone.dri_nodes) {
    BOOST_TEST(moved_entry.find("\"" + dri + "\"") == std::string::npos, dri);
  }
}

}  // namespace
}  // namespace hcudp::testing
