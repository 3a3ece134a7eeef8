// Node changes reach ListAndWatch as events, not on a pulse: every daemon
// here runs with --pulse=0, so a dead event path fails the test instead of
// being hidden by a periodic re-read (issue 9 item 1, DESIGN.md §8).
//   - a vHCU created or destroyed by hcuctl (a vdev<N>.conf in /etc/vdev);
//   - a MIG CI conf removed and written back;
//   - /etc/vdev appearing after the daemon started, and changes inside it
//     afterwards (the watch is re-armed on the new directory).
#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <ostream>
#include <thread>

#include "integration/daemon_harness.h"
#include "testing/testutil.h"

namespace hcudp::testing {
namespace {

namespace fs = std::filesystem;
using SteadyClock = std::chrono::steady_clock;

// The time a node change may take to show in ListAndWatch (issue 9).
constexpr milliseconds kEventDeadline{1000};

const char kCard0[] = "0000:0b:00.0";  // z100l-mixed: whole cards 0 and 1
const char kCard1[] = "0000:0e:00.0";

std::string HcuctlBinary() { return BinaryPath("hcuctl/hcuctl"); }

RunResult Hcuctl(DaemonHarness& h, const std::vector<std::string>& args) {
  BOOST_REQUIRE_MESSAGE(PathExists(HcuctlBinary()), "no hcuctl at " << HcuctlBinary());
  std::vector<std::string> argv = {HcuctlBinary(), "--backend=sim", "--sim-node=" + h.node_path(),
                                   "--host-root=" + h.host_root()};
  argv.insert(argv.end(), args.begin(), args.end());
  return Run(argv);
}

// The ids of every vdev<N>.conf under the host-root.
std::set<int> VdevIds(DaemonHarness& h) {
  std::set<int> ids;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(h.host_root() + "/etc/vdev", ec)) {
    std::string name = e.path().filename().string();
    if (name.rfind("vdev", 0) == 0 && name.size() > 9 &&
        name.compare(name.size() - 5, 5, ".conf") == 0) {
      ids.insert(std::stoi(name.substr(4, name.size() - 9)));
    }
  }
  return ids;
}

// Creates a vHCU on card 0 with hcuctl and returns its id.
int CreateOnCard0(DaemonHarness& h, int cus, int mem_mib) {
  std::set<int> before = VdevIds(h);
  RunResult r = Hcuctl(h, {"vhcu", "create", "--card=0", "--cu=" + std::to_string(cus),
                           "--mem-mib=" + std::to_string(mem_mib)});
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, "hcuctl vhcu create: " << r.out << r.err);
  std::set<int> after = VdevIds(h);
  for (int id : after) {
    if (!before.count(id)) return id;
  }
  BOOST_FAIL("hcuctl vhcu create left no new vdev<N>.conf");
  return -1;
}

// An event is followed by a confirming re-read ~1 s later (NodeWatcher::
// kConfirmDelay). A change made inside that window would be seen by the
// re-read even without a watch, so tests of a re-armed watch change the node
// only after it.
void PastTheConfirmingReread() { std::this_thread::sleep_for(milliseconds(1500)); }

BOOST_AUTO_TEST_SUITE(node_events)

// The reproduction of issue 9 item 1.
BOOST_AUTO_TEST_CASE(a_vhcu_created_and_destroyed_with_hcuctl_shows_within_a_second) {
  DaemonHarness h("demo/nodes/z100l-mixed.yaml", {"--pulse=0"});
  h.Start();
  h.RequireIds("hygon.com/hcu", {kCard0, kCard1});

  // The deadline runs from hcuctl's exit (the conf is written by then); the
  // figure printed runs from its start, hcuctl's own run included.
  SteadyClock::time_point start = SteadyClock::now();
  int id = CreateOnCard0(h, 6, 1024);
  h.RequireIds("hygon.com/hcu", {kCard1}, kEventDeadline);
  BOOST_TEST_MESSAGE("hcuctl vhcu create started -> card 0 withdrawn: " << MillisSince(start)
                                                                        << " ms");
  ResourceSnapshot share = h.RequireRegistered("hygon.com/hcu-share-6c-1g");
  BOOST_TEST(Ids(share.devices) == std::set<std::string>{"vdev" + std::to_string(id)},
             boost::test_tools::per_element());
  // The split card cannot be allocated whole any more.
  v1beta1::AllocateResponse response;
  grpc::Status s = h.kubelet().Allocate("hygon.com/hcu", {{kCard0}}, &response);
  BOOST_TEST(!s.ok(), "Allocate of the split card 0 as a whole card succeeded");

  start = SteadyClock::now();
  RunResult r = Hcuctl(h, {"vhcu", "destroy", std::to_string(id)});
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, "hcuctl vhcu destroy: " << r.out << r.err);
  h.RequireIds("hygon.com/hcu", {kCard0, kCard1}, kEventDeadline);
  h.RequireIds("hygon.com/hcu-share-6c-1g", {}, kEventDeadline);
  BOOST_TEST_MESSAGE("hcuctl vhcu destroy started -> card 0 offered again: " << MillisSince(start)
                                                                             << " ms");
}

BOOST_AUTO_TEST_CASE(a_mig_conf_removed_and_written_back_shows_within_a_second) {
  DaemonHarness h("demo/nodes/bw-mig.yaml", {"--strategy=mig", "--pulse=0"});
  h.Start();
  const std::string resource = "hygon.com/hcu-mig-8g-63gb";
  const std::string id = MigIds("8g.63gb").at(0);
  h.RequireIds(resource, {id});
  // The CI conf of that instance (its mig_uuid is in the file).
  std::string conf;
  for (const auto& e : fs::directory_iterator(h.host_root() + "/etc/dmi_mig_config/ci")) {
    if (ReadFile(e.path().string()).find(id.substr(4)) != std::string::npos) {
      conf = e.path().string();
    }
  }
  BOOST_REQUIRE_MESSAGE(!conf.empty(), "no CI conf holds " << id);
  const std::string text = ReadFile(conf);

  fs::remove(conf);
  h.RequireIds(resource, {}, kEventDeadline);
  WriteFile(conf, text);
  h.RequireIds(resource, {id}, kEventDeadline);
}

// /etc/vdev is missing when the daemon starts: its appearance is seen, and
// so is a vHCU created inside it afterwards (the new directory is watched).
BOOST_AUTO_TEST_CASE(a_vdev_directory_that_appears_after_start_is_watched) {
  DaemonHarness h("demo/nodes/z100l-mixed.yaml", {"--pulse=0"});
  h.Start();
  h.RequireIds("hygon.com/hcu", {kCard0, kCard1});
  h.daemon().Stop();
  const std::string vdev = h.host_root() + "/etc/vdev";
  fs::rename(vdev, vdev + ".away");
  h.StartDaemon();
  h.RequireRegistered("hygon.com/hcu", 2);

  fs::rename(vdev + ".away", vdev);
  h.RequireIds("hygon.com/hcu", {kCard0, kCard1}, kEventDeadline);
  h.RequireIds("hygon.com/hcu-share-30c-16g", {"vdev4", "vdev5"}, kEventDeadline);

  PastTheConfirmingReread();
  CreateOnCard0(h, 6, 1024);
  h.RequireIds("hygon.com/hcu", {kCard1}, kEventDeadline);
}

// The whole /etc/vdev replaced (rename of a new directory over it): the
// watch moves to the new directory.
BOOST_AUTO_TEST_CASE(a_replaced_vdev_directory_is_watched_again) {
  DaemonHarness h("demo/nodes/z100l-mixed.yaml", {"--pulse=0"});
  h.Start();
  h.RequireIds("hygon.com/hcu", {kCard0, kCard1});
  const std::string vdev = h.host_root() + "/etc/vdev";
  fs::copy(vdev, vdev + ".new", fs::copy_options::recursive);
  fs::rename(vdev, vdev + ".old");
  fs::rename(vdev + ".new", vdev);
  fs::remove_all(vdev + ".old");

  PastTheConfirmingReread();
  CreateOnCard0(h, 6, 1024);
  h.RequireIds("hygon.com/hcu", {kCard1}, kEventDeadline);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp::testing
