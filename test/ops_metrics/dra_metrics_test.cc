// hcu-dp-daemon --strategy=dra --metrics-address end to end: the real binary
// behind the fake kubelet's plugin watcher and the fake API server, scraped
// over real HTTP and read with the strict exposition parser. /metrics (the
// chart's readiness probe) answers only once kubelet has registered the DRA
// plugin; a NodePrepareResources / NodeUnprepareResources moves the DRA
// series, each claim counted by its result; the DRA client's API requests
// are counted (DESIGN.md §10, doc/metrics.md).
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <regex>

#include "dra_daemon/dra_daemon_node.h"
#include "dra_prepare/prepare_fixture.h"
#include "ops_metrics/scrape.h"

namespace hcudp::testing {
namespace {

constexpr char kPrepares[] = "hcudp_dra_prepare_requests_total";
constexpr char kUnprepares[] = "hcudp_dra_unprepare_requests_total";
constexpr char kPrepareSeconds[] = "hcudp_dra_prepare_duration_seconds_count";
constexpr char kUnprepareSeconds[] = "hcudp_dra_unprepare_duration_seconds_count";
constexpr char kApi[] = "hcudp_apiserver_requests_total";

int MetricsPort(DaemonHarness& h) {
  BOOST_REQUIRE_MESSAGE(h.daemon().WaitForLog("metrics on", seconds(10)),
                        "no \"metrics on\" line: " << h.daemon().Log());
  return LoggedMetricsPort(h.daemon().Log());
}

double Value(const Exposition& e, const std::string& name,
             const std::map<std::string, std::string>& labels = {}) {
  auto v = e.Get(name, labels);
  BOOST_REQUIRE_MESSAGE(v.has_value(), "no series " << SeriesKey(name, labels));
  return *v;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(ops_metrics_dra)

BOOST_AUTO_TEST_CASE(ready_once_registered_and_prepare_moves_the_dra_series,
                     *boost::unit_test::timeout(90)) {
  DraDaemonNode n(kProbeOrder, {"--metrics-address=127.0.0.1:0", "--pulse=0"});
  // The daemon alone: it serves its DRA sockets, but no kubelet has
  // registered it, so the readiness probe's GET must not succeed yet.
  n.StartDaemon();
  const int port = MetricsPort(n.h());
  BOOST_REQUIRE_MESSAGE(n.h().daemon().WaitForLog("DRA: serving", seconds(10)),
                        n.h().daemon().Log());
  auto early = HttpGet(port, "/metrics");
  BOOST_REQUIRE_MESSAGE(early.ok(), early.status().ToString());
  BOOST_TEST(early->status == 404);

  // kubelet starts, finds the registration socket and registers the driver:
  // /metrics answers, with the driver registered and every DRA series at 0.
  BOOST_REQUIRE_EQUAL(n.kubelet().Start(), "");
  n.RequireRegistrations(1);
  Exposition before;
  BOOST_REQUIRE(PollUntil(
      [&] {
        auto got = HttpGet(port, "/metrics");
        if (!got.ok() || got->status != 200) return false;
        before = Scrape(port);
        auto reg = before.Get("hcudp_resource_registered", {{"resource", kDraDriver}});
        return reg.has_value() && *reg == 1;
      },
      milliseconds(10000)));
  BOOST_TEST(before.types.at(kPrepares) == "counter");
  BOOST_TEST(Value(before, kPrepares, {{"result", "ok"}}) == 0);
  BOOST_TEST(Value(before, kPrepares, {{"result", "error"}}) == 0);
  BOOST_TEST(Value(before, kUnprepares, {{"result", "ok"}}) == 0);
  BOOST_TEST(Value(before, kPrepareSeconds) == 0);
  // The DRA client's requests so far (the Node GET, the slice sync).
  BOOST_TEST(before.Sum(kApi, {{"verb", "GET"}}) >= 1);

  // One claim prepared (then again: idempotent, a second successful call),
  // one claim whose object is gone from the API server (an error), and one
  // unprepare.
  n.RequireDevices([](const auto& d) { return d.size() == 9; }, seconds(5), "9 devices");
  AllocatedClaim whole = n.CreateAllocatedClaim("whole", ExactRequest("hcu"));
  n.MustPrepare(whole);
  n.MustPrepare(whole);
  AllocatedClaim gone = n.CreateAllocatedClaim("gone", ExactRequest("hcu"));
  n.DeleteClaim(gone);
  CallOutcome failed = n.Prepare({gone});
  n.MustUnprepare(whole);

  Exposition after = Scrape(port);
  BOOST_TEST(Value(after, kPrepares, {{"result", "ok"}}) == 2);
  // The claim is gone: the call or the claim's answer says so.
  const auto& answers = failed.prepare.claims();
  BOOST_TEST((!failed.status.ok() ||
              (answers.count(gone.uid) > 0 && !answers.at(gone.uid).error().empty())));
  BOOST_TEST(Value(after, kPrepares, {{"result", "error"}}) == 1);
  BOOST_TEST(Value(after, kPrepareSeconds) == 3);
  BOOST_TEST(Value(after, kUnprepares, {{"result", "ok"}}) == 1);
  BOOST_TEST(Value(after, kUnprepareSeconds) == 1);
  // A first Prepare GETs its claim: at least two more GETs answered (one 404).
  BOOST_TEST(after.Sum(kApi, {{"verb", "GET"}}) >= before.Sum(kApi, {{"verb", "GET"}}) + 2);
  n.StopDaemon();
}

// Issue 25: in DRA mode hcudp_devices and hcudp_device_healthy were empty
// (no device-plugin resources). They list the devices the slices publish,
// under the driver's name, and follow a card's health like the taint does.
BOOST_AUTO_TEST_CASE(per_device_health_series_follow_the_published_pool,
                     *boost::unit_test::timeout(90)) {
  DraDaemonNode n(kProbeOrder, {"--metrics-address=127.0.0.1:0", "--pulse=0"});
  n.Start();
  const int port = MetricsPort(n.h());
  const std::vector<SliceDevice> published =
      n.RequireDevices([](const auto& d) { return d.size() == 9; }, seconds(5), "9 devices");
  const std::map<std::string, std::string> driver = {{"resource", kDraDriver}};
  Exposition e;
  BOOST_REQUIRE(PollUntil(
      [&] {
        auto got = HttpGet(port, "/metrics");
        if (!got.ok() || got->status != 200) return false;
        e = Scrape(port);
        return e.Get("hcudp_devices", {{"health", "healthy"}, {"resource", kDraDriver}}) == 9.0;
      },
      milliseconds(10000)));
  BOOST_TEST(Value(e, "hcudp_devices", {{"health", "unhealthy"}, {"resource", kDraDriver}}) == 0);
  BOOST_TEST(e.Count("hcudp_device_healthy") == published.size());
  for (const SliceDevice& d : published) {
    BOOST_TEST(Value(e, "hcudp_device_healthy", {{"device", d.name}, {"resource", kDraDriver}}) ==
               1);
  }

  // Card 1 fails: its device is tainted in the slices and 0 here.
  n.h().SetCardHealth(1, "Unhealthy");
  const std::vector<SliceDevice> faulted = n.RequireDevices(
      [](const auto& d) {
        return std::any_of(d.begin(), d.end(), [](const SliceDevice& x) { return x.tainted; });
      },
      seconds(5), "a tainted device");
  BOOST_REQUIRE(PollUntil(
      [&] {
        e = Scrape(port);
        return e.Get("hcudp_devices", {{"health", "unhealthy"}, {"resource", kDraDriver}}) > 0.0;
      },
      milliseconds(5000)));
  for (const SliceDevice& d : faulted) {
    BOOST_TEST(Value(e, "hcudp_device_healthy", {{"device", d.name}, {"resource", kDraDriver}}) ==
                   (d.tainted ? 0 : 1),
               d.name);
  }
  n.StopDaemon();
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace hcudp::testing
