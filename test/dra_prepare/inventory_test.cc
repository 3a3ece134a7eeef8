// Prepare and Unprepare work from the inventory the daemon hands the
// preparer (WriteWholeCardSpec on every change) instead of discovering the
// node on each call, and stay right when the node changed.
#include <atomic>
#include <boost/test/unit_test.hpp>

#include "dra_prepare/prepare_fixture.h"

namespace hcudp::testing {
namespace {

// The sim backend, counting discoveries; a card whose BDF is `hidden` is
// gone from the node (as after a hot removal).
class CountingBackend final : public Backend {
 public:
  explicit CountingBackend(Backend* inner) : inner_(inner) {}
  StatusOr<NodeInventory> Discover() override {
    ++discovers;
    StatusOr<NodeInventory> inv = inner_->Discover();
    if (!inv.ok() || hidden.empty()) return inv;
    std::vector<Card> kept;
    for (const Card& c : inv->cards) {
      if (c.bdf != hidden) kept.push_back(c);
    }
    inv->cards = kept;
    return inv;
  }
  StatusOr<std::vector<CardHealthReport>> QueryHealth() override { return inner_->QueryHealth(); }
  StatusOr<Vhcu> CreateVhcu(int card, int cu, uint64_t mib) override {
    return inner_->CreateVhcu(card, cu, mib);
  }
  Status DestroyVhcu(int id) override { return inner_->DestroyVhcu(id); }
  const std::string& host_root() const override { return inner_->host_root(); }
  std::vector<std::string> WatchPaths() const override { return inner_->WatchPaths(); }
  std::atomic<int> discovers{0};
  std::string hidden;

 private:
  Backend* inner_;
};

// Index order is not PCI order, and card 0000:e9:00.0 carries two pre-split
// vHCUs.
constexpr char kNode[] = "k100ai-8-probe-order.yaml";

struct CountingNode {
  explicit CountingNode(const std::string& yaml) : node(yaml), counting(node.backend.get()) {
    dra::PreparerOptions o;
    o.host_root = node.Root();
    o.pool_name = "node-a";
    preparer = std::make_unique<dra::Preparer>(&counting, node.manager.get(), node.claims.Fetcher(),
                                               o, node.clock);
    auto r = preparer->Recover();
    BOOST_REQUIRE_MESSAGE(r.ok(), r.status().ToString());
    before = node.Inventory();
    counting.discovers = 0;
  }
  SimDraNode node;
  CountingBackend counting;
  std::unique_ptr<dra::Preparer> preparer;
  NodeInventory before;  // after Recover
};

BOOST_AUTO_TEST_CASE(whole_card_prepare_again_and_unprepare_do_not_discover_the_node) {
  CountingNode n(kNode);
  auto ref =
      n.node.AllocateAndStore(ClaimJson("uid-w", "cw", "[" + ExactRequest("hcu") + "]"), "pod-w");
  auto first = n.preparer->Prepare(ref);
  BOOST_REQUIRE_MESSAGE(first.ok() && first->error.empty(),
                        (first.ok() ? first->error : first.status().ToString()));
  auto again = n.preparer->Prepare(ref);  // kubelet's retry or restart
  BOOST_REQUIRE(again.ok());
  BOOST_TEST(again->error.empty(), again->error);
  BOOST_TEST(again->devices[0].cdi_device_ids == first->devices[0].cdi_device_ids);
  BOOST_TEST(n.node.Files("/etc/vdev/dynamic").size() == 1u);
  BOOST_REQUIRE(n.preparer->Unprepare(ref).ok());
  BOOST_TEST(n.counting.discovers.load() == 0);
  BOOST_TEST(n.node.Files("/etc/vdev/dynamic").empty());
  BOOST_TEST(n.node.Files("/var/lib/hcu-device-plugin/dra").empty());
}

BOOST_AUTO_TEST_CASE(dynamic_vhcu_spec_comes_from_the_created_vhcu_not_a_rediscovery) {
  CountingNode n(kNode);
  auto ref = n.node.AllocateAndStore(
      ClaimJson("uid-d", "cd", "[" + ExactRequest("hcu", R"({"cores":"30","memory":"8Gi"})") + "]"),
      "pod-d");
  auto answer = n.preparer->Prepare(ref);
  BOOST_REQUIRE_MESSAGE(answer.ok() && answer->error.empty(),
                        (answer.ok() ? answer->error : answer.status().ToString()));
  BOOST_TEST(n.counting.discovers.load() == 0);
  std::vector<Vhcu> made;
  for (const Vhcu& v : n.node.Inventory().vhcus) {
    if (n.before.LookupVhcu(v.id).certainty() == Certainty::kAbsent) made.push_back(v);
  }
  BOOST_REQUIRE_EQUAL(made.size(), 1u);
  BOOST_TEST(made[0].compute_units == 30);
  const std::string spec = n.node.Path("/var/run/cdi/dra.hygon.com-vhcu_uid-d.json");
  BOOST_TEST(CdiSchemaErrors(spec) == "");
  BOOST_TEST(answer->devices[0].cdi_device_ids[0] ==
             "dra.hygon.com/vhcu=uid-d-vdev" + std::to_string(made[0].id));
  BOOST_TEST(ReadFile(spec).find("uid-d-vdev" + std::to_string(made[0].id)) != std::string::npos);
  // The spec wiped (reboot): rebuilt on the next Prepare although the
  // vHCU is newer than the inventory the preparer was given.
  BOOST_REQUIRE(std::remove(spec.c_str()) == 0);
  auto again = n.preparer->Prepare(ref);
  BOOST_REQUIRE(again.ok());
  BOOST_TEST(again->error.empty(), again->error);
  BOOST_TEST(CdiSchemaErrors(spec) == "");
  // Unprepare checks the vHCU against the node before destroying it.
  n.counting.discovers = 0;
  BOOST_REQUIRE(n.preparer->Unprepare(ref).ok());
  BOOST_TEST(n.counting.discovers.load() == 1);
  BOOST_TEST(n.node.Inventory().vhcus.size() == n.before.vhcus.size());  // pre-split: kept
}

BOOST_AUTO_TEST_CASE(a_card_gone_from_the_node_is_a_clear_error) {
  CountingNode n(kNode);
  const Card gone = n.before.cards[3];
  const std::string claim =
      "{\"metadata\":{\"namespace\":\"ns1\",\"name\":\"cg\",\"uid\":\"uid-g\"},\"status\":{"
      "\"allocation\":{\"devices\":{\"results\":[{\"request\":\"r\",\"driver\":\"dra.hygon.com\","
      "\"pool\":\"node-a\",\"device\":\"" +
      dra::CardDeviceName(gone) + "\"}]}}}}";
  n.node.claims.Put(claim);
  // The daemon learnt of the removal: the whole-card spec loses the card
  // and a claim on it is refused, naming it, with nothing left behind.
  n.counting.hidden = gone.bdf;
  auto without = n.counting.Discover();
  BOOST_REQUIRE(without.ok());
  BOOST_REQUIRE(n.preparer->WriteWholeCardSpec(*without).ok());
  BOOST_TEST(ReadFile(n.node.Path("/var/run/cdi/dra.hygon.com-hcu.json"))
                 .find(dra::CardDeviceName(gone)) == std::string::npos);
  auto refused = n.preparer->Prepare({"ns1", "cg", "uid-g"});
  BOOST_REQUIRE(!refused.ok());
  BOOST_TEST(refused.status().message().find(dra::CardDeviceName(gone) + " is not on this node") !=
                 std::string::npos,
             refused.status().ToString());
  BOOST_TEST(n.node.Files("/etc/vdev/dynamic").empty());
  BOOST_TEST(n.node.Files("/var/lib/hcu-device-plugin/dra").empty());
  // The card is back, but the preparer has not been told yet: the name it
  // does not know is looked up on the node, and the claim is prepared.
  n.counting.hidden.clear();
  auto back = n.preparer->Prepare({"ns1", "cg", "uid-g"});
  BOOST_REQUIRE_MESSAGE(back.ok() && back->error.empty(),
                        (back.ok() ? back->error : back.status().ToString()));
  BOOST_TEST(back->devices[0].device_name == dra::CardDeviceName(gone));
  BOOST_REQUIRE(n.preparer->Unprepare({"ns1", "cg", "uid-g"}).ok());
}

}  // namespace
}  // namespace hcudp::testing
