// Unknown is not absent (issue 23): a prepared claim whose devices the node
// cannot read at start — a torn vHCU conf, /etc/vdev unreadable, a card whose
// queries fail — is kept as it is (entry, mark, CDI spec, vHCU), re-checked
// on every Tick, and its vHCU is never offered as a free device.
#include <boost/test/unit_test.hpp>
#include <cstdio>
#include <string>
#include <vector>

#include "dra_prepare/prepare_fixture.h"
#include "hcudp/dra/checkpoint.h"
#include "hcudp/dra/slices.h"

namespace hcudp::testing {
namespace {

struct LiveClaim {
  dra::ClaimRef ref;
  dra::PreparedDevice device;  // its one dynamic vHCU
  std::vector<std::string> cdi_ids;
};

// One claim with a 30-CU/8 GiB dynamic vHCU, prepared.
LiveClaim PrepareVhcuClaim(SimDraNode& node) {
  BOOST_REQUIRE(node.preparer->Recover().ok());
  LiveClaim c;
  c.ref = node.AllocateAndStore(
      ClaimJson("uid-v", "v", "[" + ExactRequest("hcu", R"({"cores":"30","memory":"8Gi"})") + "]"),
      "pv");
  auto a = node.preparer->Prepare(c.ref);
  BOOST_REQUIRE(a.ok() && a->error.empty());
  c.cdi_ids = a->devices.at(0).cdi_device_ids;
  auto entry = dra::CheckpointStore(node.Root()).Read("uid-v");
  BOOST_REQUIRE(entry.ok());
  c.device = entry->devices.at(0);
  BOOST_REQUIRE(c.device.kind == dra::PreparedKind::kDynamicVhcu);
  BOOST_REQUIRE(c.device.vhcu_id >= 0);
  BOOST_REQUIRE(!c.device.mark.empty());
  return c;
}

std::string ConfPath(SimDraNode& node, int id) {
  return node.Path("/etc/vdev/vdev" + std::to_string(id) + ".conf");
}

// The claim is prepared as it was: entry, mark, CDI spec, vHCU.
void RequireStillPrepared(SimDraNode& node, const LiveClaim& c, const std::string& when) {
  auto entry = dra::CheckpointStore(node.Root()).Read("uid-v");
  BOOST_REQUIRE_MESSAGE(entry.ok(), when << ": the checkpoint entry is gone");
  BOOST_TEST((entry->state == dra::ClaimState::kPrepared), when);
  BOOST_TEST(entry->devices.at(0).vhcu_id == c.device.vhcu_id, when);
  BOOST_TEST(PathExists(node.Path("/etc/vdev/dynamic/" + c.device.mark)), when << ": mark");
  BOOST_TEST(PathExists(node.Path("/var/run/cdi/dra.hygon.com-vhcu_uid-v.json")),
             when << ": CDI spec");
  BOOST_TEST(PathExists(ConfPath(node, c.device.vhcu_id)), when << ": vHCU destroyed");
  BOOST_TEST(node.preparer->Prepared().size() == 1u, when);
}

// The vHCU is not among the devices the slices would offer.
void RequireNotOffered(SimDraNode& node, const LiveClaim& c, const std::string& when) {
  NodeInventory offered = dra::OfferSlices(node.Inventory(), node.Root(), "").inventory;
  for (const Vhcu& v : offered.vhcus) {
    BOOST_TEST(v.id != c.device.vhcu_id, when << ": vdev" << v.id << " offered as free");
  }
}

// Reproduction 1 of issue 23: the conf left empty by a power cut during a
// rewrite, across a restart, then readable again.
BOOST_AUTO_TEST_CASE(a_torn_vhcu_conf_across_a_restart_keeps_the_claim) {
  for (Tear how : {Tear::kEmpty, Tear::kHalf}) {
    SimDraNode node("k100ai-8.yaml");
    LiveClaim c = PrepareVhcuClaim(node);
    const std::string text = TearVhcuConf(node.Root(), c.device.vhcu_id, how);
    node.Restart();
    auto r = node.preparer->Recover();
    BOOST_REQUIRE_MESSAGE(r.ok(), r.status().ToString());
    BOOST_TEST(r->unprepared == 0);
    BOOST_TEST(r->unknown == 1);
    RequireStillPrepared(node, c, "torn at start");
    // Still torn: every tick looks again and keeps it.
    node.clock.Advance(std::chrono::seconds(1));
    BOOST_TEST(node.preparer->Tick().unknown == 1);
    RequireStillPrepared(node, c, "still torn");
    // The rewrite finishes.
    WriteFile(ConfPath(node, c.device.vhcu_id), text);
    // What the node watcher publishes (DraAgent::OnNodeChanged): a re-check
    // reads it, it never discovers the node itself (issue 28).
    BOOST_REQUIRE(node.preparer->WriteWholeCardSpec(node.Inventory()).ok());
    auto t = node.preparer->Tick();
    BOOST_TEST(t.unknown == 0);
    BOOST_TEST(t.unprepared == 0);
    RequireStillPrepared(node, c, "readable again");
    RequireNotOffered(node, c, "readable again");
    // A re-Prepare answers the same devices: the claim was not forgotten.
    auto again = node.preparer->Prepare(c.ref);
    BOOST_REQUIRE(again.ok() && again->error.empty());
    BOOST_TEST(again->devices.at(0).cdi_device_ids == c.cdi_ids, boost::test_tools::per_element());
    BOOST_TEST(again->devices.at(0).device_name == c.device.device);
  }
}

// Even with its mark lost, a vHCU a prepared claim records is not free.
BOOST_AUTO_TEST_CASE(a_vhcu_a_claim_records_is_not_offered_even_without_its_mark) {
  SimDraNode node("k100ai-8.yaml");
  LiveClaim c = PrepareVhcuClaim(node);
  BOOST_REQUIRE(std::remove(node.Path("/etc/vdev/dynamic/" + c.device.mark).c_str()) == 0);
  dra::SliceOffer offer = dra::OfferSlices(node.Inventory(), node.Root(), "");
  BOOST_TEST(offer.inventory.vhcus.empty());
  // The claim's own vHCU, mark or not: consumed capacity, its card shared.
  BOOST_TEST(offer.not_whole.empty());
}

BOOST_AUTO_TEST_CASE(etc_vdev_unreadable_at_start_keeps_the_claim) {
  SimDraNode node("k100ai-8.yaml");
  LiveClaim c = PrepareVhcuClaim(node);
  node.Restart();
  // /etc/vdev is not a directory while the daemon starts.
  BOOST_REQUIRE(std::rename(node.Path("/etc/vdev").c_str(), node.Path("/etc/vdev.away").c_str()) ==
                0);
  WriteFile(node.Path("/etc/vdev"), "not a directory\n");
  auto r = node.preparer->Recover();
  BOOST_REQUIRE_MESSAGE(r.ok(), r.status().ToString());
  BOOST_TEST(r->unprepared == 0);
  BOOST_TEST(r->unknown == 1);
  BOOST_REQUIRE(std::remove(node.Path("/etc/vdev").c_str()) == 0);
  BOOST_REQUIRE(std::rename(node.Path("/etc/vdev.away").c_str(), node.Path("/etc/vdev").c_str()) ==
                0);
  // What the node watcher publishes (DraAgent::OnNodeChanged): a re-check
  // reads it, it never discovers the node itself (issue 28).
  BOOST_REQUIRE(node.preparer->WriteWholeCardSpec(node.Inventory()).ok());
  auto t = node.preparer->Tick();
  BOOST_TEST(t.unknown == 0);
  BOOST_TEST(t.unprepared == 0);
  RequireStillPrepared(node, c, "readable again");
}

// Reproduction 2 of issue 23: one discovery at start cannot read the card.
BOOST_AUTO_TEST_CASE(a_card_whose_query_fails_at_start_destroys_nothing) {
  SimDraNode node("k100ai-8.yaml");
  LiveClaim c = PrepareVhcuClaim(node);
  node.faults->Fail(c.device.card);
  node.Restart();
  auto r = node.preparer->Recover();
  BOOST_REQUIRE_MESSAGE(r.ok(), r.status().ToString());
  BOOST_TEST(r->unprepared == 0);
  BOOST_TEST(r->unknown == 1);
  RequireStillPrepared(node, c, "card unreadable at start");
  node.clock.Advance(std::chrono::seconds(1));
  BOOST_TEST(node.preparer->Tick().unknown == 1);
  node.faults->Heal(c.device.card);
  // What the node watcher publishes (DraAgent::OnNodeChanged): a re-check
  // reads it, it never discovers the node itself (issue 28).
  BOOST_REQUIRE(node.preparer->WriteWholeCardSpec(node.Inventory()).ok());
  auto t = node.preparer->Tick();
  BOOST_TEST(t.unknown == 0);
  BOOST_TEST(t.unprepared == 0);
  RequireStillPrepared(node, c, "card readable again");
}

// A whole card claimed by a running pod keeps its CDI entry while the card
// cannot be read at start (its container's restart must resolve it).
BOOST_AUTO_TEST_CASE(a_claimed_card_whose_query_fails_keeps_its_cdi_entry) {
  SimDraNode node("k100ai-8.yaml");
  BOOST_REQUIRE(node.preparer->Recover().ok());
  dra::ClaimRef ref =
      node.AllocateAndStore(ClaimJson("uid-w", "w", "[" + ExactRequest("hcu") + "]"), "pw");
  auto a = node.preparer->Prepare(ref);
  BOOST_REQUIRE(a.ok() && a->error.empty());
  const std::string device = a->devices.at(0).device_name;
  auto entry = dra::CheckpointStore(node.Root()).Read("uid-w");
  BOOST_REQUIRE(entry.ok());
  const std::string spec = node.Path("/var/run/cdi/dra.hygon.com-hcu.json");
  BOOST_REQUIRE(ReadFile(spec).find("\"" + device + "\"") != std::string::npos);
  node.faults->Fail(entry->devices.at(0).card);
  node.Restart();
  auto r = node.preparer->Recover();
  BOOST_REQUIRE_MESSAGE(r.ok(), r.status().ToString());
  BOOST_TEST(r->unprepared == 0);
  BOOST_TEST(r->unknown == 1);
  BOOST_TEST(ReadFile(spec).find("\"" + device + "\"") != std::string::npos,
             device << " left the whole-card spec");
  BOOST_TEST(PathExists(node.Path("/etc/vdev/dynamic/" + entry->devices.at(0).mark)));
}

// At runtime: a claim deleted while its vHCU cannot be read is not released
// on a guess; kubelet's retry releases it once it reads.
BOOST_AUTO_TEST_CASE(unprepare_of_an_unreadable_vhcu_waits_for_it) {
  SimDraNode node("k100ai-8.yaml");
  LiveClaim c = PrepareVhcuClaim(node);
  const std::string text = TearVhcuConf(node.Root(), c.device.vhcu_id, Tear::kEmpty);
  Status st = node.preparer->Unprepare(c.ref);
  BOOST_TEST((st.code() == StatusCode::kUnavailable), st.ToString());
  BOOST_TEST(st.message().find(ConfPath(node, c.device.vhcu_id)) != std::string::npos,
             st.message());
  RequireStillPrepared(node, c, "unprepare on a torn conf");
  WriteFile(ConfPath(node, c.device.vhcu_id), text);
  st = node.preparer->Unprepare(c.ref);
  BOOST_REQUIRE_MESSAGE(st.ok(), st.ToString());
  BOOST_TEST(!PathExists(ConfPath(node, c.device.vhcu_id)));
  BOOST_TEST(!PathExists(node.Path("/etc/vdev/dynamic/" + c.device.mark)));
}

}  // namespace
}  // namespace hcudp::testing
