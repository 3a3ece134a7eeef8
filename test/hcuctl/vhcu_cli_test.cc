// hcuctl vhcu against the daemon's bookkeeping (issue 9.5): the host-wide
// vHCU lock (bounded wait, the holder named) and destroy refusing a vHCU that
// a pod holds unless --force. Drives the real hcuctl binary.
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <chrono>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "hcudp/backend.h"
#include "hcudp/options.h"
#include "hcudp/vhcu_lock.h"
#include "hcudp/vhcu_manager.h"
#include "testing/testutil.h"

namespace hcudp::testing {
namespace {

constexpr char kPodUid[] = "0f6e2c1a-7d3b-4a4e-9a1e-2f7c9b1d0e11";

// hcuctl on a private z100l-mixed node, killed after 20 s so that a
// regression (an endless wait) fails instead of hanging the suite.
RunResult OnMixedNode(const TempDir& root, std::vector<std::string> args) {
  std::vector<std::string> argv = {"/usr/bin/timeout",
                                   "20s",
                                   Hcuctl(),
                                   "--backend=sim",
                                   "--sim-node=" + SourcePath("demo/nodes/z100l-mixed.yaml"),
                                   "--host-root=" + root.Join("root"),
                                   "--pod-resources-socket=" + root.Join("none.sock")};
  argv.insert(argv.end(), args.begin(), args.end());
  return Run(argv);
}

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// The daemon's vHCU sweep on that node once no pod is live.
VhcuSweepResult SweepWithNoLivePods(const TempDir& root) {
  Options options;
  options.backend = BackendKind::kSim;
  options.sim_node_path = SourcePath("demo/nodes/z100l-mixed.yaml");
  options.host_root = root.Join("root");
  auto backend = OpenBackend(options);
  BOOST_REQUIRE_MESSAGE(backend.ok(), backend.status().ToString());
  VhcuManagerOptions mo;
  mo.host_root = root.Join("root");
  VhcuManager manager(backend->get(), mo);
  auto swept = manager.Reconcile(std::set<std::string>{});
  BOOST_REQUIRE_MESSAGE(swept.ok(), swept.status().ToString());
  return *swept;
}

BOOST_AUTO_TEST_SUITE(hcuctl_vhcu)

BOOST_AUTO_TEST_CASE(destroy_refuses_a_vhcu_a_pod_holds_names_the_pod_and_force_overrides) {
  TempDir root;
  RunResult created = OnMixedNode(
      root, {"vhcu", "create", "--card", "0", "--cu", "20", "--mem-mib", "4096", "-o", "json"});
  BOOST_REQUIRE_MESSAGE(created.exit_code == 0, created.err);
  BOOST_REQUIRE(Contains(created.out, "\"deviceId\": \"vdev6\""));
  // The HAMi mark file: pod kPodUid, container main, card 0, vdev 6.
  const std::string mark = root.Join("root/etc/vdev/dynamic/" + std::string(kPodUid) + "_main_0_6");
  WriteFile(mark, "2026-03-01 10:00:00");

  RunResult refused = OnMixedNode(root, {"vhcu", "destroy", "vdev6"});
  BOOST_TEST(refused.exit_code == 1, refused.err);
  BOOST_TEST(Contains(refused.err, kPodUid), refused.err);
  BOOST_TEST(Contains(refused.err, "--force"), refused.err);
  BOOST_TEST(PathExists(root.Join("root/etc/vdev/vdev6.conf")));

  RunResult forced = OnMixedNode(root, {"vhcu", "destroy", "--force", "vdev6"});
  BOOST_TEST(forced.exit_code == 0, forced.err);
  BOOST_TEST(!PathExists(root.Join("root/etc/vdev/vdev6.conf")));
}

// A power cut left vdev6.conf empty: discovery cannot read the vHCU (a
// gap), but the driver still has it and the pod still holds it. The mark
// file alone must still protect it.
BOOST_AUTO_TEST_CASE(destroy_refuses_a_held_vhcu_whose_conf_cannot_be_read) {
  TempDir root;
  RunResult created = OnMixedNode(
      root, {"vhcu", "create", "--card", "0", "--cu", "20", "--mem-mib", "4096", "-o", "json"});
  BOOST_REQUIRE_MESSAGE(created.exit_code == 0, created.err);
  BOOST_REQUIRE(Contains(created.out, "\"deviceId\": \"vdev6\""));
  WriteFile(root.Join("root/etc/vdev/dynamic/" + std::string(kPodUid) + "_main_0_6"),
            "2026-03-01 10:00:00");
  WriteFile(root.Join("root/etc/vdev/vdev6.conf"), "");

  RunResult refused = OnMixedNode(root, {"vhcu", "destroy", "vdev6"});
  BOOST_TEST(refused.exit_code == 1, refused.err);
  BOOST_TEST(Contains(refused.err, kPodUid), refused.err);
  BOOST_TEST(PathExists(root.Join("root/etc/vdev/vdev6.conf")));
}

// No mark, no pod, but the conf is torn: what the vHCU is and whose cannot
// be read, so it is not destroyed on a guess (issue 23); --force still does.
BOOST_AUTO_TEST_CASE(destroy_refuses_an_unheld_vhcu_whose_conf_cannot_be_read) {
  TempDir root;
  RunResult created = OnMixedNode(
      root, {"vhcu", "create", "--card", "0", "--cu", "20", "--mem-mib", "4096", "-o", "json"});
  BOOST_REQUIRE_MESSAGE(created.exit_code == 0, created.err);
  BOOST_REQUIRE(Contains(created.out, "\"deviceId\": \"vdev6\""));
  WriteFile(root.Join("root/etc/vdev/vdev6.conf"), "");

  RunResult refused = OnMixedNode(root, {"vhcu", "destroy", "vdev6"});
  BOOST_TEST(refused.exit_code != 0, refused.err);
  BOOST_TEST(Contains(refused.err, "conf torn"), refused.err);
  BOOST_TEST(Contains(refused.err, "vdev6.conf"), refused.err);
  BOOST_TEST(PathExists(root.Join("root/etc/vdev/vdev6.conf")));

  RunResult forced = OnMixedNode(root, {"vhcu", "destroy", "--force", "vdev6"});
  BOOST_TEST(forced.exit_code == 0, forced.err);
}

// The daemon was killed inside a create, after its intent and before it
// learnt the id; while it restarts, an administrator makes a vHCU of the same
// size on the same card. Recovery must not take the admin's for the crashed
// create's and destroy it.
BOOST_AUTO_TEST_CASE(recovery_never_destroys_a_vhcu_hcuctl_made_after_a_crashed_create) {
  TempDir root;
  RunResult listed = OnMixedNode(root, {"vhcu", "list"});  // renders the node: vdev0-5
  BOOST_REQUIRE_MESSAGE(listed.exit_code == 0, listed.err);
  WriteFile(root.Join("root/var/lib/hcu-device-plugin/intents/" + std::string(kPodUid) +
                      "_main_0_1-1.intent"),
            "pod_uid: " + std::string(kPodUid) +
                "\ncontainer: main\ncard: 0\ncard_bdf: 0000:0b:00.0\ncompute_units: 20\n"
                "memory_mib: 4096\nprior_vhcu_ids: 0,1,2,3,4,5\n");
  RunResult created = OnMixedNode(
      root, {"vhcu", "create", "--card", "0", "--cu", "20", "--mem-mib", "4096", "-o", "json"});
  BOOST_REQUIRE_MESSAGE(created.exit_code == 0, created.err);
  BOOST_REQUIRE(Contains(created.out, "\"deviceId\": \"vdev6\""));

  // The daemon's restart.
  Options options;
  options.backend = BackendKind::kSim;
  options.sim_node_path = SourcePath("demo/nodes/z100l-mixed.yaml");
  options.host_root = root.Join("root");
  auto backend = OpenBackend(options);
  BOOST_REQUIRE_MESSAGE(backend.ok(), backend.status().ToString());
  VhcuManagerOptions mo;
  mo.host_root = root.Join("root");
  VhcuManager manager(backend->get(), mo);
  auto recovered = manager.Recover([](const std::string&) { return false; });
  BOOST_REQUIRE_MESSAGE(recovered.ok(), recovered.status().ToString());
  BOOST_TEST(recovered->destroyed == 0);
  BOOST_TEST(PathExists(root.Join("root/etc/vdev/vdev6.conf")));
}

// An administrator force-destroys a pod's vHCU, then makes a new one on that
// card, which the driver numbers with the freed id. When the pod goes, the
// daemon must not reclaim the new vHCU through the old pod's mark.
BOOST_AUTO_TEST_CASE(a_forced_destroy_leaves_no_mark_that_could_claim_the_ids_next_vhcu) {
  TempDir root;
  RunResult created = OnMixedNode(
      root, {"vhcu", "create", "--card", "0", "--cu", "20", "--mem-mib", "4096", "-o", "json"});
  BOOST_REQUIRE_MESSAGE(created.exit_code == 0, created.err);
  BOOST_REQUIRE(Contains(created.out, "\"deviceId\": \"vdev6\""));
  WriteFile(root.Join("root/etc/vdev/dynamic/" + std::string(kPodUid) + "_main_0_6"),
            "2026-03-01 10:00:00");
  RunResult forced = OnMixedNode(root, {"vhcu", "destroy", "--force", "vdev6"});
  BOOST_REQUIRE_MESSAGE(forced.exit_code == 0, forced.err);
  RunResult again = OnMixedNode(
      root, {"vhcu", "create", "--card", "0", "--cu", "20", "--mem-mib", "4096", "-o", "json"});
  BOOST_REQUIRE_MESSAGE(again.exit_code == 0, again.err);
  BOOST_REQUIRE(Contains(again.out, "\"deviceId\": \"vdev6\""));

  // The daemon's sweep once the pod is gone.
  BOOST_TEST(SweepWithNoLivePods(root).destroyed == 0);
  BOOST_TEST(PathExists(root.Join("root/etc/vdev/vdev6.conf")));
}

// A pod's mark outlived its vHCU 6 (a vendor tool destroyed it, or a
// reboot). An administrator's new vHCU gets id 6; when that pod goes, the
// daemon must not reclaim the administrator's vHCU through the old mark.
BOOST_AUTO_TEST_CASE(create_leaves_no_older_mark_that_claims_the_new_vhcus_id) {
  TempDir root;
  RunResult listed = OnMixedNode(root, {"vhcu", "list"});  // renders the node: vdev0-5
  BOOST_REQUIRE_MESSAGE(listed.exit_code == 0, listed.err);
  WriteFile(root.Join("root/etc/vdev/dynamic/" + std::string(kPodUid) + "_main_0_6"),
            "2026-03-01 10:00:00");
  RunResult created = OnMixedNode(
      root, {"vhcu", "create", "--card", "0", "--cu", "20", "--mem-mib", "4096", "-o", "json"});
  BOOST_REQUIRE_MESSAGE(created.exit_code == 0, created.err);
  BOOST_REQUIRE(Contains(created.out, "\"deviceId\": \"vdev6\""));

  BOOST_TEST(SweepWithNoLivePods(root).destroyed == 0);
  BOOST_TEST(PathExists(root.Join("root/etc/vdev/vdev6.conf")));
}

BOOST_AUTO_TEST_CASE(create_waits_a_bounded_time_for_the_lock_and_names_its_holder) {
  TempDir root;
  {
    auto held = VhcuHostLock::Acquire(root.Join("root"), std::chrono::milliseconds(1000));
    BOOST_REQUIRE_MESSAGE(held.ok(), held.status().ToString());

    const auto start = std::chrono::steady_clock::now();
    RunResult r = OnMixedNode(root, {"vhcu", "create", "--card", "0", "--cu", "20", "--mem-mib",
                                     "4096", "--lock-wait=1"});
    const auto took = std::chrono::steady_clock::now() - start;
    BOOST_TEST(r.exit_code == 1, r.err);
    BOOST_TEST((took < std::chrono::seconds(10)));
    // The holder: this test process, by pid and command.
    BOOST_TEST(Contains(r.err, "pid " + std::to_string(::getpid())), r.err);
    BOOST_TEST(Contains(r.err, "test_hcuctl"), r.err);
    BOOST_TEST(Contains(r.err, "var/lib/hcu-device-plugin/vhcu.lock"), r.err);
    BOOST_TEST(!PathExists(root.Join("root/etc/vdev/vdev6.conf")));

  }  // the lock is released
  RunResult after = OnMixedNode(
      root, {"vhcu", "create", "--card", "0", "--cu", "20", "--mem-mib", "4096", "--lock-wait=1"});
  BOOST_TEST(after.exit_code == 0, after.err);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp::testing
