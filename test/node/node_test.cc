// hcudp::Node on a sim node: the fail-closed look, the ledger's answers and
// the guarded vHCU acts.
#include "hcudp/node.h"

#include <boost/test/unit_test.hpp>
#include <string>

#include "hcudp/dra/checkpoint.h"
#include "testing/hostile_node.h"
#include "testing/testutil.h"

namespace hcudp {
namespace {

using testing::TempDir;

// demo/nodes/z100l-mixed.yaml: cards 0 and 1 whole, card 2 pre-split into
// vdev0-3, card 3 into vdev4-5.
struct SimNodeFixture {
  TempDir dir;
  std::unique_ptr<Node> node;

  explicit SimNodeFixture(Strategy strategy = Strategy::kMixed) {
    NodeOptions o;
    o.options.strategy = strategy;
    o.options.pulse_seconds = 0;
    o.options.backend = BackendKind::kSim;
    o.options.sim_node_path = testing::SourcePath("demo/nodes/z100l-mixed.yaml");
    o.options.host_root = dir.path();
    o.vhcu_lock_timeout = std::chrono::milliseconds(500);
    auto opened = Node::Open(std::move(o));
    BOOST_REQUIRE_MESSAGE(opened.ok(), opened.status().ToString());
    node = std::move(*opened);
  }

  Vhcu MustFindVhcu(int id) {
    auto inv = node->Look();
    BOOST_REQUIRE(inv.ok());
    Lookup<Vhcu> v = inv->LookupVhcu(id);
    BOOST_REQUIRE(v.certainty() == Certainty::kFound);
    return v.value();
  }

  void ClaimVhcu(const std::string& uid, const Vhcu& v) {
    dra::PreparedClaim c;
    c.uid = uid;
    c.namespace_name = "ns";
    c.name = "claim-" + uid;
    c.owner = uid;
    c.state = dra::ClaimState::kPrepared;
    dra::PreparedDevice d;
    d.request = "hcu";
    d.pool = "node";
    d.device = "vhcu";
    d.kind = dra::PreparedKind::kVhcu;
    d.card = v.card;
    d.card_bdf = v.card_bdf;
    d.vhcu_id = v.id;
    c.devices.push_back(d);
    BOOST_REQUIRE(dra::CheckpointStore(dir.path()).Write(c).ok());
  }
};

BOOST_FIXTURE_TEST_CASE(look_finds_the_cards_and_the_pre_split_vhcus, SimNodeFixture) {
  auto inv = node->Look();
  BOOST_REQUIRE(inv.ok());
  BOOST_TEST(inv->cards.size() == 4u);
  BOOST_TEST(inv->vhcus.size() == 6u);
  BOOST_TEST(inv->AllKnown());
  BOOST_TEST((inv->LookupMigMode().certainty() == Certainty::kFound));
  BOOST_TEST((inv->LookupMig("MIG-nope").certainty() == Certainty::kAbsent));
}

BOOST_FIXTURE_TEST_CASE(look_keeps_the_vhcu_of_a_torn_conf_it_read_before, SimNodeFixture) {
  MustFindVhcu(4);
  testing::TearVhcuConf(dir.path(), 4, testing::Tear::kEmpty);
  auto inv = node->Look();
  BOOST_REQUIRE(inv.ok());
  // Kept from the last good look, and known to be uncertain.
  BOOST_TEST((inv->LookupVhcu(4).certainty() == Certainty::kFound));
  BOOST_TEST(!inv->VhcuStateKnown(3));
}

BOOST_FIXTURE_TEST_CASE(the_offer_rule_hides_pre_split_cards_and_offers_whole_ones,
                        SimNodeFixture) {
  auto plan = node->Offers(OfferMode::kDevicePlugin);
  BOOST_REQUIRE(plan.ok());
  auto inv = node->Look();
  BOOST_REQUIRE(inv.ok());
  BOOST_TEST(plan->Free(DeviceRef::OfCard(inv->cards[0])));
  const DeviceOffer* split = plan->Find(DeviceRef::OfCard(inv->cards[2]));
  BOOST_REQUIRE(split != nullptr);
  BOOST_TEST(!split->free);
  BOOST_TEST(NotFreeName(split->reason) == "carries vHCUs");
}

BOOST_FIXTURE_TEST_CASE(holders_of_a_vhcu_a_dra_claim_holds_name_the_claim, SimNodeFixture) {
  Vhcu v = MustFindVhcu(4);
  ClaimVhcu("uid-1", v);
  Holders h = node->Holders(DeviceRef::OfVhcu(v));
  BOOST_TEST((h.certainty() == Certainty::kFound));
  BOOST_TEST(h.Describe().find("claim ns/claim-uid-1") != std::string::npos, h.Describe());
}

BOOST_FIXTURE_TEST_CASE(destroy_refuses_a_held_vhcu_unless_forced, SimNodeFixture) {
  Vhcu v = MustFindVhcu(4);
  ClaimVhcu("uid-1", v);
  auto refused = node->DestroyVhcu(4);
  BOOST_TEST((refused.status().code() == StatusCode::kFailedPrecondition));
  BOOST_TEST(refused.status().message().find("claim ns/claim-uid-1") != std::string::npos,
             refused.status().message());
  BOOST_TEST((node->Look()->LookupVhcu(4).certainty() == Certainty::kFound));
  auto forced = node->DestroyVhcu(4, /*force=*/true);
  BOOST_REQUIRE_MESSAGE(forced.ok(), forced.status().ToString());
  BOOST_TEST((node->Look()->LookupVhcu(4).certainty() == Certainty::kAbsent));
}

BOOST_FIXTURE_TEST_CASE(destroy_refuses_when_a_checkpoint_entry_does_not_decode, SimNodeFixture) {
  MustFindVhcu(4);
  testing::WriteFile(HostPath(dir.path(), "/var/lib/hcu-device-plugin/dra/uid-9.json"), "{");
  auto refused = node->DestroyVhcu(4);
  BOOST_TEST((refused.status().code() == StatusCode::kUnavailable));
  BOOST_TEST(refused.status().message().find("uid-9.json") != std::string::npos,
             refused.status().message());
  BOOST_TEST((node->Look()->LookupVhcu(4).certainty() == Certainty::kFound));
}

BOOST_FIXTURE_TEST_CASE(destroy_refuses_a_vhcu_whose_conf_is_torn, SimNodeFixture) {
  testing::TearVhcuConf(dir.path(), 4, testing::Tear::kHalf);
  auto refused = node->DestroyVhcu(4);
  BOOST_TEST((refused.status().code() == StatusCode::kUnavailable));
}

BOOST_FIXTURE_TEST_CASE(create_then_destroy_an_unheld_vhcu, SimNodeFixture) {
  auto made = node->CreateVhcu(0, 15, 8188);
  BOOST_REQUIRE_MESSAGE(made.ok(), made.status().ToString());
  BOOST_TEST(made->vhcu.card == 0);
  auto gone = node->DestroyVhcu(made->vhcu.id);
  BOOST_REQUIRE_MESSAGE(gone.ok(), gone.status().ToString());
  BOOST_TEST((node->Look()->LookupVhcu(made->vhcu.id).certainty() == Certainty::kAbsent));
}

BOOST_FIXTURE_TEST_CASE(create_refuses_a_card_a_claim_holds_whole, SimNodeFixture) {
  auto inv = node->Look();
  BOOST_REQUIRE(inv.ok());
  dra::PreparedClaim c;
  c.uid = "uid-2";
  c.namespace_name = "ns";
  c.name = "whole";
  c.owner = "uid-2";
  c.state = dra::ClaimState::kPrepared;
  dra::PreparedDevice d;
  d.request = "hcu";
  d.pool = "node";
  d.device = "hcu";
  d.kind = dra::PreparedKind::kCard;
  d.card = 0;
  d.card_bdf = inv->cards[0].bdf;
  c.devices.push_back(d);
  BOOST_REQUIRE(dra::CheckpointStore(dir.path()).Write(c).ok());
  auto refused = node->CreateVhcu(0, 15, 8188);
  BOOST_TEST((refused.status().code() == StatusCode::kFailedPrecondition));
}

// The device-plugin resources follow the one offer rule: a pre-split vHCU a
// DRA claim (another mode's owner, unknown to kubelet) holds stays listed
// for its holder but Unhealthy, so kubelet never hands it out again.
BOOST_AUTO_TEST_CASE(the_watcher_lists_a_vhcu_another_owner_holds_as_unhealthy) {
  SimNodeFixture f(Strategy::kVhcu);
  f.ClaimVhcu("uid-1", f.MustFindVhcu(4));
  BOOST_REQUIRE(f.node->StartWatching().ok());
  std::shared_ptr<const NodeSnapshot> now = f.node->Snapshot();
  const Resource* share = now->FindResource("hygon.com/hcu-share-30c-16g");
  BOOST_REQUIRE(share != nullptr);
  BOOST_REQUIRE(share->devices.size() == 2u);
  for (const ResourceDevice& d : share->devices) {
    BOOST_TEST_CONTEXT(d.id) {
      BOOST_TEST((d.health == (d.id == "vdev4" ? Health::kUnhealthy : Health::kHealthy)));
      BOOST_TEST(d.offered == (d.id != "vdev4"));
    }
  }
  BOOST_TEST(f.node->StopWatching());
}

}  // namespace
}  // namespace hcudp
