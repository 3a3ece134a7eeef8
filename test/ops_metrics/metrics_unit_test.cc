// DaemonMetrics in process (hcu-dp-daemon/metrics.h): the address grammar,
// /metrics answering 404 until the daemon serves and 200 after, transitions
// counted once per change, and the Backend decorator counting vHCU creates
// and destroys by result. The daemon end to end is metrics_test.cc.
#define BOOST_TEST_MODULE ops_metrics_unit
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <fstream>
#include <thread>

#include "hcudp/backend_wrapper.h"
#include "hcudp/dra/slices.h"
#include "hcudp_internal/metrics_server.h"
#include "metrics.h"
#include "ops_metrics/exposition.h"

namespace hcudp::daemon {
namespace {

// DaemonMetrics on `state`, as the daemon binds it before opening the node.
StatusOr<std::unique_ptr<DaemonMetrics>> StartOn(const std::string& address, const Options& options,
                                                 const NodeState& state) {
  auto m = DaemonMetrics::Start(address, options);
  if (m.ok()) (*m)->WatchNode(state);
  return m;
}

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

BOOST_AUTO_TEST_CASE(addresses_become_listen_addresses_or_one_line_errors) {
  struct Case {
    const char* flag;
    const char* host;
    int port;
  };
  for (const Case& c : {Case{":9400", "0.0.0.0", 9400}, Case{"0.0.0.0:9400", "0.0.0.0", 9400},
                        Case{"127.0.0.1:9400", "127.0.0.1", 9400}, Case{"[::1]:9400", "::1", 9400},
                        Case{"node-1:0", "node-1", 0}}) {
    auto a = ParseMetricsAddress(c.flag);
    BOOST_REQUIRE_MESSAGE(a.ok(), c.flag);
    BOOST_TEST(a->host == c.host, c.flag);
    BOOST_TEST(a->port == c.port, c.flag);
  }
  for (const char* bad :
       {"", "9400", ":", ":http", ":65536", "[::1:9400", "a b:1", "h:1,2:3", "[x]:1"}) {
    auto r = ParseMetricsAddress(bad);
    BOOST_TEST(!r.ok(), bad);
    if (!r.ok()) {
      BOOST_TEST(r.status().message().rfind("--metrics-address", 0) == 0u, r.status().message());
      BOOST_TEST(r.status().message().find('\n') == std::string::npos);
    }
  }
}

// Issue 31: a minimal root has no /etc/hosts, so even "localhost" may not
// resolve. The error names the flag and says the name did not resolve (not
// "cannot listen there", which sends the user looking for a busy port).
BOOST_AUTO_TEST_CASE(a_host_name_that_does_not_resolve_is_named_in_the_error) {
  NodeState state;
  Options options;
  const std::string address = "no-such-host.invalid:9400";  // RFC 2606: never resolves
  auto m = StartOn(address, options, state);
  BOOST_REQUIRE(!m.ok());
  BOOST_TEST(IsInputError(m.status()));
  const std::string msg(m.status().message());
  BOOST_TEST(msg.rfind("--metrics-address " + address + ": ", 0) == 0u, msg);
  BOOST_TEST(msg.find("host name \"no-such-host.invalid\" did not resolve") != std::string::npos,
             msg);
  BOOST_TEST(msg.find('\n') == std::string::npos);
}

BOOST_AUTO_TEST_CASE(metrics_answer_404_until_served_then_every_counter_starts_at_zero) {
  NodeState state;
  Options options;
  auto m = StartOn("127.0.0.1:0", options, state);
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

// The metrics server is one thread, whatever the clients (issue 29; civetweb
// ran a master and 8 workers).
BOOST_AUTO_TEST_CASE(the_server_runs_one_thread) {
  const size_t before = ThreadNames().size();
  NodeState state;
  Options options;
  auto m = StartOn("127.0.0.1:0", options, state);
  BOOST_REQUIRE_MESSAGE(m.ok(), m.status().ToString());
  (*m)->ServeMetrics([] { return std::vector<std::pair<std::string, bool>>{}; });
  BOOST_REQUIRE_EQUAL(HttpGet((*m)->port(), "/metrics")->status, 200);
  const std::vector<std::string> names = ThreadNames();
  std::string all;
  for (const std::string& n : names) all += n + " ";
  BOOST_TEST(names.size() - before == 1u, all);
  BOOST_TEST(all.find("hcudp-metrics") != std::string::npos, all);
}

// Issue 25: the text format's version in the Content-Type, and only the
// daemon's own hcudp_ families (prometheus-cpp's Exposer added exposer_*:
// a summary in microseconds with NaN quantiles). Other paths and methods
// are answered, not served the metrics.
BOOST_AUTO_TEST_CASE(the_exposition_is_version_0_0_4_with_only_hcudp_families) {
  NodeState state;
  Options options;
  auto m = StartOn("127.0.0.1:0", options, state);
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
  auto m = StartOn("127.0.0.1:0", options, state);
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
  auto m = StartOn("127.0.0.1:0", options, state);
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
  auto m = StartOn("127.0.0.1:0", options, state);
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
  auto m = StartOn("127.0.0.1:0", options, state);
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

BOOST_AUTO_TEST_CASE(the_backend_decorator_counts_vhcu_work_and_vhcus_follow_the_looks) {
  NodeState state;
  Options options;
  auto m = StartOn("127.0.0.1:0", options, state);
  BOOST_REQUIRE(m.ok());
  (*m)->ServeMetrics(nullptr);
  ScriptedBackend inner;
  std::unique_ptr<Backend> metered = (*m)->Wrap(std::make_unique<BackendWrapper>(inner));
  BOOST_TEST(metered->CreateVhcu(1, 30, 8192).ok());
  inner.fail_create = true;
  BOOST_TEST(!metered->CreateVhcu(1, 30, 8192).ok());
  BOOST_TEST(metered->DestroyVhcu(0).ok());
  BOOST_TEST(!metered->DestroyVhcu(7).ok());
  (*m)->OnInventory(inner.inventory);  // the node watcher's inventory listener
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

// Stopping the server (the daemon's exit, each of these tests) takes
// milliseconds after a scrape, on every address form the flag accepts
// (127.0.0.1, not localhost: a minimal root has no /etc/hosts, issue 31).
BOOST_AUTO_TEST_CASE(the_server_stops_at_once_after_a_scrape) {
  for (const std::string address : {"127.0.0.1:0", ":0", "[::1]:0"}) {
    auto parsed = ParseMetricsAddress(address);
    BOOST_REQUIRE(parsed.ok());
    auto server = MetricsServer::Start(*parsed, address, [] { return std::string("x 1\n"); });
    if (!server.ok() && address == "[::1]:0") continue;  // no IPv6 loopback here
    BOOST_REQUIRE_MESSAGE(server.ok(), address << ": " << server.status().ToString());
    if (address.front() != '[') {  // HttpGet: IPv4
      auto got = HttpGet((*server)->port(), "/metrics");
      BOOST_REQUIRE(got.ok());
      BOOST_TEST(got->status == 200);
    }
    const auto start = std::chrono::steady_clock::now();
    server->reset();
    const long took_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::steady_clock::now() - start)
                             .count();
    BOOST_TEST(took_ms < 100, address << ": stopping took " << took_ms << " ms");
  }
}

// A connected loopback socket to `port`.
int ConnectTo(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  BOOST_REQUIRE(fd >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  BOOST_REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  return fd;
}

// Everything the server sends on `fd` until it closes, or "TIMEOUT" after
// `within`.
std::string ReadUntilClosed(int fd, std::chrono::milliseconds within = std::chrono::seconds(5)) {
  std::string got;
  const auto deadline = std::chrono::steady_clock::now() + within;
  char buf[4096];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return "TIMEOUT";
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) return got;
    got.append(buf, static_cast<size_t>(n));
  }
}

std::string Exchange(int port, const std::vector<std::string>& pieces) {
  const int fd = ConnectTo(port);
  for (const std::string& piece : pieces) {
    BOOST_REQUIRE(::send(fd, piece.data(), piece.size(), MSG_NOSIGNAL) ==
                  static_cast<ssize_t>(piece.size()));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::string got = ReadUntilClosed(fd);
  ::close(fd);
  return got;
}

struct TestServer {
  TestServer() {
    auto s = MetricsServer::Start({"127.0.0.1", 0}, "127.0.0.1:0",
                                  [] { return std::string("hcudp_x 1\n"); });
    BOOST_REQUIRE_MESSAGE(s.ok(), s.status().ToString());
    server = std::move(*s);
  }
  int port() const { return server->port(); }
  std::unique_ptr<MetricsServer> server;
};

// The HTTP the server speaks (issue 29): a request in pieces, other methods
// and paths, a request that is not HTTP/1.x, one too large; every answer
// closes the connection.
BOOST_AUTO_TEST_CASE(the_server_answers_each_kind_of_request) {
  TestServer t;
  const std::string ok =
      Exchange(t.port(), {"GET /met", "rics?x=1 HTTP/1.1\r\nHost: a\r\n", "\r\n"});
  BOOST_TEST(ok.rfind("HTTP/1.1 200 OK\r\n", 0) == 0u, ok);
  BOOST_TEST(ok.find("\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n") !=
             std::string::npos);
  BOOST_TEST(ok.find("\r\nContent-Length: 10\r\n") != std::string::npos, ok);
  BOOST_TEST(ok.find("\r\nConnection: close\r\n\r\nhcudp_x 1\n") != std::string::npos, ok);
  const std::string post =
      Exchange(t.port(), {"POST /metrics HTTP/1.0\r\nContent-Length: 3\r\n\r\nabc"});
  BOOST_TEST(post.rfind("HTTP/1.1 405 Method Not Allowed\r\n", 0) == 0u, post);
  BOOST_TEST(post.find("\r\nAllow: GET\r\n") != std::string::npos, post);
  BOOST_TEST(Exchange(t.port(), {"GET / HTTP/1.1\r\n\r\n"}).rfind("HTTP/1.1 404 ", 0) == 0u);
  BOOST_TEST(Exchange(t.port(), {"GET /metricsx HTTP/1.1\r\n\r\n"}).rfind("HTTP/1.1 404 ", 0) ==
             0u);
  BOOST_TEST(Exchange(t.port(), {"hello\r\n\r\n"}).rfind("HTTP/1.1 400 ", 0) == 0u);
  BOOST_TEST(Exchange(t.port(), {"GET /metrics HTTP/2.0\r\n\r\n"}).rfind("HTTP/1.1 400 ", 0) == 0u);
  const std::string big =
      "GET /metrics HTTP/1.1\r\nX: " + std::string(MetricsServer::kMaxRequestBytes, 'a') +
      "\r\n\r\n";
  BOOST_TEST(Exchange(t.port(), {big}).rfind("HTTP/1.1 431 ", 0) == 0u);
}

// A trickling client has kRequestTimeoutMs from its accept, however often
// it sends a byte.
BOOST_AUTO_TEST_CASE(a_trickling_request_is_closed_at_its_deadline) {
  TestServer t;
  const int fd = ConnectTo(t.port());
  const auto start = std::chrono::steady_clock::now();
  bool closed = false;
  for (int i = 0; i < 40 && !closed; ++i) {
    ::send(fd, "G", 1, MSG_NOSIGNAL);
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 100) > 0) closed = ReadUntilClosed(fd, std::chrono::seconds(1)).empty();
  }
  const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - start);
  ::close(fd);
  BOOST_TEST(closed);
  BOOST_TEST(took.count() >= MetricsServer::kRequestTimeoutMs - 100);
  BOOST_TEST(took.count() < MetricsServer::kRequestTimeoutMs + 1000);
}

// At kMaxConnections, a new connection drops the oldest one that has not
// sent its request, and is answered.
BOOST_AUTO_TEST_CASE(at_the_cap_the_oldest_idle_connection_gives_way) {
  TestServer t;
  std::vector<int> idle;
  for (int i = 0; i < MetricsServer::kMaxConnections; ++i) idle.push_back(ConnectTo(t.port()));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // all accepted
  auto got = HttpGet(t.port(), "/metrics", std::chrono::milliseconds(1000));
  BOOST_REQUIRE_MESSAGE(got.ok(), got.status().ToString());
  BOOST_TEST(got->status == 200);
  // The first idle one was closed (EOF), the last one is still open.
  BOOST_TEST(ReadUntilClosed(idle.front(), std::chrono::milliseconds(500)).empty());
  BOOST_TEST(ReadUntilClosed(idle.back(), std::chrono::milliseconds(100)) == "TIMEOUT");
  for (int fd : idle) ::close(fd);
}

BOOST_AUTO_TEST_CASE(a_second_bind_of_the_same_port_is_an_input_error) {
  NodeState state;
  Options options;
  auto first = StartOn("127.0.0.1:0", options, state);
  BOOST_REQUIRE(first.ok());
  const std::string address = "127.0.0.1:" + std::to_string((*first)->port());
  auto second = StartOn(address, options, state);
  BOOST_REQUIRE(!second.ok());
  BOOST_TEST(IsInputError(second.status()));
  BOOST_TEST(
      second.status().message().rfind("--metrics-address " + address + ": cannot listen", 0) == 0u,
      second.status().message());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp::daemon
