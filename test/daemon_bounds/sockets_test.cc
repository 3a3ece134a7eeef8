// hcu-dp-daemon's sockets under pressure (issue 10 items 3-5): a frozen
// listener in the directory at start-up, a socket directory as long as
// microk8s's, and 200 kubelet restarts without growing fds or threads.
#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <set>
#include <thread>

#include "daemon_bounds/bounds_util.h"
#include "integration/daemon_harness.h"

namespace hcudp::testing {
namespace {

namespace fs = std::filesystem;

std::set<std::string> RegisteredWithin(FakeKubelet& kubelet, const std::set<std::string>& want,
                                       milliseconds timeout) {
  for (const std::string& r : want) {
    if (!kubelet.WaitForRegistration(r, timeout).has_value()) break;
  }
  auto got = kubelet.Resources();
  return {got.begin(), got.end()};
}

BOOST_AUTO_TEST_SUITE(daemon_sockets)

// Item 3: the stale-socket sweep must not block on a listener whose backlog
// is full (a frozen old instance); that socket is left alone and logged.
BOOST_AUTO_TEST_CASE(a_frozen_listener_neither_blocks_start_up_nor_is_removed) {
  DaemonHarness h("demo/nodes/k100ai-8.yaml", {"--pulse=0"});
  h.StartKubelet();  // kubelet's own start-up clears the directory
  const std::string frozen = h.plugin_dir() + "/hygon.com_hcu@1-frozen.sock";
  FrozenListener listener(frozen);
  h.StartDaemon();
  // Registration proves start-up got past the sweep (the sweep runs first).
  auto snap = h.kubelet().WaitForRegistration("hygon.com/hcu", milliseconds(5000));
  BOOST_TEST(snap.has_value(), "not registered within 5 s: start-up is stuck");
  BOOST_TEST(PathExists(frozen), "a socket that could not be judged was removed");
  BOOST_TEST(h.daemon().Log().find("leaving " + frozen + " alone") != std::string::npos,
             "no log line about the frozen socket:\n"
                 << h.daemon().Log());
  CheckSigtermExit(h.daemon(), "after a start-up with a frozen listener");
  listener.Close();
}

// Item 4: microk8s's plugin directory is 57 bytes; every resource of the
// demo nodes is served there with the longest names (policy 2), exactly the
// set served from a short directory.
BOOST_AUTO_TEST_CASE(every_resource_is_served_from_a_57_byte_directory_with_policy_2) {
  for (const std::string node :
       {"demo/nodes/k100ai-8.yaml", "demo/nodes/z100l-mixed.yaml", "demo/nodes/bw-mig.yaml"}) {
    BOOST_TEST_CONTEXT(node) {
      const std::vector<std::string> flags = {"--policy=2", "--strategy=mixed", "--pulse=0"};
      std::set<std::string> expected;
      {
        DaemonHarness shortdir(node, flags);
        shortdir.Start();
        // One resource registered means start-up finished; the others
        // follow within moments.
        auto deadline = std::chrono::steady_clock::now() + kRegisterTimeout;
        while (std::chrono::steady_clock::now() < deadline) {
          auto names = shortdir.kubelet().Resources();
          if (!names.empty()) {
            std::this_thread::sleep_for(milliseconds(300));
            names = shortdir.kubelet().Resources();
            expected.insert(names.begin(), names.end());
            break;
          }
          std::this_thread::sleep_for(milliseconds(10));
        }
        BOOST_REQUIRE_MESSAGE(!expected.empty(), "nothing registered from a short directory");
      }
      TempDir base;
      const std::string dir = MakeDirOfLength(base.path(), 57);
      FakeKubelet kubelet(FakeKubelet::Config{dir});
      BOOST_REQUIRE_EQUAL(kubelet.Start(), "");
      std::vector<std::string> long_flags = flags;
      long_flags.push_back("--device-plugin-path=" + dir + "/");
      DaemonHarness h(node, long_flags);
      h.StartDaemon();
      std::set<std::string> got = RegisteredWithin(kubelet, expected, kRegisterTimeout);
      BOOST_TEST(got == expected,
                 "57-byte directory: registered " << got.size() << " of " << expected.size());
      for (const std::string& r : expected) {
        auto snap = kubelet.Snapshot(r);
        if (!snap) continue;
        const std::string prefix = "hygon.com_" + r.substr(r.find('/') + 1) + "@";
        BOOST_TEST(snap->endpoint.rfind(prefix, 0) == 0u, snap->endpoint);
        BOOST_TEST((dir + "/" + snap->endpoint).size() <= 107u, snap->endpoint);
      }
      BOOST_TEST(h.daemon().Running());
      CheckSigtermExit(h.daemon(), "57-byte directory");
      kubelet.Stop();
    }
  }
}

// Item 4: a name that fits no socket path is one log line; the others are
// served and the daemon keeps running.
BOOST_AUTO_TEST_CASE(a_resource_whose_socket_path_cannot_fit_is_logged_and_the_rest_served) {
  // z100l-mixed, policy 2: Z100L_32G_60CU (14) and ..._60CU-share-15c-8g (29).
  // A directory of 107 - 10 - 14 - 8 = 75 bytes fits the card resource only.
  TempDir base;
  const std::string dir = MakeDirOfLength(base.path(), 75);
  FakeKubelet kubelet(FakeKubelet::Config{dir});
  BOOST_REQUIRE_EQUAL(kubelet.Start(), "");
  DaemonHarness h("demo/nodes/z100l-mixed.yaml", {"--policy=2", "--strategy=mixed", "--pulse=0",
                                                  "--device-plugin-path=" + dir + "/"});
  h.StartDaemon();
  auto resources_deadline = std::chrono::steady_clock::now() + kRegisterTimeout;
  std::vector<std::string> got;
  while (got.empty() && std::chrono::steady_clock::now() < resources_deadline) {
    got = kubelet.Resources();
    std::this_thread::sleep_for(milliseconds(10));
  }
  BOOST_REQUIRE_MESSAGE(got.size() == 1u, "registered " << got.size() << " resources\n"
                                                        << h.daemon().Log());
  const std::string log = h.daemon().Log();
  size_t lines = 0;
  for (size_t at = log.find("over the 107-byte limit"); at != std::string::npos;
       at = log.find("over the 107-byte limit", at + 1)) {
    ++lines;
  }
  BOOST_TEST(lines == 2u, "one line per unservable resource:\n" << log);
  BOOST_TEST(h.daemon().Running());
  CheckSigtermExit(h.daemon(), "unservable resources");
  kubelet.Stop();
}

// Item 5: kubelet restarts leak nothing: the daemon's fd and thread counts
// after 200 restarts equal those after the first few.
BOOST_AUTO_TEST_CASE(two_hundred_kubelet_restarts_leak_no_fds_or_threads) {
  DaemonHarness h("demo/nodes/k100ai-8.yaml", {"--strategy=hcu", "--pulse=0"});
  h.Start();
  h.RequireRegistered("hygon.com/hcu");
  const pid_t pid = h.daemon().pid();
  int registrations = 1;
  auto restart = [&] {
    BOOST_REQUIRE_EQUAL(h.kubelet().Restart(milliseconds(0)), "");
    ++registrations;
    h.RequireRegistered("hygon.com/hcu", registrations);
  };
  for (int i = 0; i < 5; ++i) restart();  // gRPC's pools warm up
  const int fds_before = CountFds(pid);
  const int threads_before = CountThreads(pid);
  const std::string fds_before_text = DescribeFds(pid);
  for (int i = 0; i < 200; ++i) restart();
  // A connection closed by the last restart may still be on its way out, and
  // on a loaded machine gRPC's pools may have grown a thread that retires
  // once idle: a leak stays past the deadline, those do not.
  int fds_after = CountFds(pid);
  int threads_after = CountThreads(pid);
  // 30 s: seen once under -j4, the count was still one over at 10 s and back
  // when the failure listed the fds; a leak of one per restart stays 200 over.
  auto deadline = std::chrono::steady_clock::now() + milliseconds(30000);
  // A leak of one per restart shows 200 over; a connection or two that the
  // last restarts left closing on a loaded machine (seen in CI's asan run
  // beside the image build: one gRPC socket over after 30 s) is a small
  // fixed allowance, as for the threads below.
  constexpr int kFdAllowance = 2;
  while ((fds_after > fds_before + kFdAllowance || threads_after > threads_before) &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(20));
    fds_after = CountFds(pid);
    threads_after = CountThreads(pid);
  }
  BOOST_TEST_MESSAGE("fds " << fds_before << " -> " << fds_after << ", threads " << threads_before
                            << " -> " << threads_after << " over 200 kubelet restarts");
  BOOST_TEST(fds_after <= fds_before + kFdAllowance, "fds grew over 200 restarts: before\n"
                                                         << fds_before_text << "after\n"
                                                         << DescribeFds(pid));
  // gRPC's executor may keep a thread or two it grew on a loaded machine
  // (seen: 11 -> 13 under load, 12 -> 12 alone); a per-restart leak would
  // add 200, so a small fixed allowance still tells flat from growing.
  BOOST_TEST(threads_after <= threads_before + 4);
  CheckSigtermExit(h.daemon(), "after 200 kubelet restarts");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp::testing
