// The memory cost of the node agent operations (issue 15): private memory of
// the daemon with metrics, node labels and events all on, next to the same
// daemon with them off, in the same run (fresh pairs, interleaved).
//
// Both daemons run demo/nodes/k100ai-8.yaml (--strategy=mixed, --pulse=0)
// against a fake kubelet. The "on" one has --metrics-address,
// --node-labels=node and --events=true against the fake API server (TLS).
// Both get the same card fault; the "on" one has by then patched its Node,
// created the HCUUnhealthy Event over its kept-alive TLS connection and
// answered one scrape, so every part has done its work once.
//
// Private memory is Private_Dirty of smaps_rollup (what the process alone
// holds and the kernel can only swap: its heap, stacks, written data; the
// DRA bench's measure too), next to Private_Clean + Private_Dirty and
// RssAnon. Private_Clean adds the file pages (libhcudp's code) that no other
// process on the host happens to have touched: reclaimable page cache, and
// what counts as private there depends on the host. Median of the pairs.
// HCUDP_BENCH_KEEP=<dir> keeps each daemon's /proc/<pid>/smaps there, to see
// which mappings the difference is in.
//
//   HCUDP_BENCH_ITERATIONS=5 build/release/test/bench/test_bench_ops_memory
#include <rapidjson/document.h>
#include <unistd.h>

#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <thread>

#include "bench_util.h"
#include "fake_apiserver/fake_apiserver_process.h"
#include "integration/daemon_harness.h"
#include "integration/hami_node.h"
#include "ops_metrics/exposition.h"

namespace hcudp::testing {
namespace {

using hcudp::bench::EnvCount;
using hcudp::bench::ProcKib;

using SteadyClock = std::chrono::steady_clock;

constexpr char kEvents[] = "/apis/events.k8s.io/v1/namespaces/default/events";

int Iterations() { return static_cast<int>(EnvCount("HCUDP_BENCH_ITERATIONS", 3)); }

bool WaitFor(const std::function<bool()>& done, milliseconds timeout = milliseconds(10000)) {
  const auto deadline = SteadyClock::now() + timeout;
  while (!done()) {
    if (SteadyClock::now() >= deadline) return false;
    std::this_thread::sleep_for(milliseconds(20));
  }
  return true;
}

// A field of /proc/<pid>/<file> in KiB ("RssAnon:", "Private_Dirty:").
struct Memory {
  double private_kib = 0;  // Private_Clean + Private_Dirty
  double dirty_kib = 0;
  double anon_kib = 0;
  int threads = 0;
};

Memory Measure(pid_t pid) {
  Memory m;
  m.dirty_kib = ProcKib(pid, "smaps_rollup", "Private_Dirty:");
  m.private_kib = ProcKib(pid, "smaps_rollup", "Private_Clean:") + m.dirty_kib;
  m.anon_kib = ProcKib(pid, "status", "RssAnon:");
  m.threads = static_cast<int>(ProcKib(pid, "status", "Threads:"));
  return m;
}

void Keep(pid_t pid, const std::string& name) {
  const char* keep = std::getenv("HCUDP_BENCH_KEEP");
  if (keep == nullptr || *keep == '\0') return;
  std::ifstream in("/proc/" + std::to_string(pid) + "/smaps");
  std::ofstream out(std::string(keep) + "/" + name + ".smaps");
  out << in.rdbuf();
}

int CountEvents(const FakeApiServer& api, const std::string& reason) {
  rapidjson::Document d;
  const std::string body = api.MustRequest("GET", kEvents);
  d.Parse(body.c_str());
  if (!d.IsObject() || !d.HasMember("items")) return 0;
  int n = 0;
  for (const auto& e : d["items"].GetArray()) {
    n += std::string(e["reason"].GetString()) == reason;
  }
  return n;
}

bool NodeHasOurLabels(const FakeApiServer& api, const std::string& node = "n1") {
  return api.MustRequest("GET", "/api/v1/nodes/" + node).find("hygon.com/hcu.count") !=
         std::string::npos;
}

// HCUDP_BENCH_MODE=hami: both daemons in HAMi mode (each with its own fake
// API server, as the HAMi suite runs them), where the labels and events use
// the mode's API client.
bool HamiMode() {
  const char* env = std::getenv("HCUDP_BENCH_MODE");
  return env != nullptr && std::string(env) == "hami";
}

int MetricsPort(const std::string& log) {
  std::smatch m;
  BOOST_REQUIRE(std::regex_search(log, m, std::regex(R"(metrics on \S+ \(port (\d+)\))")));
  return std::stoi(m[1]);
}

// HCUDP_BENCH_OPS=metrics,labels,events (the default: all three) picks
// what the "on" daemon turns on, to see what each costs.
bool Picked(const std::string& part) {
  const char* env = std::getenv("HCUDP_BENCH_OPS");
  const std::string ops = env != nullptr && *env != '\0' ? env : "metrics,labels,events";
  return ("," + ops + ",").find("," + part + ",") != std::string::npos;
}

std::vector<std::string> OnFlags(const FakeApiServer* api) {
  std::vector<std::string> flags = {"--pulse=0"};
  if (api != nullptr) {
    flags.push_back("--node-name=n1");
    flags.push_back("--kubeconfig=" + api->kubeconfig_path());
  }
  if (Picked("metrics")) flags.push_back("--metrics-address=127.0.0.1:0");
  if (Picked("labels")) flags.push_back("--node-labels=node");
  if (Picked("events")) flags.push_back("--events=true");
  return flags;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

// Brings `h` (the "on" daemon when `on`) to the state measured: registered,
// labels on its Node, one scrape answered, the card fault seen by kubelet
// and, with events, stored as an Event.
void Exercise(DaemonHarness& h, const FakeApiServer& api, const std::string& node, bool on,
              int events_before) {
  const std::string resource = HamiMode() ? kHamiCount : "hygon.com/hcu";
  h.RequireRegistered(resource);
  if (on && Picked("labels")) {
    BOOST_REQUIRE_MESSAGE(WaitFor([&] { return NodeHasOurLabels(api, node); }), h.daemon().Log());
  }
  if (on && Picked("metrics")) {
    const int port = MetricsPort(h.daemon().Log());
    BOOST_REQUIRE(WaitFor([&] {
      auto got = HttpGet(port, "/metrics");
      return got.ok() && got->status == 200;
    }));
  }
  h.SetCardHealth(3, "Unhealthy");
  if (on && Picked("events")) {
    BOOST_REQUIRE_MESSAGE(WaitFor([&] { return CountEvents(api, "HCUUnhealthy") > events_before; }),
                          h.daemon().Log());
  }
  BOOST_REQUIRE(h.kubelet().WaitForDevices(
      resource,
      [](const std::vector<v1beta1::Device>& devices) {
        return std::any_of(devices.begin(), devices.end(),
                           [](const v1beta1::Device& d) { return d.health() == "Unhealthy"; });
      },
      milliseconds(10000)));
}

BOOST_AUTO_TEST_CASE(ops_private_memory, *boost::unit_test::timeout(600)) {
  const int rounds = Iterations();
  std::unique_ptr<FakeApiServer> api;
  if (!HamiMode()) {
    api = std::make_unique<FakeApiServer>();
    api->MustRequest("POST", "/api/v1/nodes", R"({"metadata":{"name":"n1"}})");
  }
  std::vector<double> d_private, d_dirty, d_anon, off_private, on_private;
  for (int round = 0; round < rounds; ++round) {
    std::unique_ptr<HamiNode> hami_off, hami_on;
    std::unique_ptr<DaemonHarness> plain_off, plain_on;
    DaemonHarness* off;
    DaemonHarness* on;
    if (HamiMode()) {
      std::vector<std::string> flags = OnFlags(nullptr);
      hami_off = std::make_unique<HamiNode>(std::vector<std::string>{"--pulse=0"});
      hami_on = std::make_unique<HamiNode>(flags);
      hami_off->Start();
      hami_on->Start();
      off = &hami_off->h();
      on = &hami_on->h();
      Exercise(*off, hami_off->api(), "node1", false, 0);
      Exercise(*on, hami_on->api(), "node1", true, 0);
    } else {
      plain_off = std::make_unique<DaemonHarness>("demo/nodes/k100ai-8.yaml",
                                                  std::vector<std::string>{"--pulse=0"});
      plain_on = std::make_unique<DaemonHarness>("demo/nodes/k100ai-8.yaml", OnFlags(api.get()));
      plain_off->Start();
      plain_on->Start();
      off = plain_off.get();
      on = plain_on.get();
      Exercise(*off, *api, "n1", false, 0);
      // Each round's recorder creates its own Event.
      Exercise(*on, *api, "n1", true, round);
    }
    // Let both settle (a measurement pause, not a wait for an outcome). The
    // sync: smaps counts a mapped file page still dirty in the page cache as
    // Private_Dirty, so a libhcudp.so linked just before the run would count
    // its code pages as dirty memory until the kernel writes them back.
    sync();
    std::this_thread::sleep_for(milliseconds(1000));
    const Memory a = Measure(off->daemon().pid());
    const Memory b = Measure(on->daemon().pid());
    Keep(off->daemon().pid(), "off-" + std::to_string(round));
    Keep(on->daemon().pid(), "on-" + std::to_string(round));
    BOOST_TEST_MESSAGE("round " << round << ": private off " << a.private_kib / 1024 << " MiB, on "
                                << b.private_kib / 1024 << " MiB (+"
                                << (b.private_kib - a.private_kib) / 1024 << "); Private_Dirty +"
                                << (b.dirty_kib - a.dirty_kib) / 1024 << " MiB; RssAnon +"
                                << (b.anon_kib - a.anon_kib) / 1024 << " MiB; threads " << a.threads
                                << " -> " << b.threads);
    d_private.push_back(b.private_kib - a.private_kib);
    d_dirty.push_back(b.dirty_kib - a.dirty_kib);
    d_anon.push_back(b.anon_kib - a.anon_kib);
    off_private.push_back(a.private_kib);
    on_private.push_back(b.private_kib);
  }
  BOOST_TEST_MESSAGE("median of " << rounds << " pairs: private off " << Median(off_private) / 1024
                                  << " MiB, on " << Median(on_private) / 1024 << " MiB, on - off +"
                                  << Median(d_private) / 1024 << " MiB (Private_Dirty +"
                                  << Median(d_dirty) / 1024 << ", RssAnon +"
                                  << Median(d_anon) / 1024 << ")");
  // Loose CTest bounds (the target, 0.5 MiB, is judged on the figures): they
  // catch e.g. a TLS client parsing the whole CA directory (libcurl on GnuTLS
  // did, +11 MiB).
  BOOST_TEST(Median(d_private) / 1024 < 2.0);
  BOOST_TEST(Median(d_dirty) / 1024 < 1.0);
}

}  // namespace hcudp::testing
