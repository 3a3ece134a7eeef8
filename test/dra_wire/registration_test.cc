// Registration through kubelet's plugin watcher (DESIGN.md §9, dra.md §1):
// what GetInfo says, and that the driver is registered again after a
// kubelet restart or a wiped registry directory, fast.
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>

#include "dra/dra_sockets.h"
#include "dra/registration_service.h"
#include "dra_wire/dra_node.h"
#include "testing/sim_clock.h"
#include "testing/testutil.h"

namespace hcudp::testing {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using std::chrono::seconds;
using SteadyClock = std::chrono::steady_clock;

// Polls a file condition (sockets give no other signal to a test) until
// `deadline`.
bool WaitForPath(const std::string& path, bool present, milliseconds timeout) {
  return PollUntil(
      [&] {
        struct stat st {};
        return (::lstat(path.c_str(), &st) == 0) == present;
      },
      timeout);
}

BOOST_AUTO_TEST_SUITE(registration)

BOOST_AUTO_TEST_CASE(get_info_names_the_driver_its_socket_and_v1_before_v1beta1) {
  DraNode node;
  node.Start();
  WatcherSnapshot s = node.kubelet().State();
  BOOST_REQUIRE_EQUAL(s.attempts.size(), 1u);
  const RegistrationAttempt& a = s.attempts[0];
  BOOST_TEST(a.type == "DRAPlugin");
  BOOST_TEST(a.name == kDriver);
  BOOST_TEST(a.endpoint == node.dra_sock());
  BOOST_TEST(a.socket_path == node.registry_dir() + "/dra.hygon.com-0000001-reg.sock");
  const std::vector<std::string> expected = {"v1.DRAPlugin", "v1beta1.DRAPlugin",
                                             "v1alpha1.DRAResourceHealth", "v1.DRAResourceHealth"};
  BOOST_TEST(a.supported_versions == expected, boost::test_tools::per_element());
  BOOST_TEST(a.chosen_service == "v1.DRAPlugin");
  BOOST_TEST(a.registered);
  BOOST_TEST(a.notified);
  BOOST_TEST(a.error == "");
  BOOST_REQUIRE_EQUAL(s.plugins[kDriver].size(), 1u);
  BOOST_TEST(s.plugins[kDriver][0].health_service == "v1.DRAResourceHealth");
  BOOST_TEST(PollUntil([&] { return node.plugin().registered(); }));
  BOOST_TEST(node.plugin().registrations() == 1);
}

BOOST_AUTO_TEST_CASE(a_kubelet_that_knows_only_v1beta1_registers_it) {
  FakePluginWatcher::Config config;
  config.known_services = {"v1beta1.DRAPlugin"};  // kubelet 1.32/1.33
  DraNode node(config);
  node.Start();
  BOOST_TEST(node.kubelet().State().attempts.back().chosen_service == "v1beta1.DRAPlugin");
}

BOOST_AUTO_TEST_CASE(a_refusal_is_logged_and_registration_is_retried) {
  // A kubelet that knows no service we offer refuses every time; the
  // plugin re-creates its socket with a growing backoff, so kubelet keeps
  // seeing (and refusing) new registrations.
  FakePluginWatcher::Config config;
  config.known_services = {"v1alpha3.NodeService"};
  DraNode node(config);
  BOOST_REQUIRE_EQUAL(node.kubelet().Start(), "");
  node.StartPlugin(node.Options());
  auto s = node.kubelet().WaitFor(
      [](const WatcherSnapshot& s) {
        return std::count_if(s.attempts.begin(), s.attempts.end(),
                             [](const auto& a) { return a.notified && !a.registered; }) >= 3;
      },
      seconds(10));
  BOOST_REQUIRE(s.has_value());
  BOOST_TEST(s->attempts[0].error.find("none of services supported by the plugin") !=
             std::string::npos);
  BOOST_TEST(!node.plugin().registered());
  BOOST_TEST(node.plugin().registrations() == 0);
}

BOOST_AUTO_TEST_CASE(kubelet_restart_registers_again_and_runs_the_restart_hook) {
  std::atomic<int> hook_calls{0};
  std::atomic<int> on_registered{0};
  FakePluginWatcher::Config config;
  config.on_restart = [&] { ++hook_calls; };
  DraNode node(config);
  auto options = node.Options();
  options.on_registered = [&] { ++on_registered; };
  node.Start(options);
  std::vector<long> latencies_ms;
  for (int round = 1; round <= 10; ++round) {
    const auto t0 = SteadyClock::now();
    BOOST_REQUIRE_EQUAL(node.kubelet().Restart(milliseconds(0)), "");
    BOOST_REQUIRE(node.kubelet().WaitForRegistrations(kDriver, round + 1, seconds(10)).has_value());
    latencies_ms.push_back(MillisSince(t0));
  }
  BOOST_TEST(hook_calls.load() == 10);
  // The plugin learns of each registration (the driver republishes slices).
  BOOST_TEST(PollUntil([&] { return on_registered.load() == 11; }));
  BOOST_TEST(node.plugin().registrations() == 11);
  std::sort(latencies_ms.begin(), latencies_ms.end());
  std::cerr << "DRA: kubelet restart -> registered again: median "
            << latencies_ms[latencies_ms.size() / 2] << " ms, max " << latencies_ms.back()
            << " ms\n";
  BOOST_TEST(latencies_ms[latencies_ms.size() / 2] <= 100);
}

BOOST_AUTO_TEST_CASE(a_wiped_registry_directory_is_registered_again_within_100ms_median) {
  DraNode node;
  node.Start();
  const std::string reg = node.plugin().registration_socket_path();
  std::vector<long> latencies_ms;
  for (int round = 1; round <= 20; ++round) {
    const auto t0 = SteadyClock::now();
    for (const auto& e : fs::directory_iterator(node.registry_dir())) fs::remove_all(e.path());
    BOOST_REQUIRE(node.kubelet().WaitForRegistrations(kDriver, round + 1, seconds(10)).has_value());
    latencies_ms.push_back(MillisSince(t0));
  }
  WatcherSnapshot s = node.kubelet().State();
  BOOST_TEST(s.plugins[kDriver].size() == 1u);  // the old registration went with its socket
  BOOST_TEST(PollUntil([&] { return node.plugin().registered(); }));
  std::sort(latencies_ms.begin(), latencies_ms.end());
  std::cerr << "DRA: registry directory wiped -> registered again: median "
            << latencies_ms[latencies_ms.size() / 2] << " ms, max " << latencies_ms.back()
            << " ms\n";
  BOOST_TEST(latencies_ms[latencies_ms.size() / 2] <= 100);
}

BOOST_AUTO_TEST_CASE(a_removed_registry_directory_is_recreated_for_the_next_kubelet) {
  // kubelet loses its watch with the directory (as fsnotify does); the
  // plugin recreates directory and socket, and the next kubelet finds it.
  DraNode node;
  node.Start();
  // `rm -rf` of the directory races the plugin, which re-creates its socket
  // as soon as it sees it removed: the directory may not be empty yet when
  // remove_all removes it. Remove until the directory is gone, as an admin
  // would run `rm -rf` again.
  BOOST_REQUIRE(PollUntil([&] {
    std::error_code ec;
    fs::remove_all(node.registry_dir(), ec);
    return !ec;  // the directory was removed (the plugin may have re-created it since)
  }));
  BOOST_REQUIRE(WaitForPath(node.plugin().registration_socket_path(), true, seconds(5)));
  BOOST_REQUIRE_EQUAL(node.kubelet().Restart(), "");
  BOOST_REQUIRE(node.kubelet().WaitForRegistrations(kDriver, 2, seconds(10)).has_value());
}

BOOST_AUTO_TEST_CASE(a_removed_dra_socket_is_served_again_on_the_same_endpoint) {
  DraNode node;
  node.Start();
  ::unlink(node.dra_sock().c_str());
  BOOST_REQUIRE(WaitForPath(node.dra_sock(), true, seconds(5)));
  // Kubelet's connection follows the same path: calls work without a new
  // registration.
  CallOutcome out;
  const auto deadline = SteadyClock::now() + seconds(10);
  do {
    out = node.kubelet().NodePrepareResources(kDriver, {MakeClaim("uid-1", "c1")});
  } while (!out.ok() && SteadyClock::now() < deadline);
  BOOST_TEST(out.ok(), out.status.error_message() << out.kubelet_error);
  BOOST_TEST(node.kubelet().State().registrations[kDriver] == 1);
  // Served again once, and that stays so: retiring the old server must not
  // remove the new socket (gRPC unlinks the path it bound at shutdown).
  BOOST_REQUIRE(PollUntil([&] { return node.plugin().service_serves() == 2; }));
  const uint64_t passes = node.plugin().reconcile_passes();
  for (int i = 0; i < 3; ++i) {  // wake the manager thread: a pass each
    std::ofstream(node.plugins_dir() + "/" + kDriver + "/wake") << i;
    BOOST_REQUIRE(PollUntil([&] { return node.plugin().reconcile_passes() > passes + i; }));
  }
  BOOST_TEST(node.plugin().service_serves() == 2);
  BOOST_TEST(fs::exists(node.dra_sock()));
}

BOOST_AUTO_TEST_CASE(stop_removes_the_registration_socket_and_kubelet_deregisters) {
  DraNode node;
  node.Start();
  const std::string reg = node.plugin().registration_socket_path();
  BOOST_TEST(node.plugin().Stop());
  BOOST_TEST(!fs::exists(reg));
  BOOST_TEST(!fs::exists(node.dra_sock()));
  BOOST_TEST(node.kubelet()
                 .WaitFor([](const WatcherSnapshot& s) { return s.plugins.count(kDriver) == 0; },
                          seconds(5))
                 .has_value());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp::testing

namespace hcudp::testing {
namespace {

BOOST_AUTO_TEST_SUITE(registration_schedule)

// Which file is at `path` now: its inode and change time (a removed
// socket's inode number may be reused at once by the next one); 0 if none.
uint64_t Inode(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return 0;
  return static_cast<uint64_t>(st.st_ino) * 1000003u ^
         static_cast<uint64_t>(st.st_ctim.tv_sec) * 1000000000u ^
         static_cast<uint64_t>(st.st_ctim.tv_nsec);
}

BOOST_AUTO_TEST_CASE(a_registration_socket_nobody_answers_is_recreated_5_then_10_s_later) {
  // No kubelet at all; the schedule runs on simulated time.
  DraNode node;
  SimClock clock;
  daemon::dra::DraPlugin plugin(node.Options(), node.handler(), clock);
  BOOST_REQUIRE(plugin.Start().ok());
  const std::string reg = plugin.registration_socket_path();
  const uint64_t first = Inode(reg);
  BOOST_REQUIRE(first != 0);
  // The manager thread and the health broadcaster wait on the clock.
  BOOST_REQUIRE(clock.WaitForSleepers(2, seconds(5)));
  clock.Advance(daemon::dra::DraPlugin::kUnansweredMin);
  BOOST_REQUIRE(PollUntil([&] { return Inode(reg) != first && Inode(reg) != 0; }));
  const uint64_t second = Inode(reg);
  // 5 s later only the stat backstop runs: the period has doubled.
  BOOST_REQUIRE(PollUntil([&] { return clock.sleepers() >= 2; }));
  const uint64_t passes = plugin.reconcile_passes();
  clock.Advance(daemon::dra::DraPlugin::kUnansweredMin);
  BOOST_REQUIRE(PollUntil([&] { return plugin.reconcile_passes() > passes; }));
  BOOST_REQUIRE(PollUntil([&] { return clock.sleepers() >= 2; }));
  BOOST_TEST(Inode(reg) == second);
  // 10 s after the first re-creation: the second.
  clock.Advance(daemon::dra::DraPlugin::kUnansweredMin);
  BOOST_REQUIRE(PollUntil([&] { return Inode(reg) != second && Inode(reg) != 0; }));
  BOOST_TEST(plugin.Stop());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp::testing
