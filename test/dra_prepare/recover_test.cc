// Checkpoint round trip and Recover: reboot (CDI dir wiped), claims deleted
// while the daemon was down, the API down at start.
#include <atomic>
#include <boost/test/unit_test.hpp>
#include <memory>

#include "dra_prepare/prepare_fixture.h"
#include "hcudp/dra/checkpoint.h"

namespace hcudp::testing {
namespace {

BOOST_AUTO_TEST_CASE(checkpoint_round_trips_and_bad_files_are_named_not_fatal) {
  TempDir root;
  dra::CheckpointStore store(root.path());
  // Every field set: a sub-request, a share ID, a mark and a boot ID too.
  dra::PreparedClaim c = SamplePreparedClaim();
  c.boot_id = "b";
  dra::PreparedDevice& d = c.devices[0];
  d.request = "hcu/sub";
  d.share_id = "s1";
  d.mark = "pod-1_hcu_0_4";
  BOOST_REQUIRE(store.Write(c).ok());
  WriteFile(store.dir() + "/b2.json", "{\"version\":1,\"uid\":\"b2\"");
  WriteFile(store.dir() + "/c3.json",
            "{\"version\":1,\"uid\":\"zz\",\"namespace\":\"ns\",\"name\":\"n\",\"owner\":\"o\","
            "\"state\":\"prepared\",\"devices\":[]}");
  std::vector<std::string> bad;
  auto all = store.ReadAll(&bad);
  BOOST_REQUIRE(all.ok());
  BOOST_REQUIRE(all->size() == 1u);
  BOOST_TEST(dra::EncodePreparedClaim((*all)[0]) == dra::EncodePreparedClaim(c));
  BOOST_REQUIRE(bad.size() == 2u);
  BOOST_TEST(bad[0].find("b2.json") != std::string::npos);
  BOOST_TEST(bad[1].find("does not match") != std::string::npos);
  BOOST_TEST(!store.Write(dra::PreparedClaim{"../evil", "", "", "", "", {}, {}}).ok());
}

struct Prepared {
  dra::ClaimRef whole, vhcu;
};

Prepared PrepareTwo(SimDraNode& node) {
  BOOST_REQUIRE(node.preparer->Recover().ok());
  Prepared p;
  p.whole = node.AllocateAndStore(ClaimJson("uid-w", "w", "[" + ExactRequest("hcu") + "]"), "pw");
  p.vhcu = node.AllocateAndStore(
      ClaimJson("uid-v", "v", "[" + ExactRequest("hcu", R"({"cores":"20","memory":"4Gi"})") + "]"),
      "pv");
  for (const auto& ref : {p.whole, p.vhcu}) {
    auto a = node.preparer->Prepare(ref);
    BOOST_REQUIRE(a.ok() && a->error.empty());
  }
  return p;
}

BOOST_AUTO_TEST_CASE(reboot_recreates_the_cdi_specs_and_keeps_live_claims) {
  SimDraNode node("k100ai-8.yaml");
  Prepared p = PrepareTwo(node);
  const std::string claim_spec = node.Path("/var/run/cdi/dra.hygon.com-vhcu_uid-v.json");
  const std::string spec_text = ReadFile(claim_spec);
  BOOST_REQUIRE(Run({"/bin/rm", "-rf", node.Path("/var/run/cdi")}).exit_code == 0);
  WriteFile(node.Path("/proc/sys/kernel/random/boot_id"), "0c7e0000-0000-4000-8000-000000000002\n");
  node.Restart();
  auto r = node.preparer->Recover();
  BOOST_REQUIRE_MESSAGE(r.ok(), r.status().ToString());
  BOOST_TEST(r->specs_rewritten == 1);  // the vHCU claim; the card one uses the whole-card spec
  BOOST_TEST(r->kept == 2);
  BOOST_TEST(ReadFile(claim_spec) == spec_text);
  BOOST_TEST(PathExists(node.Path("/var/run/cdi/dra.hygon.com-hcu.json")));
  auto entry = dra::CheckpointStore(node.Root()).Read("uid-v");
  BOOST_REQUIRE(entry.ok());
  BOOST_TEST(entry->boot_id == "0c7e0000-0000-4000-8000-000000000002");
  BOOST_TEST(node.Inventory().vhcus.size() == 1u);
}

BOOST_AUTO_TEST_CASE(claims_deleted_while_down_are_unprepared_by_get_not_list) {
  SimDraNode node("k100ai-8.yaml");
  Prepared p = PrepareTwo(node);
  // An administrator's vHCU of the very same size on the same card: not ours.
  const Vhcu ours = node.Inventory().vhcus.at(0);
  auto admin = node.backend->CreateVhcu(ours.card, ours.compute_units, ours.memory_mib);
  BOOST_REQUIRE(admin.ok());
  node.claims.Delete("uid-v");
  node.claims.Delete("uid-w");
  node.Restart();
  node.claims.gets = 0;
  auto r = node.preparer->Recover();
  BOOST_REQUIRE(r.ok());
  BOOST_TEST(r->unprepared == 2);
  BOOST_TEST(node.claims.gets.load() == 2);  // one GET per recorded claim
  NodeInventory inv = node.Inventory();
  BOOST_REQUIRE(inv.vhcus.size() == 1u);
  BOOST_TEST(inv.vhcus[0].id == admin->id);
  BOOST_TEST(node.Files("/etc/vdev/dynamic").empty());
  BOOST_TEST(node.Files("/var/lib/hcu-device-plugin/dra").empty());
}

BOOST_AUTO_TEST_CASE(api_down_at_start_keeps_claims_and_tick_checks_them_later) {
  SimDraNode node("k100ai-8.yaml");
  Prepared p = PrepareTwo(node);
  node.claims.Delete("uid-v");
  BOOST_REQUIRE(Run({"/bin/rm", "-rf", node.Path("/var/run/cdi")}).exit_code == 0);
  node.Restart();
  node.claims.down = true;
  node.claims.gets = 0;
  auto r = node.preparer->Recover();
  BOOST_REQUIRE(r.ok());
  BOOST_TEST(r->pending == 2);
  BOOST_TEST(node.claims.gets.load() == 1);  // the first failure stops the rest
  BOOST_TEST(PathExists(node.Path("/var/run/cdi/dra.hygon.com-vhcu_uid-v.json")));  // specs first
  BOOST_TEST(node.Inventory().vhcus.size() == 1u);
  // Not due yet: no GET.
  node.claims.down = false;
  node.claims.gets = 0;
  BOOST_TEST(node.preparer->Tick().unprepared == 0);
  BOOST_TEST(node.claims.gets.load() == 0);
  node.clock.Advance(std::chrono::seconds(6));
  auto t = node.preparer->Tick();
  BOOST_TEST(t.unprepared == 1);
  BOOST_TEST(t.kept == 1);
  BOOST_TEST(node.Inventory().vhcus.empty());
  BOOST_TEST(node.preparer->Prepared().size() == 1u);
  node.clock.Advance(std::chrono::seconds(600));
  node.claims.gets = 0;
  node.preparer->Tick();
  BOOST_TEST(node.claims.gets.load() == 0);  // nothing pending any more
}

// An API server (or a proxy in front of it) that answers the GET with 200 and
// something that is not a ResourceClaim says nothing about the claim: it is
// neither unprepared nor taken as checked, but asked again later, and a claim
// deleted meanwhile is then unprepared (its vHCU freed).
BOOST_AUTO_TEST_CASE(a_claim_answered_with_garbage_at_start_is_checked_again_later) {
  SimDraNode node("k100ai-8.yaml");
  Prepared p = PrepareTwo(node);
  node.claims.Delete("uid-v");
  node.Restart();
  auto garbage = std::make_shared<std::atomic<bool>>(true);
  dra::ClaimFetcher real = node.claims.Fetcher();
  node.UseFetcher(
      [garbage, real](const dra::ClaimRef& ref,
                      std::optional<Clock::TimePoint> deadline) -> StatusOr<std::string> {
        if (*garbage) return std::string("<html><body>502 Bad Gateway</body></html>");
        return real(ref, deadline);
      });
  auto r = node.preparer->Recover();
  BOOST_REQUIRE(r.ok());
  BOOST_TEST(r->kept == 0);
  BOOST_TEST(r->pending == 2);
  BOOST_TEST(node.Inventory().vhcus.size() == 1u);  // nothing unprepared on garbage
  *garbage = false;
  node.clock.Advance(std::chrono::seconds(6));
  auto t = node.preparer->Tick();
  BOOST_TEST(t.unprepared == 1);
  BOOST_TEST(t.kept == 1);
  BOOST_TEST(node.Inventory().vhcus.empty());
  BOOST_TEST(node.preparer->Prepared().size() == 1u);
}

}  // namespace
}  // namespace hcudp::testing
