// hcu-dp-daemon --strategy=dra, end to end on the simulated probe-order
// K100_AI node against the fake API server on loopback (issue 14 targets):
//   1. start -> slices published (all 9 devices listed by the API), next to
//      the floor: a device-plugin daemon's start -> first ListAndWatch list
//      (the same fork, flags, discovery and node watcher);
//   2. a health change (node file edited, --pulse=0) -> the taint visible in
//      the API and Unhealthy on kubelet's health stream, next to the floor:
//      the same edit -> the device Unhealthy in ListAndWatch;
//   3. private memory (RssAnon, and anonymous Private_Dirty of smaps) of the DRA
//      daemon after start and after N prepare/unprepare rounds, next to a
//      --strategy=mixed daemon on the same node after start and N Allocates.
// Both daemons run with the image's malloc settings: GLIBC_TUNABLES as the
// Dockerfile's ENV sets it (the runner's own value is not passed on), so the
// figures are those of what ships; HCUDP_BENCH_GLIBC_TUNABLES=<value>
// replaces it for trying another setting (printed with the figures).
// Iterations: HCUDP_BENCH_ITERATIONS (default 5). HCUDP_BENCH_SMAPS_DIR=<dir>
// keeps both daemons' smaps and threads after start and after the rounds.
//   HCUDP_BENCH_ITERATIONS=20 build/release/test/bench/test_bench_dra_daemon
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "bench_util.h"
#include "dra_daemon/dra_daemon_node.h"
#include "dra_prepare/prepare_fixture.h"
#include "image_env.h"

namespace hcudp::testing {
namespace {

using hcudp::bench::DaemonMallocEnv;
using hcudp::bench::EnvCount;
using hcudp::bench::PrivateAnonKib;
using hcudp::bench::ProcKib;

using Steady = std::chrono::steady_clock;

double Ms(Steady::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}
double Max(const std::vector<double>& v) {
  return v.empty() ? 0 : *std::max_element(v.begin(), v.end());
}

int Iterations() { return static_cast<int>(EnvCount("HCUDP_BENCH_ITERATIONS", 5)); }

// HCUDP_BENCH_SMAPS_DIR: <dir>/<name>.smaps (mapping by mapping) and
// <dir>/<name>.threads (each thread's name and /proc/<pid>/task/<tid>/syscall,
// whose stack pointer tells which anonymous map is its stack).
void KeepSmaps(pid_t pid, const std::string& dir, const std::string& name) {
  const std::string proc = "/proc/" + std::to_string(pid);
  const std::string cmd = "cp " + proc + "/smaps " + dir + "/" + name + ".smaps; for t in " + proc +
                          "/task/*; do echo \"$(cat $t/comm) $(cat $t/syscall)\"; done > " + dir +
                          "/" + name + ".threads";
  if (std::system(cmd.c_str()) != 0) std::fprintf(stderr, "could not keep %s\n", name.c_str());
}

bool Tainted(DraDaemonNode& n, const std::string& device, bool want) {
  for (const SliceDevice& d : n.Devices()) {
    if (d.name == device) return d.tainted == want;
  }
  return false;
}

bool StreamHealth(DraDaemonNode& n, const std::string& device, int want) {
  auto s = n.kubelet().State();
  auto h = s.health.find(kDraDriver);
  const std::string key = std::string(kDraNode) + "/" + device;
  return h != s.health.end() && h->second.devices.count(key) && h->second.devices.at(key) == want;
}

}  // namespace

BOOST_AUTO_TEST_CASE(dra_daemon_start_health_and_memory, *boost::unit_test::timeout(300)) {
  const int n_iter = Iterations();
  const std::string node = "demo/nodes/k100ai-8-probe-order.yaml";
  const std::vector<std::string> env = {DaemonMallocEnv()};
  DraDaemonNode n(node, {"--pulse=0"}, env);
  n.Start();
  n.RequireDevices([](const auto& d) { return d.size() == 9; }, seconds(5), "9 devices");
  DaemonHarness dp(node, {"--strategy=mixed", "--pulse=0"}, env);
  dp.Start();
  dp.RequireRegistered("hygon.com/hcu");

  // 1. Start -> slices published, next to start -> first device-plugin list.
  std::vector<double> start_ms, floor_start_ms;
  for (int i = 0; i < n_iter; ++i) {
    n.StopDaemon();
    n.api().Request("DELETE",
                    "/apis/resource.k8s.io/v1/resourceslices?fieldSelector=spec.nodeName%3D" +
                        std::string(kDraNode));
    BOOST_REQUIRE(n.Devices().empty());
    auto t0 = Steady::now();
    n.StartDaemon();
    BOOST_REQUIRE(PollUntil([&] { return n.Devices().size() == 9; }, seconds(5)));
    start_ms.push_back(Ms(Steady::now() - t0));
    n.RequireRegistrations(2 + i);

    dp.daemon().Stop(seconds(5));
    t0 = Steady::now();
    dp.StartDaemon();
    dp.RequireRegistered("hygon.com/hcu", 2 + i);
    floor_start_ms.push_back(Ms(Steady::now() - t0));
  }

  // Memory after start (the last restart above), before any call.
  const double dra_anon_start = ProcKib(n.h().daemon().pid(), "status", "RssAnon:");
  const double dra_private_start = PrivateAnonKib(n.h().daemon().pid());
  const double dp_anon_start = ProcKib(dp.daemon().pid(), "status", "RssAnon:");
  const double dp_private_start = PrivateAnonKib(dp.daemon().pid());
  if (const char* keep = std::getenv("HCUDP_BENCH_SMAPS_DIR")) {
    // For a look at where private memory goes (mapping by mapping).
    KeepSmaps(n.h().daemon().pid(), keep, "dra");
    KeepSmaps(dp.daemon().pid(), keep, "dp");
  }

  // 2. Health -> taint and health stream, next to health -> ListAndWatch.
  AllocatedClaim whole = n.CreateAllocatedClaim("whole", ExactRequest("hcu"));
  n.MustPrepare(whole);
  const std::string card1 = whole.devices[0];  // hcu-0000-09-00-0, index 1
  // Held whole, card 1 leaves the pool (the one offer rule, issue 28): the
  // taint is timed on the free card 0, failing at the same moment, and the
  // health stream on the held card 1, as dra_daemon_test does.
  const std::string card0 = "hcu-0000-69-00-0";  // index 0
  BOOST_REQUIRE(PollUntil([&] { return StreamHealth(n, card1, 1); }, seconds(3)));
  std::vector<double> taint_ms, stream_ms, floor_health_ms;
  for (int i = 0; i < n_iter; ++i) {
    for (const char* health : {"Unhealthy", "Healthy"}) {
      const bool bad = std::string(health) == "Unhealthy";
      auto t0 = Steady::now();
      n.h().SetCardHealth(1, health);
      n.h().SetCardHealth(0, health);
      bool stream_seen = false;
      BOOST_REQUIRE(PollUntil(
          [&] {
            if (!stream_seen && StreamHealth(n, card1, bad ? 2 : 1)) {
              stream_seen = true;
              stream_ms.push_back(Ms(Steady::now() - t0));
            }
            return Tainted(n, card0, bad);
          },
          seconds(5)));
      taint_ms.push_back(Ms(Steady::now() - t0));
      BOOST_REQUIRE(PollUntil([&] { return StreamHealth(n, card1, bad ? 2 : 1); }, seconds(5)));
      if (!stream_seen) stream_ms.push_back(Ms(Steady::now() - t0));

      t0 = Steady::now();
      dp.SetCardHealth(1, health);
      auto snap = dp.kubelet().WaitForDevices(
          "hygon.com/hcu",
          [&](const std::vector<v1beta1::Device>& devices) {
            for (const auto& d : devices) {
              if (d.id() == "0000:09:00.0") return d.health() == health;
            }
            return false;
          },
          seconds(5));
      BOOST_REQUIRE(snap.has_value());
      floor_health_ms.push_back(Ms(Steady::now() - t0));
    }
  }

  // 3. Memory after prepare/unprepare rounds, next to the device-plugin mode.
  for (int i = 0; i < 10 * n_iter; ++i) {
    AllocatedClaim c = n.CreateAllocatedClaim(
        "mem-" + std::to_string(i), ExactRequest("hcu", R"({"cores":"20","memory":"4Gi"})"));
    n.MustPrepare(c);
    n.MustUnprepare(c);
    n.DeleteClaim(c);
    // The device-plugin daemon gets as many calls: an Allocate of a card.
    v1beta1::AllocateResponse response;
    grpc::Status st = dp.kubelet().Allocate("hygon.com/hcu", {{"0000:29:00.0"}}, &response);
    BOOST_REQUIRE_MESSAGE(st.ok(), st.error_message());
  }
  const pid_t dra_pid = n.h().daemon().pid();
  const pid_t dp_pid = dp.daemon().pid();
  const double dra_anon = ProcKib(dra_pid, "status", "RssAnon:");
  const double dp_anon = ProcKib(dp_pid, "status", "RssAnon:");
  const double dra_private = PrivateAnonKib(dra_pid);
  const double dp_private = PrivateAnonKib(dp_pid);
  if (const char* keep = std::getenv("HCUDP_BENCH_SMAPS_DIR")) {
    KeepSmaps(dra_pid, keep, "dra-end");
    KeepSmaps(dp_pid, keep, "dp-end");
  }
  const double dra_rss = ProcKib(dra_pid, "status", "VmRSS:");
  const double dp_rss = ProcKib(dp_pid, "status", "VmRSS:");

  std::printf(
      "DRA daemon on %s, %d iterations, both daemons with %s:\n"
      "  start -> 9 devices in the API        median %.1f ms  max %.1f ms (target <= 200)\n"
      "  floor: start -> first ListAndWatch   median %.1f ms  max %.1f ms\n"
      "  health edit -> taint in the API      median %.0f ms  max %.0f ms (target <= 2000)\n"
      "  health edit -> health stream         median %.0f ms  max %.0f ms (target <= 2000)\n"
      "  floor: health edit -> ListAndWatch   median %.0f ms  max %.0f ms\n"
      "  after start:     DRA RssAnon %.2f MiB  private %.2f MiB | device plugin RssAnon %.2f "
      "MiB  private %.2f MiB | DRA - device plugin: private %+.2f MiB (target within 1 MiB)\n"
      "  after %d calls (DRA: prepare+unprepare of a vHCU; device plugin: Allocate):\n"
      "  DRA mode        VmRSS %.1f MiB  RssAnon %.2f MiB  private %.2f MiB\n"
      "  device plugin   VmRSS %.1f MiB  RssAnon %.2f MiB  private %.2f MiB\n"
      "  DRA - device plugin: RssAnon %+.2f MiB, private %+.2f MiB (target within 1 MiB)\n",
      node.c_str(), n_iter, env[0].c_str(), Median(start_ms), Max(start_ms), Median(floor_start_ms),
      Max(floor_start_ms), Median(taint_ms), Max(taint_ms), Median(stream_ms), Max(stream_ms),
      Median(floor_health_ms), Max(floor_health_ms), dra_anon_start / 1024,
      dra_private_start / 1024, dp_anon_start / 1024, dp_private_start / 1024,
      (dra_private_start - dp_private_start) / 1024, 10 * n_iter, dra_rss / 1024, dra_anon / 1024,
      dra_private / 1024, dp_rss / 1024, dp_anon / 1024, dp_private / 1024,
      (dra_anon - dp_anon) / 1024, (dra_private - dp_private) / 1024);
  // Loose CTest bounds (a shared VM); the figures are the output.
  BOOST_TEST(Median(start_ms) < 2000);
  BOOST_TEST(Max(taint_ms) < 2000);
  BOOST_TEST(Max(stream_ms) < 2000);
  n.MustUnprepare(whole);
}

}  // namespace hcudp::testing
