// hcu-dp-daemon over time: health faults and recovery, device-set changes
// without a restart, kubelet restarts and dropped streams, SIGTERM, and
// start-up errors (DESIGN.md §3, §4.2; kubelet-contract.md §3-5).
#include <poll.h>
#include <signal.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <algorithm>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <iostream>
#include <ostream>
#include <sstream>
#include <thread>

#include "integration/daemon_harness.h"
#include "testing/testutil.h"

namespace hcudp::testing {
namespace {

namespace fs = std::filesystem;
using SteadyClock = std::chrono::steady_clock;

std::function<bool(const std::vector<v1beta1::Device>&)> HealthIs(
    const std::map<std::string, std::string>& want) {
  return [want](const std::vector<v1beta1::Device>& devices) {
    for (const auto& [id, health] : want) {
      auto it = std::find_if(devices.begin(), devices.end(),
                             [&id = id](const v1beta1::Device& d) { return d.id() == id; });
      if (it == devices.end() || it->health() != health) return false;
    }
    return true;
  };
}

// Event paths are tested with --pulse=0. SimNode edits (health, cards) are
// node-file events on the sim backend; on the host backend the stand-in
// vendor libraries and hy-smi answer them, which the daemon polls each pulse.
std::string PulseForNodeEdits() { return UsingHostBackend() ? "--pulse=1" : "--pulse=0"; }

// Counts the daemon's looks at the node: every refresh (a pulse, or a
// node-file event) lists <host-root>/etc/vdev, which inotify reports as an
// IN_OPEN of the directory itself. The vendor stand-ins may list it too, so a
// refresh counts once or twice.
class NodeLooks {
 public:
  explicit NodeLooks(const std::string& dir) : fd_(inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) {
    BOOST_REQUIRE(fd_ >= 0);
    BOOST_REQUIRE_MESSAGE(inotify_add_watch(fd_, dir.c_str(), IN_OPEN) >= 0, "watch " << dir);
  }
  ~NodeLooks() { ::close(fd_); }
  NodeLooks(const NodeLooks&) = delete;
  NodeLooks& operator=(const NodeLooks&) = delete;

  // Waits (at most `timeout`) until the directory was opened `n` times since
  // the watch began.
  bool WaitFor(int n, milliseconds timeout) {
    const auto deadline = SteadyClock::now() + timeout;
    while (opens_ < n) {
      const long left = MillisLeft(deadline);
      if (left <= 0) return false;
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left)) <= 0) continue;
      alignas(inotify_event) char buf[4096];
      const ssize_t len = ::read(fd_, buf, sizeof(buf));
      for (ssize_t i = 0; i < len;) {
        const auto* e = reinterpret_cast<const inotify_event*>(buf + i);
        if ((e->mask & IN_OPEN) && (e->mask & IN_ISDIR) && e->len == 0) ++opens_;
        i += static_cast<ssize_t>(sizeof(inotify_event) + e->len);
      }
    }
    return true;
  }

 private:
  static long MillisLeft(SteadyClock::time_point deadline) {
    return static_cast<long>(
        std::chrono::duration_cast<milliseconds>(deadline - SteadyClock::now()).count());
  }

  const int fd_;
  int opens_ = 0;
};

BOOST_AUTO_TEST_SUITE(lifecycle)

BOOST_AUTO_TEST_CASE(an_unhealthy_card_is_reported_and_recovers) {
  DaemonHarness h("demo/nodes/k100ai-8.yaml", {PulseForNodeEdits()});
  h.Start();
  h.RequireRegistered("hygon.com/hcu");

  h.SetCardHealth(3, "Unhealthy");
  auto faulty = h.kubelet().WaitForDevices(
      "hygon.com/hcu", HealthIs({{"0000:69:00.0", "Unhealthy"}}), kHealthTimeout);
  BOOST_REQUIRE_MESSAGE(faulty.has_value(), "card 3 not reported Unhealthy within 5 s");
  BOOST_TEST(faulty->devices.size() == 8u);
  for (const v1beta1::Device& d : faulty->devices) {
    if (d.id() != "0000:69:00.0") BOOST_TEST(d.health() == "Healthy", d.id());
  }

  h.SetCardHealth(3, "Healthy");
  BOOST_TEST(
      h.kubelet()
          .WaitForDevices("hygon.com/hcu", HealthIs({{"0000:69:00.0", "Healthy"}}), kHealthTimeout)
          .has_value(),
      "card 3 did not recover within 5 s");
}

// The node file changing is an event: a fault shows without waiting for a
// pulse (30 s here), after the hysteresis' confirming re-read (~1 s).
BOOST_AUTO_TEST_CASE(a_health_edit_is_seen_without_waiting_for_the_pulse) {
  if (UsingHostBackend()) {
    // On a real node health comes from hy-smi, which is polled every pulse.
    BOOST_TEST_MESSAGE("host backend: no node-file event for health; polled only");
    return;
  }
  DaemonHarness h("demo/nodes/k100ai-8.yaml", {"--pulse=30"});
  h.Start();
  h.RequireRegistered("hygon.com/hcu");
  auto start = std::chrono::steady_clock::now();
  h.SetCardHealth(3, "Unhealthy");
  BOOST_TEST(h.kubelet()
                 .WaitForDevices("hygon.com/hcu", HealthIs({{"0000:69:00.0", "Unhealthy"}}),
                                 milliseconds(4000))
                 .has_value(),
             "card 3 not reported Unhealthy within 4 s with --pulse=30");
  BOOST_TEST_MESSAGE(
      "health edit -> Unhealthy reported in "
      << std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - start).count()
      << " ms");
}

BOOST_AUTO_TEST_CASE(vhcus_follow_their_parent_cards_health) {
  DaemonHarness h("demo/nodes/z100l-mixed.yaml", {PulseForNodeEdits()});
  h.Start();
  h.RequireRegistered("hygon.com/hcu-share-30c-16g");
  h.RequireRegistered("hygon.com/hcu-share-15c-8g");

  h.SetCardHealth(3, "Unhealthy");
  BOOST_REQUIRE(h.kubelet()
                    .WaitForDevices("hygon.com/hcu-share-30c-16g",
                                    HealthIs({{"vdev4", "Unhealthy"}, {"vdev5", "Unhealthy"}}),
                                    kHealthTimeout)
                    .has_value());
  // Card 2's vHCUs are unaffected.
  auto other = h.kubelet().Snapshot("hygon.com/hcu-share-15c-8g");
  BOOST_REQUIRE(other.has_value());
  BOOST_REQUIRE_EQUAL(other->devices.size(), 4u);
  for (const v1beta1::Device& d : other->devices) BOOST_TEST(d.health() == "Healthy", d.id());

  h.SetCardHealth(3, "Healthy");
  BOOST_TEST(h.kubelet()
                 .WaitForDevices("hygon.com/hcu-share-30c-16g",
                                 HealthIs({{"vdev4", "Healthy"}, {"vdev5", "Healthy"}}),
                                 kHealthTimeout)
                 .has_value());
}

BOOST_AUTO_TEST_CASE(mig_instances_follow_their_cards_health) {
  DaemonHarness h("demo/nodes/bw-mig.yaml", {"--strategy=mig", PulseForNodeEdits()});
  h.Start();
  h.RequireRegistered("hygon.com/hcu-mig-8g-63gb");
  h.SetCardHealth(2, "Unhealthy");
  BOOST_TEST(h.kubelet()
                 .WaitForDevices("hygon.com/hcu-mig-8g-63gb",
                                 HealthIs({{MigIds("8g.63gb")[0], "Unhealthy"}}), kHealthTimeout)
                 .has_value());
}

BOOST_AUTO_TEST_CASE(an_unchanged_list_is_not_sent_again_on_every_pulse) {
  DaemonHarness h("demo/nodes/k100ai-8.yaml", {"--pulse=1"});
  h.Start();
  h.RequireRegistered("hygon.com/hcu");
  // Pulses after the registration: three looks are two whole pulses (one
  // look each, as the sim and the stand-ins do), at least one at two.
  NodeLooks looks(h.host_root() + "/etc/vdev");
  BOOST_REQUIRE(looks.WaitFor(3, milliseconds(15000)));
  ResourceSnapshot snap = *h.kubelet().Snapshot("hygon.com/hcu");
  BOOST_TEST(snap.current_stream_messages == 1, "messages: " << snap.current_stream_messages);
}

BOOST_AUTO_TEST_CASE(an_invalid_node_file_edit_keeps_the_last_good_state) {
  DaemonHarness h("demo/nodes/k100ai-8.yaml", {PulseForNodeEdits()});
  h.Start();
  h.RequireRegistered("hygon.com/hcu");
  const std::string tmp = h.node_path() + ".tmp";
  WriteFile(tmp, "apiVersion: hcudp.hygon.com/v1\nkind: SimNode\ncards: [ {index: oops\n");
  NodeLooks looks(h.host_root() + "/etc/vdev");
  fs::rename(tmp, h.node_path());
  if (UsingHostBackend()) {
    // The stand-ins read the edit at the next pulse: wait for two more.
    BOOST_REQUIRE(looks.WaitFor(3, milliseconds(15000)));
  } else {
    BOOST_REQUIRE(h.daemon().WaitForLog("sim: ignoring invalid edit", milliseconds(10000)));
  }
  ResourceSnapshot snap = *h.kubelet().Snapshot("hygon.com/hcu");
  BOOST_TEST(h.daemon().Running());
  BOOST_TEST(Ids(snap.devices).size() == 8u);
  for (const v1beta1::Device& d : snap.devices) BOOST_TEST(d.health() == "Healthy", d.id());
  // A later valid edit is picked up again.
  WriteFile(h.node_path(), ReadFile(SourcePath("demo/nodes/k100ai-8.yaml")));
  h.SetCardHealth(0, "Unhealthy");
  BOOST_TEST(
      h.kubelet()
          .WaitForDevices("hygon.com/hcu", HealthIs({{K100Bdfs()[0], "Unhealthy"}}), kHealthTimeout)
          .has_value());
}

BOOST_AUTO_TEST_CASE(a_card_removed_from_the_node_disappears_without_a_restart) {
  DaemonHarness h("demo/nodes/k100ai-8.yaml", {PulseForNodeEdits()});
  h.Start();
  h.RequireRegistered("hygon.com/hcu");
  const pid_t pid = h.daemon().pid();
  h.RemoveCard(7);
  std::set<std::string> seven(K100Bdfs().begin(), K100Bdfs().end() - 1);
  h.RequireIds("hygon.com/hcu", seven, kHealthTimeout);
  BOOST_TEST(h.daemon().Running());
  BOOST_TEST(h.daemon().pid() == pid);
}

// A new vHCU on card 0 of z100l-mixed with a profile nobody has yet
// (20 CU, 4 GiB): through hcuctl when it is built, else as the driver would
// leave it, a vdev6.conf in the host root.
BOOST_AUTO_TEST_CASE(a_new_vhcu_profile_appears_as_a_new_resource) {
  DaemonHarness h("demo/nodes/z100l-mixed.yaml", {"--pulse=0"});
  h.Start();
  h.RequireRegistered("hygon.com/hcu");
  h.RequireRegistered("hygon.com/hcu-share-15c-8g");

  const std::string hcuctl = BinaryPath("hcuctl/hcuctl");
  std::string expected_id = "vdev6";
  if (PathExists(hcuctl)) {
    RunResult r =
        Run({hcuctl, "--backend=sim", "--sim-node=" + h.node_path(), "--host-root=" + h.host_root(),
             "vhcu", "create", "--card", "0", "--cu", "20", "--mem-mib", "4096"});
    BOOST_REQUIRE_MESSAGE(r.exit_code == 0, "hcuctl vhcu create: " << r.out << r.err);
    expected_id.clear();  // hcuctl picks the id
  } else {
    WriteFile(h.host_root() + "/etc/vdev/vdev6.conf", kZ100lCard0Vdev6Conf);
  }
  ResourceSnapshot snap =
      h.RequireRegistered("hygon.com/hcu-share-20c-4g", 1, milliseconds(2 * kHealthTimeout));
  BOOST_REQUIRE_EQUAL(snap.devices.size(), 1u);
  if (!expected_id.empty()) BOOST_TEST(snap.devices[0].id() == expected_id);
  // In mixed, a card that carries a vHCU is no longer offered whole.
  h.RequireIds("hygon.com/hcu", {"0000:0e:00.0"}, kHealthTimeout);
}

BOOST_AUTO_TEST_CASE(twenty_kubelet_restarts_in_a_row_are_each_followed_by_reregistration) {
  DaemonHarness h("demo/nodes/z100l-mixed.yaml");
  h.Start();
  const std::vector<std::string> resources = {"hygon.com/hcu", "hygon.com/hcu-share-15c-8g",
                                              "hygon.com/hcu-share-30c-16g"};
  for (const std::string& r : resources) h.RequireRegistered(r);

  std::vector<long> latencies_ms;
  for (int round = 1; round <= 20; ++round) {
    std::map<std::string, int> before;
    for (const std::string& r : resources) before[r] = h.kubelet().Snapshot(r)->registrations;
    BOOST_REQUIRE_EQUAL(h.kubelet().Restart(), "");
    const SteadyClock::time_point restarted = SteadyClock::now();
    for (const std::string& r : resources) {
      auto snap = h.kubelet().WaitForRegistration(r, kRegisterTimeout, before[r] + 1);
      if (!snap.has_value()) {
        std::cerr << "plugin directory:\n" << h.ListPluginDir() << "latest Register calls:\n";
        std::vector<RegisterAttempt> log = h.kubelet().RegisterLog();
        for (size_t i = log.size() > 6 ? log.size() - 6 : 0; i < log.size(); ++i) {
          std::cerr << "  " << log[i].request.endpoint() << " -> "
                    << (log[i].error.empty() ? "OK" : log[i].error) << "\n";
        }
      }
      BOOST_REQUIRE_MESSAGE(snap.has_value(),
                            r << " not re-registered after kubelet restart " << round);
      BOOST_TEST(Ids(snap->current_stream_first_devices).size() == snap->devices.size());
    }
    latencies_ms.push_back(MillisSince(restarted));
  }
  std::sort(latencies_ms.begin(), latencies_ms.end());
  std::cerr << "kubelet restart -> all 3 resources re-registered with a stream: median "
            << latencies_ms[latencies_ms.size() / 2] << " ms, max " << latencies_ms.back()
            << " ms\n";
  BOOST_TEST(h.daemon().Running());
}

BOOST_AUTO_TEST_CASE(a_kubelet_down_for_a_while_is_registered_with_as_soon_as_it_returns) {
  DaemonHarness h("demo/nodes/k100ai-8.yaml");
  h.Start();
  int before = h.RequireRegistered("hygon.com/hcu").registrations;
  // Long enough for several failed attempts and a grown backoff.
  BOOST_REQUIRE_EQUAL(h.kubelet().Restart(milliseconds(1500)), "");
  const SteadyClock::time_point back = SteadyClock::now();
  h.RequireRegistered("hygon.com/hcu", before + 1, seconds(2));
  std::cerr << "kubelet back after 1.5 s down -> re-registered: " << MillisSince(back) << " ms\n";
}

BOOST_AUTO_TEST_CASE(a_stream_closed_by_kubelet_leads_to_reregistration) {
  DaemonHarness h("demo/nodes/k100ai-8.yaml");
  h.Start();
  int before = h.RequireRegistered("hygon.com/hcu").registrations;
  BOOST_REQUIRE(h.kubelet().CancelStream("hygon.com/hcu"));
  ResourceSnapshot snap = h.RequireRegistered("hygon.com/hcu", before + 1);
  BOOST_TEST(snap.current_stream_open);
  // The new registration works end to end.
  v1beta1::AllocateResponse response;
  BOOST_TEST(h.kubelet().Allocate("hygon.com/hcu", {{K100Bdfs()[0]}}, &response).ok());
}

// Another client (grpcurl while debugging, a monitoring tool) watching the
// same socket must not hide the end of kubelet's own stream: kubelet never
// reopens one by itself, so without a new Register the resource stays at
// allocatable 0.
BOOST_AUTO_TEST_CASE(a_stream_closed_by_kubelet_leads_to_reregistration_while_another_client_watches) {
  DaemonHarness h("demo/nodes/k100ai-8.yaml");
  h.Start();
  ResourceSnapshot first = h.RequireRegistered("hygon.com/hcu");
  auto channel = grpc::CreateChannel("unix://" + h.plugin_dir() + "/" + first.endpoint,
                                     grpc::InsecureChannelCredentials());
  auto stub = v1beta1::DevicePlugin::NewStub(channel);
  grpc::ClientContext watcher;
  watcher.set_deadline(std::chrono::system_clock::now() + seconds(60));
  auto reader = stub->ListAndWatch(&watcher, v1beta1::Empty());
  v1beta1::ListAndWatchResponse list;
  BOOST_REQUIRE(reader->Read(&list));
  BOOST_REQUIRE(h.kubelet().CancelStream("hygon.com/hcu"));
  auto again = h.kubelet().WaitForRegistration("hygon.com/hcu", kRegisterTimeout,
                                               first.registrations + 1);
  BOOST_TEST(again.has_value(), "no Register after kubelet's stream ended");
  watcher.TryCancel();
  reader->Finish();
}

BOOST_AUTO_TEST_CASE(a_deleted_plugin_socket_leads_to_reregistration) {
  DaemonHarness h("demo/nodes/k100ai-8.yaml");
  h.Start();
  ResourceSnapshot first = h.RequireRegistered("hygon.com/hcu");
  fs::remove(h.plugin_dir() + "/" + first.endpoint);
  ResourceSnapshot again = h.RequireRegistered("hygon.com/hcu", first.registrations + 1);
  BOOST_TEST(PathExists(h.plugin_dir() + "/" + again.endpoint));
}

BOOST_AUTO_TEST_CASE(sockets_left_by_a_killed_instance_are_removed_by_the_next_one) {
  DaemonHarness h("demo/nodes/k100ai-8.yaml");
  h.Start();
  ResourceSnapshot first = h.RequireRegistered("hygon.com/hcu");
  BOOST_REQUIRE(h.daemon().Signal(SIGKILL));
  BOOST_REQUIRE(h.daemon().WaitForExit(seconds(5)).has_value());
  const std::string stale = h.plugin_dir() + "/" + first.endpoint;
  BOOST_REQUIRE_MESSAGE(PathExists(stale), "a killed daemon leaves its socket behind");

  h.StartDaemon();
  ResourceSnapshot second = h.RequireRegistered("hygon.com/hcu", first.registrations + 1);
  BOOST_TEST(second.endpoint != first.endpoint, "a new instance uses a new socket name");
  BOOST_TEST(!PathExists(stale), stale << " is still there");
  BOOST_TEST(h.PluginSockets().size() == 1u);
}

// A rolling update with surge: a second instance on the same plugin
// directory must leave the first one's live socket alone, and each removes
// only its own sockets when it stops.
BOOST_AUTO_TEST_CASE(a_second_instance_leaves_the_first_ones_live_socket_alone) {
  DaemonHarness h("demo/nodes/k100ai-8.yaml");
  h.Start();
  ResourceSnapshot first = h.RequireRegistered("hygon.com/hcu");
  const std::string first_socket = h.plugin_dir() + "/" + first.endpoint;

  TempDir other;
  std::vector<std::string> argv = h.argv();
  for (std::string& a : argv) {
    if (a.rfind("--host-root=", 0) == 0) a = "--host-root=" + other.Join("root");
  }
  DaemonProcess second;
  BOOST_REQUIRE_EQUAL(second.Start(argv, other.Join("log"), {}, DaemonEnvVars()), "");
  ResourceSnapshot taken_over = h.RequireRegistered("hygon.com/hcu", first.registrations + 1);
  BOOST_TEST(taken_over.endpoint != first.endpoint);
  BOOST_TEST(PathExists(first_socket), "the first instance's socket was removed");

  ExitStatus st = second.Stop(seconds(5));
  BOOST_TEST((st.exited && st.code == 0), st.ToString() << "\n" << second.Log());
  BOOST_TEST(!PathExists(h.plugin_dir() + "/" + taken_over.endpoint));
  BOOST_TEST(PathExists(first_socket), "stopping the second removed the first's socket");
  BOOST_TEST(h.daemon().Running());
}

BOOST_AUTO_TEST_CASE(sigterm_exits_zero_within_five_seconds_and_removes_its_sockets) {
  DaemonHarness h("demo/nodes/z100l-mixed.yaml");
  h.Start();
  h.RequireRegistered("hygon.com/hcu");
  h.RequireRegistered("hygon.com/hcu-share-15c-8g");
  h.RequireRegistered("hygon.com/hcu-share-30c-16g");
  BOOST_REQUIRE(!h.PluginSockets().empty());

  const SteadyClock::time_point signalled = SteadyClock::now();
  BOOST_REQUIRE(h.daemon().Signal(SIGTERM));
  std::optional<ExitStatus> st = h.daemon().WaitForExit(seconds(5));
  BOOST_REQUIRE_MESSAGE(st.has_value(), "still running 5 s after SIGTERM");
  std::cerr << "SIGTERM -> exit: " << MillisSince(signalled) << " ms\n";
  BOOST_TEST(st->exited, st->ToString());
  BOOST_TEST(st->code == 0);
  std::vector<std::string> left = h.PluginSockets();
  BOOST_TEST(left.empty(), "left behind: " << (left.empty() ? "" : left[0]));
  BOOST_TEST(PathExists(h.kubelet().kubelet_socket()), "kubelet.sock is not the daemon's");
}

BOOST_AUTO_TEST_CASE(sigint_also_exits_zero) {
  DaemonHarness h("demo/nodes/k100ai-8.yaml");
  h.Start();
  h.RequireRegistered("hygon.com/hcu");
  BOOST_REQUIRE(h.daemon().Signal(SIGINT));
  std::optional<ExitStatus> st = h.daemon().WaitForExit(seconds(5));
  BOOST_REQUIRE(st.has_value());
  BOOST_TEST(st->exited);
  BOOST_TEST(st->code == 0);
  BOOST_TEST(h.PluginSockets().empty());
}

// --- start-up errors ---

struct BadFlagCase {
  std::string label;
  std::vector<std::string> args;  // after the binary
  std::string flag;               // must be named on stderr
  bool with_valid_base = true;    // prepend a complete valid sim command line
};

std::ostream& operator<<(std::ostream& os, const BadFlagCase& c) { return os << c.label; }

const BadFlagCase kBadFlags[] = {
    {"unknown strategy", {"--strategy=whole"}, "strategy"},
    {"policy out of range", {"--policy=3"}, "policy"},
    {"pulse not a number", {"--pulse=abc"}, "pulse"},
    {"split count below one", {"--device-split-count=0"}, "device-split-count"},
    {"sim backend without a node file", {"--backend=sim"}, "sim-node", false},
    {"unknown log severity", {"--log-severity=debug"}, "log-severity"},
    {"unknown device list strategy",
     {"--device-list-strategy=annotations"},
     "device-list-strategy"},
    {"unknown flag", {"--no-such-flag=1"}, "no-such-flag"},
};

std::vector<std::string> NonEmptyLines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.find_first_not_of(" \t\r") != std::string::npos) lines.push_back(line);
  }
  return lines;
}

BOOST_DATA_TEST_CASE(invalid_flags_exit_2_naming_the_flag_on_one_line,
                     boost::unit_test::data::make(kBadFlags), c) {
  TempDir dir;
  std::vector<std::string> argv = {DaemonBinary()};
  if (c.with_valid_base) {
    WriteFile(dir.Join("node.yaml"), ReadFile(SourcePath("demo/nodes/k100ai-8.yaml")));
    argv.insert(argv.end(), {"--backend=sim", "--sim-node=" + dir.Join("node.yaml"),
                             "--host-root=" + dir.Join("root"),
                             "--device-plugin-path=" + dir.Join("plugins") + "/"});
  } else {
    argv.push_back("--device-plugin-path=" + dir.Join("plugins") + "/");
  }
  argv.insert(argv.end(), c.args.begin(), c.args.end());
  DaemonProcess p;
  BOOST_REQUIRE_EQUAL(p.Start(argv, dir.Join("log"), {}, DaemonEnvVars()), "");
  std::optional<ExitStatus> st = p.WaitForExit(seconds(5));
  BOOST_REQUIRE_MESSAGE(st.has_value(), "still running 5 s after start; output:\n" << p.Log());
  BOOST_TEST(st->exited, st->ToString());
  BOOST_TEST(st->code == 2, st->ToString() << "; output:\n" << p.Log());
  std::vector<std::string> lines = NonEmptyLines(p.Log());
  BOOST_TEST(lines.size() == 1u, "expected one line, got:\n" << p.Log());
  BOOST_TEST(p.Log().find(c.flag) != std::string::npos, "output does not name " << c.flag << ":\n"
                                                                                << p.Log());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp::testing
