// hcu-dp-daemon's /metrics end to end: the real daemon binary behind the fake
// kubelet (and, in HAMi mode, the fake API server), scraped over real HTTP and
// read with a strict exposition-format parser. An Allocate, a health fault and
// a vHCU create must each move their series (DESIGN.md §10, doc/metrics.md).
#include <boost/test/unit_test.hpp>
#include <regex>

#include "integration/hami_node.h"
#include "ops_metrics/scrape.h"

namespace hcudp::testing {
namespace {

// The port the daemon bound (--metrics-address=127.0.0.1:0), from its log,
// once /metrics answers: the daemon calls ServeMetrics after its manager has
// started, which can be after kubelet saw the registration the harness waits
// for (the 404 before that is the readiness probe's "not yet").
int MetricsPort(DaemonHarness& h) {
  BOOST_REQUIRE_MESSAGE(h.daemon().WaitForLog("metrics on", kRegisterTimeout),
                        "no \"metrics on\" line: " << h.daemon().Log());
  const int port = LoggedMetricsPort(h.daemon().Log());
  int last = 0;
  BOOST_REQUIRE_MESSAGE(WaitUntil([&] {
                          auto got = HttpGet(port, "/metrics");
                          last = got.ok() ? got->status : -1;
                          return last == 200;
                        }),
                        "/metrics never answered 200 (last " << last << ")");
  return port;
}

// Scrapes until `done` holds (10 s deadline); returns the last scrape.
Exposition ScrapeUntil(int port, const std::function<bool(const Exposition&)>& done) {
  Exposition last;
  bool ok = WaitUntil([&] {
    last = Scrape(port);
    return done(last);
  });
  BOOST_REQUIRE_MESSAGE(
      ok, "the series never got there; last scrape has " << last.samples.size() << " series");
  return last;
}

double Value(const Exposition& e, const std::string& name,
             const std::map<std::string, std::string>& labels = {}) {
  auto v = e.Get(name, labels);
  BOOST_REQUIRE_MESSAGE(v.has_value(), "no series " << SeriesKey(name, labels));
  return *v;
}

const char kAllocs[] = "hcudp_allocate_requests_total";
const char kTransitions[] = "hcudp_card_health_transitions_total";

BOOST_AUTO_TEST_SUITE(ops_metrics)

BOOST_AUTO_TEST_CASE(an_allocate_a_vhcu_create_and_a_health_fault_move_their_series) {
  HamiNode n({"--metrics-address=127.0.0.1:0", "--pulse=0"});
  n.Start();
  const int port = MetricsPort(n.h());
  const std::string card0 = K100Bdfs()[0];
  const std::string card1 = K100Bdfs()[1];

  Exposition before = ScrapeUntil(port, [](const Exposition& e) {
    return e.Get("hcudp_resource_registered", {{"resource", kHamiCount}}) == 1.0;
  });
  // Every counter known at start is there at 0.
  BOOST_TEST(Value(before, kAllocs, {{"resource", kHamiCount}, {"result", "ok"}}) == 0);
  BOOST_TEST(Value(before, kAllocs, {{"resource", kHamiCount}, {"result", "error"}}) == 0);
  BOOST_TEST(Value(before, "hcudp_vhcu_creates_total", {{"result", "ok"}}) == 0);
  BOOST_TEST(Value(before, "hcudp_vhcu_creates_total", {{"result", "error"}}) == 0);
  BOOST_TEST(Value(before, "hcudp_vhcu_destroys_total", {{"result", "ok"}}) == 0);
  for (const std::string& bdf : K100Bdfs()) {
    BOOST_TEST(Value(before, kTransitions, {{"card", bdf}, {"to", "unhealthy"}}) == 0);
    BOOST_TEST(Value(before, kTransitions, {{"card", bdf}, {"to", "healthy"}}) == 0);
    BOOST_TEST(Value(before, "hcudp_vhcus", {{"card", bdf}}) == 0);
  }
  BOOST_TEST(Value(before, "hcudp_devices", {{"resource", kHamiCount}, {"health", "healthy"}}) ==
             32);
  BOOST_TEST(before.types.at("hcudp_allocate_duration_seconds") == "histogram");
  BOOST_TEST(before.types.at(kAllocs) == "counter");
  // The registration and the pod watch already talked to the API server.
  const double api_before = before.Sum("hcudp_apiserver_requests_total");
  BOOST_TEST(api_before > 0);

  // An Allocate that creates a vHCU on card 0.
  n.SchedulePod({"metrics-pod", {{"main", std::string(kSn0) + ",HCU,8192,30:"}}});
  n.MustAllocate(1);
  Exposition after = ScrapeUntil(port, [&](const Exposition& e) {
    return e.Get("hcudp_vhcus", {{"card", card0}}) == 1.0;
  });
  BOOST_TEST(Value(after, kAllocs, {{"resource", kHamiCount}, {"result", "ok"}}) == 1);
  BOOST_TEST(Value(after, kAllocs, {{"resource", kHamiCount}, {"result", "error"}}) == 0);
  BOOST_TEST(Value(after, "hcudp_allocate_duration_seconds_count", {{"resource", kHamiCount}}) ==
             1);
  BOOST_TEST(Value(after, "hcudp_vhcu_creates_total", {{"result", "ok"}}) == 1);
  BOOST_TEST(Value(after, "hcudp_vhcu_creates_total", {{"result", "error"}}) == 0);
  BOOST_TEST(Value(after, "hcudp_vhcu_create_duration_seconds_count") == 1);
  BOOST_TEST(Value(after, "hcudp_vhcus", {{"card", card1}}) == 0);
  BOOST_TEST(after.Sum("hcudp_apiserver_requests_total", {{"verb", "PATCH"}}) > 0);
  BOOST_TEST(after.Sum("hcudp_apiserver_requests_total") > api_before);

  // A health fault on card 1: its transition, its four hcunum IDs.
  n.h().SetCardHealth(1, "Unhealthy");
  Exposition faulted = ScrapeUntil(port, [&](const Exposition& e) {
    return e.Get(kTransitions, {{"card", card1}, {"to", "unhealthy"}}) == 1.0;
  });
  BOOST_TEST(Value(faulted, kTransitions, {{"card", card0}, {"to", "unhealthy"}}) == 0);
  BOOST_TEST(Value(faulted, kTransitions, {{"card", card1}, {"to", "healthy"}}) == 0);
  for (int i = 0; i < 4; ++i) {
    const std::string id = std::string(kSn1) + "-fake-" + std::to_string(i);
    BOOST_TEST(Value(faulted, "hcudp_device_healthy", {{"device", id}, {"resource", kHamiCount}}) ==
               0);
    const std::string id0 = std::string(kSn0) + "-fake-" + std::to_string(i);
    BOOST_TEST(
        Value(faulted, "hcudp_device_healthy", {{"device", id0}, {"resource", kHamiCount}}) == 1);
  }
  BOOST_TEST(Value(faulted, "hcudp_devices", {{"resource", kHamiCount}, {"health", "unhealthy"}}) ==
             4);

  // And back.
  n.h().SetCardHealth(1, "Healthy");
  ScrapeUntil(port, [&](const Exposition& e) {
    return e.Get(kTransitions, {{"card", card1}, {"to", "healthy"}}) == 1.0 &&
           e.Get("hcudp_devices", {{"resource", kHamiCount}, {"health", "unhealthy"}}) == 0.0;
  });
}

BOOST_AUTO_TEST_CASE(a_refused_allocate_counts_as_an_error_of_its_resource) {
  DaemonHarness h("demo/nodes/z100l-mixed.yaml", {"--metrics-address=127.0.0.1:0"});
  h.Start();
  const int port = MetricsPort(h);
  h.RequireRegistered("hygon.com/hcu");
  Exposition e = ScrapeUntil(port, [](const Exposition& x) {
    return x.Get("hcudp_resource_registered", {{"resource", "hygon.com/hcu"}}) == 1.0;
  });
  // Each registered resource has both results at 0.
  for (const auto& [key, value] : e.samples) {
    if (key.rfind("hcudp_resource_registered{", 0) != 0) continue;
    const std::string resource = key.substr(key.find('"') + 1, key.rfind('"') - key.find('"') - 1);
    BOOST_TEST(Value(e, kAllocs, {{"resource", resource}, {"result", "ok"}}) == 0);
    BOOST_TEST(Value(e, kAllocs, {{"resource", resource}, {"result", "error"}}) == 0);
  }

  v1beta1::AllocateResponse response;
  grpc::Status s = h.kubelet().Allocate("hygon.com/hcu", {{"0000:99:00.0"}}, &response);
  BOOST_REQUIRE(!s.ok());
  AllocateOne(h, "hygon.com/hcu", {"0000:0b:00.0"});
  Exposition after = Scrape(port);
  BOOST_TEST(Value(after, kAllocs, {{"resource", "hygon.com/hcu"}, {"result", "error"}}) == 1);
  BOOST_TEST(Value(after, kAllocs, {{"resource", "hygon.com/hcu"}, {"result", "ok"}}) == 1);
  BOOST_TEST(
      Value(after, "hcudp_allocate_duration_seconds_count", {{"resource", "hygon.com/hcu"}}) == 2);
}

BOOST_AUTO_TEST_CASE(a_port_in_use_is_one_line_and_exit_2) {
  // Another daemon holds the port.
  DaemonHarness first("demo/nodes/k100ai-8.yaml", {"--metrics-address=127.0.0.1:0"});
  first.Start();
  const int port = MetricsPort(first);
  TempDir dir;
  RunResult r =
      Run({DaemonBinary(), "--backend=sim", "--sim-node=" + SourcePath("demo/nodes/k100ai-8.yaml"),
           "--host-root=" + dir.Join("root"), "--device-plugin-path=" + dir.Join("plugins"),
           "--metrics-address=127.0.0.1:" + std::to_string(port)});
  BOOST_TEST(r.exit_code == 2);
  BOOST_TEST(r.err.find("hcu-dp-daemon: --metrics-address 127.0.0.1:" + std::to_string(port)) == 0u,
             r.err);
  BOOST_TEST(std::count(r.err.begin(), r.err.end(), '\n') == 1, r.err);
  // The first daemon still serves.
  BOOST_TEST(Scrape(port).samples.size() > 0u);
}

// Issue 31: a host name that does not resolve (a minimal root has no
// /etc/hosts: not even localhost) is one line naming the flag and saying so,
// exit 2.
BOOST_AUTO_TEST_CASE(a_host_name_that_does_not_resolve_is_one_line_and_exit_2) {
  TempDir dir;
  RunResult r =
      Run({DaemonBinary(), "--backend=sim", "--sim-node=" + SourcePath("demo/nodes/k100ai-8.yaml"),
           "--host-root=" + dir.Join("root"), "--device-plugin-path=" + dir.Join("plugins"),
           "--metrics-address=no-such-host.invalid:9400"});
  BOOST_TEST(r.exit_code == 2);
  BOOST_TEST(r.err.find("hcu-dp-daemon: --metrics-address no-such-host.invalid:9400: host name "
                        "\"no-such-host.invalid\" did not resolve") == 0u,
             r.err);
  BOOST_TEST(std::count(r.err.begin(), r.err.end(), '\n') == 1, r.err);
}

BOOST_AUTO_TEST_CASE(a_bad_address_is_refused_before_anything_starts) {
  for (const std::string bad : {"9400", "host:port", ":99999", "[::1:9400", "a b:1"}) {
    RunResult r = Run({DaemonBinary(), "--metrics-address=" + bad});
    BOOST_TEST(r.exit_code == 2, bad);
    BOOST_TEST(r.err.find("--metrics-address") != std::string::npos, r.err);
  }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp::testing
