// DaemonMetrics in process (hcu-dp-daemon/metrics.h): the address grammar,
// /metrics answering 404 until the daemon serves and 200 after, transitions
// counted once per change, and the Backend decorator counting vHCU creates
// and destroys by result. The daemon end to end is metrics_test.cc.
#define BOOST_TEST_MODULE ops_metrics_unit
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <fstream>
#include <thread>

#include "hcudp/dra/slices.h"
#include "metrics.h"
#include "metrics_server.h"
#include "ops_metrics/exposition.h"

namespace hcudp::daemon {
namespace {

using testing::Exposition;
using testing::HttpGet;
using testing::ParseExposition;

// The series' value; -1 when it is absent.
double V(const Exposition& e, const std::string& name,
         const std::map<std::string, std::string>& labels = {}) {
  return e.Get(name, labels).value_or(-1.0);
}

Exposition MustScrape(int port) {
  auto got = HttpGet(port, "/metrics");
  BOOST_REQUIRE_MESSAGE(got.ok(), got.status().ToString());
  BOOST_REQUIRE_EQUAL(got->status, 200);
  auto parsed = ParseExposition(got->body);
  BOOST_REQUIRE_MESSAGE(parsed.ok(), parsed.status().ToString());
  return *parsed;
}

NodeInventory TwoCards(Health second) {
  NodeInventory inv;
  for (int i = 0; i < 2; ++i) {
    Card c;
    c.index = i;
    c.bdf = i == 0 ? "0000:09:00.0" : "0000:29:00.0";
    c.health = i == 1 ? second : Health::kHealthy;
    inv.cards.push_back(c);
  }
  return inv;
}

std::vector<Resource> WholeCards(const NodeInventory& inv) {
  Resource r;
  r.name = "hygon.com/hcu";
  for (const Card& c : inv.cards) {
    ResourceDevice d;
    d.id = c.bdf;
    d.card = c.index;
    d.health = c.health;
    r.devices.push_back(d);
  }
  return {r};
}

// Creates fail when told; destroys of id 7 fail; everything else succeeds.
class ScriptedBackend final : public Backend {
 public:
  StatusOr<NodeInventory> Discover() override { return inventory; }
  StatusOr<std::vector<CardHealthReport>> QueryHealth() override {
    return std::vector<CardHealthReport>{};
  }
  StatusOr<Vhcu> CreateVhcu(int card, int, uint64_t) override {
    if (fail_create) return UnavailableError("busy");
    Vhcu v;
    v.card = card;
    v.card_bdf = inventory.cards[static_cast<size_t>(card)].bdf;
    v.id = static_cast<int>(inventory.vhcus.size());
    inventory.vhcus.push_back(v);
    return v;
  }
  Status DestroyVhcu(int id) override {
    return id == 7 ? UnavailableError("device busy") : OkStatus();
  }
  const std::string& host_root() const override { return root_; }
  std::vector<std::string> WatchPaths() const override { return {}; }

  NodeInventory inventory = TwoCards(Health::kHealthy);
  bool fail_create = false;

 private:
  std::string root_ = "/";
};

BOOST_AUTO_TEST_SUITE(metrics_unit)

BOOST_AUTO_TEST_CASE(addresses_become_civetweb_listen_specs_or_one_line_errors) {
  BOOST_TEST(*CivetListenSpec(":9400") == "9400");
  BOOST_TEST(*CivetListenSpec("0.0.0.0:9400") == "9400");
  BOOST_TEST(*CivetListenSpec("127.0.0.1:9400") == "127.0.0.1:9400");
  BOOST_TEST(*CivetListenSpec("[::1]:9400") == "[::1]:9400");
  BOOST_TEST(*CivetListenSpec("node-1:0") == "node-1:0");
  for (const char* bad : {"", "9400", ":", ":http", ":65536", "[::1:9400", "a b:1", "h:1,2:3"}) {
    auto r = CivetListenSpec(bad);
    BOOST_TEST(!r.ok(), bad);
    if (!r.ok()) {
      BOOST_TEST(r.status().message().rfind("--metrics-address", 0) == 0u, r.status().message());
      BOOST_TEST(r.status().message().find('\n') == std::string::npos);
    }
  }
}

BOOST_AUTO_TEST_CASE(metrics_answer_404_until_served_then_every_counter_starts_at_zero) {
  NodeState state;
  Options options;
  auto m = DaemonMetrics::Start("127.0.0.1:0", options, state);
  BOOST_REQUIRE_MESSAGE(m.ok(), m.status().ToString());
  const int port = (*m)->port();
  BOOST_REQUIRE(port > 0);
  auto before = HttpGet(port, "/metrics");
  BOOST_REQUIRE(before.ok());
  BOOST_TEST(before->status == 404);

  NodeInventory inv = TwoCards(Health::kHealthy);
  state.Publish(inv, WholeCards(inv));
  (*m)->OnPublish(*state.Current());
  (*m)->ServeMetrics([] {
    return std::vector<std::pair<std::string, bool>>{{"hygon.com/hcu", true}};
  });
  Exposition e = MustScrape(port);
  BOOST_TEST(V(e, "hcudp_resource_registered", {{"resource", "hygon.com/hcu"}}) == 1.0);
  for (const char* result : {"ok", "error"}) {
    BOOST_TEST(V(e, "hcudp_allocate_requests_total",
                 {{"resource", "hygon.com/hcu"}, {"result", result}}) == 0.0);
    BOOST_TEST(V(e, "hcudp_vhcu_creates_total", {{"result", result}}) == 0.0);
  }
  for (const char* to : {"healthy", "unhealthy"}) {
    BOOST_TEST(
        V(e, "hcudp_card_health_transitions_total", {{"card", "0000:29:00.0"}, {"to", to}}) == 0.0);
  }
  BOOST_TEST(e.types.at("hcudp_build_info") == "gauge");
  BOOST_TEST(!e.Get("hcudp_dra_prepare_requests_total", {{"result", "ok"}}).has_value());
  (*m)->EnableDra();
  (*m)->EnableDra();  // once
  (*m)->ObservePrepare(false, std::chrono::milliseconds(3));
  e = MustScrape(port);
  BOOST_TEST(V(e, "hcudp_dra_prepare_requests_total", {{"result", "error"}}) == 1.0);
  BOOST_TEST(V(e, "hcudp_dra_prepare_requests_total", {{"result", "ok"}}) == 0.0);
  BOOST_TEST(V(e, "hcudp_dra_unprepare_requests_total", {{"result", "ok"}}) == 0.0);
}

// ServeMetrics acts once (kubelet re-registers a DRA plugin after every
// restart); StopServing drops the node's series, so a scrape during shutdown
// no longer calls into what `registrations` reads.
// The threads of this process, by name (/proc/self/task/*/comm).
std::vector<std::string> ThreadNames() {
  std::vector<std::string> names;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream in(task.path() / "comm");
    std::string name;
    std::getline(in, name);
    names.push_back(name);
  }
  return names;
}

// The metrics server runs civetweb's master, which accepts, and its
// kWorkers workers (issue 25: enough for slow clients), nothing else.
BOOST_AUTO_TEST_CASE(the_server_runs_its_workers_and_one_more_thread) {
  const size_t before = ThreadNames().size();
  NodeState state;
  Options options;
  auto m = DaemonMetrics::Start("127.0.0.1:0", options, state);
  BOOST_REQUIRE_MESSAGE(m.ok(), m.status().ToString());
  (*m)->ServeMetrics([] { return std::vector<std::pair<std::string, bool>>{}; });
  // A scrape: the worker exists and has answered.
  BOOST_REQUIRE_EQUAL(HttpGet((*m)->port(), "/metrics")->status, 200);
  const std::vector<std::string> names = ThreadNames();
  std::string all;
  for (const std::string& n : names) all += n + " ";
  BOOST_TEST(names.size() - before <= static_cast<size_t>(MetricsServer::kWorkers) + 1, all);
}

// Issue 25: the text format's version in the Content-Type, and only the
// daemon's own hcudp_ families (prometheus-cpp's Exposer added exposer_*:
// a summary in microseconds with NaN quantiles). Other paths and methods
// are answered, not served the metrics.
BOOST_AUTO_TEST_CASE(the_exposition_is_version_0_0_4_with_only_hcudp_families) {
  NodeState state;
  Options options;
  auto m = DaemonMetrics::Start("127.0.0.1:0", options, state);
  BOOST_REQUIRE_MESSAGE(m.ok(), m.status().ToString());
  (*m)->ServeMetrics([] { return std::vector<std::pair<std::string, bool>>{{"r", true}}; });
  for (int i = 0; i < 2; ++i) {  // the second scrape would show the first one's exposer_*
    auto got = HttpGet((*m)->port(), "/metrics");
    BOOST_REQUIRE(got.ok());
    BOOST_TEST(got->status == 200);
    BOOST_TEST(got->content_type == "text/plain; version=0.0.4; charset=utf-8");
    auto parsed = ParseExposition(got->body);
    BOOST_REQUIRE_MESSAGE(parsed.ok(), parsed.status().ToString());
    BOOST_TEST(!parsed->types.empty());
    for (const auto& [family, type] : parsed->types) {
      BOOST_TEST(family.rfind("hcudp_", 0) == 0u, family);
    }
    BOOST_TEST(got->body.find("exposer_") == std::string::npos);
  }
  auto other = HttpGet((*m)->port(), "/metrics/x");
  BOOST_REQUIRE(other.ok());
  BOOST_TEST(other->status == 404);
  other = HttpGet((*m)->port(), "/");
  BOOST_REQUIRE(other.ok());
  BOOST_TEST(other->status == 404);
}

// The pool's devices and their health, as DraAgent gives them (on_pool).
std::vector<std::pair<std::string, bool>> PoolOf(const NodeInventory& inv) {
  ::hcudp::dra::SliceParams params;
  params.node_name = "node-1";
  auto plan = ::hcudp::dra::BuildPoolPlan(inv, params);
  BOOST_REQUIRE(plan.ok());
  std::vector<std::pair<std::string, bool>> out;
  for (const ::hcudp::dra::PoolDevice& d : plan->devices) out.emplace_back(d.name, !d.tainted);
  return out;
}

// DRA mode lists no device-plugin resources: hcudp_devices and
// hcudp_device_healthy follow the pool the slices publish, under the
// driver's name (issue 25: they were empty there).
BOOST_AUTO_TEST_CASE(dra_devices_are_the_pools_with_their_cards_health) {
  NodeState state;
  Options options;
  options.strategy = Strategy::kDra;
  options.node_name = "node-1";
  auto m = DaemonMetrics::Start("127.0.0.1:0", options, state);
  BOOST_REQUIRE_MESSAGE(m.ok(), m.status().ToString());
  (*m)->ServeMetrics([] {
    return std::vector<std::pair<std::string, bool>>{{"dra.hygon.com", true}};
  });
  NodeInventory inv = TwoCards(Health::kUnhealthy);
  Vhcu v;
  v.id = 3;
  v.card = 1;
  v.card_bdf = "0000:29:00.0";
  inv.vhcus.push_back(v);
  (*m)->OnDraPool(PoolOf(inv));
  Exposition e = MustScrape((*m)->port());
  // Card 0 whole; card 1 carries a vHCU, so its vHCU is the device.
  BOOST_TEST(V(e, "hcudp_device_healthy",
               {{"device", "hcu-0000-09-00-0"}, {"resource", "dra.hygon.com"}}) == 1.0);
  BOOST_TEST(V(e, "hcudp_device_healthy",
               {{"device", "hcu-0000-29-00-0-vdev3"}, {"resource", "dra.hygon.com"}}) == 0.0);
  BOOST_TEST(e.Count("hcudp_device_healthy") == 2u);
  BOOST_TEST(V(e, "hcudp_devices", {{"health", "healthy"}, {"resource", "dra.hygon.com"}}) == 1.0);
  BOOST_TEST(V(e, "hcudp_devices", {{"health", "unhealthy"}, {"resource", "dra.hygon.com"}}) ==
             1.0);

  (*m)->OnDraPool(PoolOf(TwoCards(Health::kHealthy)));
  e = MustScrape((*m)->port());
  BOOST_TEST(e.Count("hcudp_device_healthy") == 2u);
  BOOST_TEST(V(e, "hcudp_devices", {{"health", "healthy"}, {"resource", "dra.hygon.com"}}) == 2.0);
  BOOST_TEST(V(e, "hcudp_devices", {{"health", "unhealthy"}, {"resource", "dra.hygon.com"}}) ==
             0.0);
}

// The chart's readiness probe GETs /metrics with a 5 s timeout (HttpGet's
// deadline too). A client that connects and sends nothing (a stalled
// scraper, a port scan) must not hold the one worker past it: the pod would
// turn unready and a DaemonSet rollout stall.
BOOST_AUTO_TEST_CASE(an_idle_connection_does_not_hold_a_scrape_past_the_probe_timeout) {
  NodeState state;
  Options options;
  auto m = DaemonMetrics::Start("127.0.0.1:0", options, state);
  BOOST_REQUIRE_MESSAGE(m.ok(), m.status().ToString());
  (*m)->ServeMetrics([] { return std::vector<std::pair<std::string, bool>>{}; });
  const int idle = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  BOOST_REQUIRE(idle >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>((*m)->port()));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  // Accepted before the scrape's connection: the worker takes it first.
  BOOST_REQUIRE(::connect(idle, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  auto got = HttpGet((*m)->port(), "/metrics");
  BOOST_TEST(got.ok(), got.status().ToString());
  if (got.ok()) BOOST_TEST(got->status == 200);
  ::close(idle);
}

BOOST_AUTO_TEST_CASE(serve_acts_once_and_stop_serving_stops_reading_registrations) {
  NodeState state;
  Options options;
  auto m = DaemonMetrics::Start("127.0.0.1:0", options, state);
  BOOST_REQUIRE(m.ok());
  const int port = (*m)->port();
  std::atomic<int> calls{0};
  (*m)->ServeMetrics([&calls] {
    ++calls;
    return std::vector<std::pair<std::string, bool>>{{"first", true}};
  });
  (*m)->ServeMetrics([] { return std::vector<std::pair<std::string, bool>>{{"second", true}}; });
  Exposition e = MustScrape(port);
  BOOST_TEST(calls.load() == 1);
  BOOST_TEST(V(e, "hcudp_resource_registered", {{"resource", "first"}}) == 1.0);
  BOOST_TEST(e.Count("hcudp_resource_registered") == 1u);  // once, not twice

  (*m)->StopServing();
  e = MustScrape(port);  // the registry still answers
  BOOST_TEST(calls.load() == 1);
  BOOST_TEST(e.Count("hcudp_resource_registered") == 0u);
}

BOOST_AUTO_TEST_CASE(a_transition_counts_once_per_change_and_publishes_without_one_count_nothing) {
  NodeState state;
  Options options;
  auto m = DaemonMetrics::Start("127.0.0.1:0", options, state);
  BOOST_REQUIRE(m.ok());
  (*m)->ServeMetrics(nullptr);
  auto publish = [&](Health h) {
    NodeInventory inv = TwoCards(h);
    state.Publish(inv, WholeCards(inv));
    (*m)->OnPublish(*state.Current());
  };
  publish(Health::kHealthy);
  publish(Health::kUnhealthy);
  publish(Health::kUnhealthy);  // no change
  Exposition e = MustScrape((*m)->port());
  BOOST_TEST(V(e, "hcudp_card_health_transitions_total",
               {{"card", "0000:29:00.0"}, {"to", "unhealthy"}}) == 1.0);
  BOOST_TEST(V(e, "hcudp_card_health_transitions_total",
               {{"card", "0000:09:00.0"}, {"to", "unhealthy"}}) == 0.0);
  BOOST_TEST(V(e, "hcudp_device_healthy",
               {{"device", "0000:29:00.0"}, {"resource", "hygon.com/hcu"}}) == 0.0);
  BOOST_TEST(V(e, "hcudp_devices", {{"health", "unhealthy"}, {"resource", "hygon.com/hcu"}}) ==
             1.0);
  publish(Health::kHealthy);
  e = MustScrape((*m)->port());
  BOOST_TEST(V(e, "hcudp_card_health_transitions_total",
               {{"card", "0000:29:00.0"}, {"to", "healthy"}}) == 1.0);
}

BOOST_AUTO_TEST_CASE(the_backend_decorator_counts_vhcu_work_and_follows_discovery) {
  NodeState state;
  Options options;
  auto m = DaemonMetrics::Start("127.0.0.1:0", options, state);
  BOOST_REQUIRE(m.ok());
  (*m)->ServeMetrics(nullptr);
  ScriptedBackend inner;
  std::unique_ptr<Backend> metered = (*m)->Wrap(inner);
  BOOST_TEST(metered->CreateVhcu(1, 30, 8192).ok());
  inner.fail_create = true;
  BOOST_TEST(!metered->CreateVhcu(1, 30, 8192).ok());
  BOOST_TEST(metered->DestroyVhcu(0).ok());
  BOOST_TEST(!metered->DestroyVhcu(7).ok());
  BOOST_TEST(metered->Discover().ok());
  BOOST_TEST(
      (metered->StartEvents([](const BackendEvent&) {}).code() == StatusCode::kUnimplemented));
  Exposition e = MustScrape((*m)->port());
  BOOST_TEST(V(e, "hcudp_vhcu_creates_total", {{"result", "ok"}}) == 1.0);
  BOOST_TEST(V(e, "hcudp_vhcu_creates_total", {{"result", "error"}}) == 1.0);
  BOOST_TEST(V(e, "hcudp_vhcu_destroys_total", {{"result", "ok"}}) == 1.0);
  BOOST_TEST(V(e, "hcudp_vhcu_destroys_total", {{"result", "error"}}) == 1.0);
  BOOST_TEST(V(e, "hcudp_vhcu_create_duration_seconds_count") == 1.0);
  BOOST_TEST(V(e, "hcudp_vhcus", {{"card", "0000:29:00.0"}}) == 1.0);
  BOOST_TEST(V(e, "hcudp_vhcus", {{"card", "0000:09:00.0"}}) == 0.0);
}

// civetweb's accepting thread waits for connections 2 s at a time and sees
// a stop only between waits: the server wakes it, so that stopping (the
// daemon's exit, each of these tests) takes milliseconds after a scrape,
// not up to 2 s. On every address form the flag accepts.
BOOST_AUTO_TEST_CASE(the_server_stops_at_once_after_a_scrape) {
  for (const std::string address : {"127.0.0.1:0", ":0", "[::1]:0", "localhost:0"}) {
    auto spec = CivetListenSpec(address);
    BOOST_REQUIRE(spec.ok());
    auto server = MetricsServer::Start(*spec, address, [] { return std::string("x 1\n"); });
    if (!server.ok() && address == "[::1]:0") continue;  // no IPv6 loopback here
    BOOST_REQUIRE_MESSAGE(server.ok(), address << ": " << server.status().ToString());
    if (address.front() != '[') {  // HttpGet: IPv4
      auto got = HttpGet((*server)->port(), "/metrics");
      BOOST_REQUIRE(got.ok());
      BOOST_TEST(got->status == 200);
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    const auto start = std::chrono::steady_clock::now();
    server->reset();
    const long took_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::steady_clock::now() - start)
                             .count();
    BOOST_TEST(took_ms < 500, address << ": stopping took " << took_ms << " ms");
  }
}

BOOST_AUTO_TEST_CASE(a_second_bind_of_the_same_port_is_an_input_error) {
  NodeState state;
  Options options;
  auto first = DaemonMetrics::Start("127.0.0.1:0", options, state);
  BOOST_REQUIRE(first.ok());
  const std::string address = "127.0.0.1:" + std::to_string((*first)->port());
  auto second = DaemonMetrics::Start(address, options, state);
  BOOST_REQUIRE(!second.ok());
  BOOST_TEST(IsInputError(second.status()));
  BOOST_TEST(
      second.status().message().rfind("--metrics-address " + address + ": cannot listen", 0) == 0u,
      second.status().message());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp::daemon
