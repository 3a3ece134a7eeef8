// What the DRA daemon offers and keeps across restarts (issue 28), from
// outside: the built hcu-dp-daemon, the fake API server and kubelet, on the
// probe-order node (card 2, 0000:e9:00.0, carries two pre-split vHCUs).
//   - repro 1: a card whose pre-split vHCUs are held is never offered whole,
//     and a whole-card claim on it is refused;
//   - repro 4: the slices follow Prepare and Recover: a held pre-split vHCU,
//     or a claim's vHCU whose mark was lost, is never offered after a
//     restart, and no second claim is prepared on it;
//   - repro 2: a card gone at start unprepares nothing: the claim's devices
//     are Unhealthy until kubelet unprepares it;
//   - repro 5 (DRA half): a vHCU conf that is a FIFO at start neither
//     unprepares the claim nor, once readable, offers its vHCU;
//   - repro 6: a claim of Hygon's DRA driver naming a vHCU id that one of
//     our live claims now holds is not adopted, and its Unprepare destroys
//     nothing of ours.
#include <sys/stat.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <cstdio>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "dra_daemon/dra_daemon_node.h"
#include "dra_prepare/hygon_fixture.h"
#include "dra_prepare/prepare_fixture.h"
#include "hcudp/options.h"

namespace hcudp::testing {
namespace {

constexpr char kPreSplitCard[] = "hcu-0000-e9-00-0";

bool Has(const std::vector<SliceDevice>& devices, const std::string& name) {
  for (const SliceDevice& d : devices) {
    if (d.name == name) return true;
  }
  return false;
}

std::vector<std::string> PreSplitDevices(const std::vector<SliceDevice>& pool) {
  std::vector<std::string> out;
  for (const SliceDevice& d : pool) {
    if (d.type == "vhcu") out.push_back(d.name);
  }
  return out;
}

// No slice device is named `name`, polled over `window`.
void RequireNeverOffered(DraDaemonNode& n, const std::string& name, milliseconds window,
                         const std::string& when) {
  const auto until = std::chrono::steady_clock::now() + window;
  while (std::chrono::steady_clock::now() < until) {
    BOOST_REQUIRE_MESSAGE(!Has(n.Devices(), name), name << " is offered " << when);
    std::this_thread::sleep_for(milliseconds(100));
  }
}

std::string VhcuDevice(const Vhcu& v) {
  std::string name = "hcu-" + v.card_bdf;
  for (char& c : name) {
    if (c == ':' || c == '.') c = '-';
  }
  return name + "-vdev" + std::to_string(v.id);
}

// Prepare did not hand the device out: an RPC error or a per-claim error.
void RequireRefused(DraDaemonNode& n, const AllocatedClaim& claim) {
  CallOutcome out = n.Prepare({claim});
  const bool refused = !out.ok() || !out.prepare.claims().at(claim.uid).error().empty();
  BOOST_TEST(refused, claim.name << " was prepared on " << claim.devices[0]);
  if (refused && out.ok()) {
    BOOST_TEST_MESSAGE("refused: " << out.prepare.claims().at(claim.uid).error());
  }
}

// The health stream reports `device` (of our pool) as `want` (1 healthy, 2 unhealthy).
bool HealthIs(DraDaemonNode& n, const std::string& device, int want, milliseconds timeout) {
  const std::string key = std::string(kDraNode) + "/" + device;
  return n.kubelet()
      .WaitFor(
          [&](const WatcherSnapshot& s) {
            auto h = s.health.find(kDraDriver);
            return h != s.health.end() && h->second.devices.count(key) &&
                   h->second.devices.at(key) == want;
          },
          timeout)
      .has_value();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(dra_daemon_offer)

// Repro 1: one claim on each pre-split vHCU of card 2, then any node change.
BOOST_AUTO_TEST_CASE(a_card_whose_pre_split_vhcus_are_held_is_never_offered_whole,
                     *boost::unit_test::timeout(60)) {
  DraDaemonNode n(kProbeOrder, {"--pulse=0"});
  n.Start();
  auto pool = n.RequireDevices([](const auto& d) { return d.size() == 9; }, seconds(5), "9");
  const std::vector<std::string> presplit = PreSplitDevices(pool);
  BOOST_REQUIRE_EQUAL(presplit.size(), 2u);
  BOOST_REQUIRE(!Has(pool, kPreSplitCard));
  AllocatedClaim a = n.CreateClaimAllocatedTo("on-vdev-a", presplit[0]);
  AllocatedClaim b = n.CreateClaimAllocatedTo("on-vdev-b", presplit[1]);
  n.MustPrepare(a);
  n.MustPrepare(b);

  n.h().SetCardHealth(1, "Unhealthy");  // a node change elsewhere
  n.RequireDevices(
      [](const auto& d) {
        for (const SliceDevice& x : d) {
          if (x.name == "hcu-0000-09-00-0") return x.tainted;
        }
        return false;
      },
      seconds(3), "the node change published");
  RequireNeverOffered(n, kPreSplitCard, seconds(3), "whole while its vHCUs are held");

  // A whole-card claim on it (a stale allocation) is not prepared over them.
  AllocatedClaim whole = n.CreateClaimAllocatedTo("whole", kPreSplitCard);
  RequireRefused(n, whole);
  n.MustUnprepare(a);
  n.MustUnprepare(b);
}

// Repro 4: a pre-split vHCU held by a claim leaves the pool after the
// Prepare, and stays out across a restart (no publish before Recover).
BOOST_AUTO_TEST_CASE(a_held_pre_split_vhcu_is_never_offered_after_prepare_or_restart,
                     *boost::unit_test::timeout(60)) {
  DraDaemonNode n(kProbeOrder);
  n.Start();
  auto pool = n.RequireDevices([](const auto& d) { return d.size() == 9; }, seconds(5), "9");
  const std::string held = PreSplitDevices(pool).at(0);
  AllocatedClaim claim = n.CreateClaimAllocatedTo("held", held);
  n.MustPrepare(claim);
  n.RequireDevices([&](const auto& d) { return !Has(d, held); }, seconds(2),
                   held + " out of the pool after its Prepare");

  n.StopDaemon();
  n.StartDaemon();
  n.RequireRegistrations(2);
  RequireNeverOffered(n, held, seconds(4), "after a restart");
  RequireNeverOffered(n, kPreSplitCard, milliseconds(200), "whole after a restart");
  RequireRefused(n, n.CreateClaimAllocatedTo("second", held));
  n.MustUnprepare(claim);
  n.RequireDevices([&](const auto& d) { return Has(d, held); }, seconds(2),
                   held + " offered again once unprepared");
}

// Repro 4: the mark of a claim's vHCU is lost while the daemon is down.
BOOST_AUTO_TEST_CASE(a_claims_vhcu_whose_mark_was_lost_is_never_offered_nor_prepared_again,
                     *boost::unit_test::timeout(60)) {
  DraDaemonNode n(kProbeOrder);
  const DynamicVhcuClaim prepared_claim = StartWithDynamicVhcuClaim(n, "small");
  const AllocatedClaim& claim = prepared_claim.claim;
  const Vhcu& vhcu = prepared_claim.vhcu;

  n.StopDaemon();
  const std::set<std::string> marks = n.Marks();
  BOOST_REQUIRE_EQUAL(marks.size(), 1u);
  BOOST_REQUIRE(std::remove(n.HostPath("/etc/vdev/dynamic/" + *marks.begin()).c_str()) == 0);
  n.StartDaemon();
  n.RequireRegistrations(2);
  RequireNeverOffered(n, VhcuDevice(vhcu), seconds(4), "with its mark lost");
  RequireRefused(n, n.CreateClaimAllocatedTo("second", VhcuDevice(vhcu)));
  BOOST_TEST(n.CheckpointEntries() == std::set<std::string>{claim.uid});
  n.MustUnprepare(claim);
}

// Repro 2: the claim's card is absent from the next start's discovery.
BOOST_AUTO_TEST_CASE(a_card_gone_at_start_unprepares_nothing_and_is_unhealthy,
                     *boost::unit_test::timeout(60)) {
  DraDaemonNode n(kProbeOrder);
  const DynamicVhcuClaim prepared_claim = StartWithDynamicVhcuClaim(n, "live");
  const AllocatedClaim& claim = prepared_claim.claim;
  const std::vector<Vhcu>& before = prepared_claim.before;
  const std::vector<drav1::Device>& devices = prepared_claim.devices;
  const Vhcu& vhcu = prepared_claim.vhcu;
  const PreparedState& prepared = prepared_claim.prepared;

  n.StopDaemon();
  const std::string node_yaml = ReadFile(n.h().node_path());
  // Another card answers at the index (a different BDF and serial): the
  // claim's card is gone, PCI directory and all.
  n.h().EditNode([&](YAML::Node& node) {
    for (YAML::Node card : node["cards"]) {
      if (card["index"].as<int>() != vhcu.card) continue;
      card["bdf"] = "0000:f9:00.0";
      card["serial"] = "T6T8290099999999";
    }
  });
  n.StartDaemon();
  n.RequireRegistrations(2);
  BOOST_TEST(HealthIs(n, devices[0].device_name(), 2, seconds(5)),
             devices[0].device_name() << " not UNHEALTHY with its card gone");
  RequireSameState(n, prepared, "card gone at start");
  BOOST_TEST(PathExists(n.HostPath("/etc/vdev/vdev" + std::to_string(vhcu.id) + ".conf")),
             "the live claim's vHCU was destroyed");
  BOOST_TEST(n.h().daemon().Log().find("unpreparing") == std::string::npos);

  // The card is back: the same devices, then kubelet unprepares.
  WriteFile(n.h().node_path() + ".tmp", node_yaml);
  BOOST_REQUIRE(std::rename((n.h().node_path() + ".tmp").c_str(), n.h().node_path().c_str()) == 0);
  BOOST_TEST(HealthIs(n, devices[0].device_name(), 1, seconds(5)), "not HEALTHY once back");
  auto again = n.MustPrepare(claim);
  BOOST_REQUIRE_EQUAL(again.size(), devices.size());
  BOOST_TEST(again[0].cdi_device_ids(0) == devices[0].cdi_device_ids(0));
  n.MustUnprepare(claim);
  BOOST_TEST(n.Vhcus().size() == before.size());
}

// Repro 5 (DRA half): the claim's vHCU conf is a FIFO at start.
BOOST_AUTO_TEST_CASE(a_fifo_vhcu_conf_at_start_keeps_the_claim_and_never_offers_the_vhcu,
                     *boost::unit_test::timeout(60)) {
  DraDaemonNode n(kProbeOrder);
  const DynamicVhcuClaim prepared_claim = StartWithDynamicVhcuClaim(n, "live");
  const AllocatedClaim& claim = prepared_claim.claim;
  const std::vector<drav1::Device>& devices = prepared_claim.devices;
  const Vhcu& vhcu = prepared_claim.vhcu;
  const PreparedState& prepared = prepared_claim.prepared;

  n.StopDaemon();
  const std::string conf = n.HostPath("/etc/vdev/vdev" + std::to_string(vhcu.id) + ".conf");
  const std::string text = ReadFile(conf);
  BOOST_REQUIRE(std::remove(conf.c_str()) == 0);
  BOOST_REQUIRE(::mkfifo(conf.c_str(), 0644) == 0);
  n.StartDaemon();
  n.RequireRegistrations(2);
  std::this_thread::sleep_for(seconds(1));
  RequireSameState(n, prepared, "FIFO conf at start");
  BOOST_TEST(n.h().daemon().Log().find("unpreparing") == std::string::npos);

  BOOST_REQUIRE(std::remove(conf.c_str()) == 0);
  WriteFile(conf, text);
  RequireNeverOffered(n, VhcuDevice(vhcu), seconds(5), "once its conf reads again");
  RequireSameState(n, prepared, "readable again");
  auto again = n.MustPrepare(claim);
  BOOST_REQUIRE_EQUAL(again.size(), devices.size());
  BOOST_TEST(again[0].cdi_device_ids(0) == devices[0].cdi_device_ids(0));
  n.MustUnprepare(claim);
}

// Repro 6: Hygon's driver left a claim whose vHCU is gone; the driver gives
// its id to the vHCU of one of our claims; the daemon restarts.
BOOST_AUTO_TEST_CASE(a_hygon_claim_naming_our_live_vhcu_is_never_adopted,
                     *boost::unit_test::timeout(90)) {
  constexpr char kSize[] = R"({"cores":"20","memory":"4Gi"})";
  DraDaemonNode n(kProbeOrder);
  HygonDriverNode hygon(n.h().host_root());
  n.Start();
  n.RequireDevices([](const auto& d) { return d.size() == 9; }, seconds(5), "9 devices");
  AllocatedClaim theirs = n.CreateAllocatedClaim("hv", ExactRequest("hcu", kSize));
  n.StopDaemon();
  std::vector<HygonDriverNode::Device> made;
  {
    auto backend = n.SimBackend();
    made = hygon.Prepare(*backend, theirs.json);
    BOOST_REQUIRE(made.size() == 1u && !made[0].whole_card);
    BOOST_REQUIRE(backend->DestroyVhcu(made[0].vhcu_id).ok());  // its pod is long gone
  }
  n.StartDaemon();
  n.RequireRegistrations(2);
  const std::vector<Vhcu> before = n.Vhcus();
  AllocatedClaim ours = n.CreateAllocatedClaim("ours", ExactRequest("hcu", kSize));
  auto devices = n.MustPrepare(ours);
  const Vhcu live = OnlyNewVhcu(before, n.Vhcus());
  BOOST_REQUIRE_MESSAGE(
      live.id == made[0].vhcu_id && live.card == made[0].card,
      "the driver did not reuse the id: vdev" << live.id << " on card " << live.card);

  n.StopDaemon();
  n.StartDaemon();
  n.RequireRegistrations(3);
  BOOST_TEST(n.CheckpointEntries() == std::set<std::string>{ours.uid},
             "Hygon's claim was adopted onto our vHCU");
  // kubelet unprepares Hygon's claim: nothing of ours goes.
  n.MustUnprepare(theirs);
  BOOST_TEST(PathExists(n.HostPath("/etc/vdev/vdev" + std::to_string(live.id) + ".conf")),
             "our live vHCU was destroyed");
  auto again = n.MustPrepare(ours);
  BOOST_REQUIRE_EQUAL(again.size(), 1u);
  BOOST_TEST(again[0].cdi_device_ids(0) == devices[0].cdi_device_ids(0));
  n.MustUnprepare(ours);
  BOOST_TEST(n.Vhcus().size() == before.size());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace hcudp::testing
