// hcu-dp-daemon --strategy=dra with node state it cannot read (issue 23,
// reproductions 1 and 2), from outside: the built daemon, the fake API
// server and kubelet. Unknown is not absent: the live claim stays prepared
// (same devices, same vHCU, mark and CDI spec in place), its vHCU is never
// published as free, and a card missing from one discovery destroys nothing.
#include <boost/test/unit_test.hpp>
#include <cstdlib>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "dra_daemon/dra_daemon_node.h"
#include "dra_prepare/prepare_fixture.h"
#include "testing/hostile_node.h"

namespace hcudp::testing {
namespace {


// No slice device names vHCU `id`, over `window` (the publisher's changes
// after the node changed included).
void RequireNeverPublished(DraDaemonNode& n, int id, milliseconds window) {
  const std::string suffix = "-vdev" + std::to_string(id);
  const auto until = std::chrono::steady_clock::now() + window;
  while (std::chrono::steady_clock::now() < until) {
    for (const SliceDevice& d : n.Devices()) {
      BOOST_REQUIRE_MESSAGE(
          d.name.size() < suffix.size() ||
              d.name.compare(d.name.size() - suffix.size(), suffix.size(), suffix) != 0,
          d.name << " is published as a free device");
    }
    std::this_thread::sleep_for(milliseconds(200));
  }
}

// The daemons of a test on --backend=host, the stand-in vendor libraries
// serving the node (for their query_fails knob).
struct OnStandInVendorLibs {
  OnStandInVendorLibs() { setenv("HCUDP_TEST_BACKEND", "host", 1); }
  ~OnStandInVendorLibs() { unsetenv("HCUDP_TEST_BACKEND"); }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(dra_daemon_unknown)

// Reproduction 1: the claim's vHCU conf is left empty by a power cut during
// a rewrite while the daemon is down; it starts, then the conf reads again.
BOOST_AUTO_TEST_CASE(a_torn_vhcu_conf_across_a_restart_keeps_the_claim,
                     *boost::unit_test::timeout(60)) {
  DraDaemonNode n(kProbeOrder);
  const DynamicVhcuClaim prepared_claim = StartWithDynamicVhcuClaim(n, "first");
  const AllocatedClaim& first = prepared_claim.claim;
  const std::vector<Vhcu>& before = prepared_claim.before;
  const std::vector<drav1::Device>& devices = prepared_claim.devices;
  const Vhcu& vhcu = prepared_claim.vhcu;
  const PreparedState& prepared = prepared_claim.prepared;

  n.StopDaemon();
  const std::string text = TearVhcuConf(n.h().host_root(), vhcu.id, Tear::kEmpty);
  n.StartDaemon();
  n.RequireRegistrations(2);
  RequireSameState(n, prepared, "torn at start");
  BOOST_TEST(n.h().daemon().Log().find("is gone; unpreparing") == std::string::npos);

  WriteFile(n.HostPath("/etc/vdev/vdev" + std::to_string(vhcu.id) + ".conf"), text);
  RequireNeverPublished(n, vhcu.id, seconds(5));  // the daemon ticks every 2 s
  RequireSameState(n, prepared, "readable again");

  // A second claim gets a vHCU of its own, not the first claim's.
  AllocatedClaim second = n.CreateAllocatedClaim("second", ExactRequest("hcu", kThirtyCu));
  n.MustPrepare(second);
  std::vector<Vhcu> now = n.Vhcus();
  BOOST_TEST(now.size() == before.size() + 2);
  // The first claim was not forgotten: a re-Prepare answers its devices.
  auto again = n.MustPrepare(first);
  BOOST_REQUIRE_EQUAL(again.size(), devices.size());
  BOOST_TEST(again[0].cdi_device_ids(0) == devices[0].cdi_device_ids(0));
  n.MustUnprepare(second);
  n.MustUnprepare(first);
}

// Reproduction 2: one vendor query about the claim's card fails in the
// discovery at start.
BOOST_AUTO_TEST_CASE(a_card_whose_query_fails_at_start_destroys_nothing,
                     *boost::unit_test::timeout(60)) {
  OnStandInVendorLibs host;
  TempDir control_dir;
  const std::string control = control_dir.Join("stub.control");
  WriteFile(control, "");
  DraDaemonNode n(kProbeOrder, {}, {"HCUDP_STUB_CONTROL=" + control});
  const DynamicVhcuClaim prepared_claim = StartWithDynamicVhcuClaim(n, "live");
  const AllocatedClaim& claim = prepared_claim.claim;
  const std::vector<drav1::Device>& devices = prepared_claim.devices;
  const Vhcu& vhcu = prepared_claim.vhcu;
  const PreparedState& prepared = prepared_claim.prepared;

  n.StopDaemon();
  WriteFile(control, "query_fails=" + std::to_string(vhcu.card) + "\n");
  n.StartDaemon();
  n.RequireRegistrations(2);
  RequireSameState(n, prepared, "card unreadable at start");
  BOOST_TEST(PathExists(n.HostPath("/etc/vdev/vdev" + std::to_string(vhcu.id) + ".conf")),
             "the live claim's vHCU was destroyed");
  BOOST_TEST(n.h().daemon().Log().find("is gone; unpreparing") == std::string::npos);
  // At runtime too, then readable again: still nothing destroyed.
  WriteFile(control, "");
  RequireNeverPublished(n, vhcu.id, seconds(3));
  WriteFile(control, "query_fails=" + std::to_string(vhcu.card) + "\n");
  RequireNeverPublished(n, vhcu.id, seconds(3));
  WriteFile(control, "");
  RequireSameState(n, prepared, "after the card read again");
  auto again = n.MustPrepare(claim);
  BOOST_REQUIRE_EQUAL(again.size(), devices.size());
  BOOST_TEST(again[0].cdi_device_ids(0) == devices[0].cdi_device_ids(0));
  n.MustUnprepare(claim);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace hcudp::testing
