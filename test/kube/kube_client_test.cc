// KubeClient against the fake kube-apiserver.
#include "hcudp/kube_client.h"

#include <dirent.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <atomic>
#include <boost/test/unit_test.hpp>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <vector>

#include "hcudp/kube_objects.h"
#include "hcudp/kube_ops.h"
#include "hcudp/logging.h"
#include "kube/http_request.h"
#include "kube/kube_test_util.h"

namespace hcudp {
namespace {

using testing::ApiFixture;
using testing::CountRequests;
using testing::FakeRequest;
using testing::MillisSince;
using testing::NodeJson;
using testing::SimClock;
using testing::SimulatedDuration;
using testing::TempDir;

using testing::SharedApiServerTeardown;
BOOST_TEST_GLOBAL_FIXTURE(SharedApiServerTeardown);

using SteadyClock = std::chrono::steady_clock;

std::string Code(const Status& s) { return std::string(StatusCodeName(s.code())); }

// A Get of node `name` by a client with options `o` on a SimClock: its result
// and the simulated time it took (its backoffs, Retry-After waits).
struct TimedGet {
  StatusOr<std::string> result = InternalError("not run");
  std::chrono::milliseconds took{0};
};
TimedGet SimulatedGet(const testing::FakeApiServer& api, KubeClientOptions o,
                      const std::string& name) {
  SimClock clock;
  o.clock = &clock;
  auto c = testing::ClientFor(testing::ConfigFor(api), o);
  TimedGet t;
  t.took = SimulatedDuration(clock, [&] { t.result = c->Get(NodePath(name)); });
  return t;
}

BOOST_FIXTURE_TEST_SUITE(kube_client, ApiFixture)

BOOST_AUTO_TEST_CASE(get_returns_the_object) {
  api.MustRequest("POST", "/api/v1/nodes", NodeJson("get-node"));
  StatusOr<std::string> json = client->Get(NodePath("get-node"));
  BOOST_REQUIRE_MESSAGE(json.ok(), json.status().ToString());
  StatusOr<NodeObject> node = ParseNode(*json);
  BOOST_REQUIRE(node.ok());
  BOOST_TEST(node->metadata.name == "get-node");
  BOOST_TEST(!node->metadata.uid.empty());
}

BOOST_AUTO_TEST_CASE(get_missing_is_not_found_with_the_api_message) {
  StatusOr<std::string> json = client->Get(NodePath("no-such-node"));
  BOOST_REQUIRE(!json.ok());
  BOOST_TEST(IsNotFound(json.status()));
  BOOST_TEST(json.status().message().find("nodes \"no-such-node\" not found") != std::string::npos,
             json.status().message());
}

BOOST_AUTO_TEST_CASE(list_sends_selectors_and_returns_matching_items) {
  api.MustRequest("POST", "/api/v1/namespaces/ls/pods", testing::PodJson("a", "list-node"));
  api.MustRequest("POST", "/api/v1/namespaces/ls/pods", testing::PodJson("b", "other-node"));
  ListOptions o;
  o.field_selector = "spec.nodeName=list-node";
  StatusOr<std::string> json = client->List(PodsPath(), o);
  BOOST_REQUIRE(json.ok());
  StatusOr<PodList> list = ParsePodList(*json);
  BOOST_REQUIRE(list.ok());
  BOOST_REQUIRE(list->items.size() == 1u);
  BOOST_TEST(list->items[0].metadata.name == "a");
  BOOST_TEST(!list->resource_version.empty());
  std::vector<FakeRequest> log = api.Requests();
  BOOST_TEST(log.back().query == "fieldSelector=spec.nodeName%3Dlist-node");
}

BOOST_AUTO_TEST_CASE(patch_sends_each_content_type) {
  api.MustRequest("POST", "/api/v1/nodes", NodeJson("patch-node", R"({"a":"1","b":"2"})"));
  BOOST_REQUIRE(client
                    ->Patch(NodePath("patch-node"), PatchType::kMerge,
                            R"({"metadata":{"annotations":{"a":null}}})")
                    .ok());
  BOOST_REQUIRE(client
                    ->Patch(NodePath("patch-node"), PatchType::kStrategicMerge,
                            R"({"metadata":{"annotations":{"c":"3"}}})")
                    .ok());
  StatusOr<std::string> last =
      client->Patch(NodePath("patch-node"), PatchType::kJson,
                    R"([{"op":"replace","path":"/metadata/annotations/b","value":"two"}])");
  BOOST_REQUIRE_MESSAGE(last.ok(), last.status().ToString());
  StatusOr<NodeObject> node = ParseNode(*last);
  BOOST_REQUIRE(node.ok());
  BOOST_TEST(
      (node->metadata.annotations == std::map<std::string, std::string>{{"b", "two"}, {"c", "3"}}));
  std::vector<std::string> types;
  for (const FakeRequest& r : api.Requests()) {
    if (r.method == "PATCH") types.push_back(r.content_type);
  }
  BOOST_TEST((types == std::vector<std::string>{"application/merge-patch+json",
                                                "application/strategic-merge-patch+json",
                                                "application/json-patch+json"}));
}

BOOST_AUTO_TEST_CASE(patch_with_stale_resource_version_is_conflict_and_reread_succeeds) {
  std::string created = api.MustRequest("POST", "/api/v1/nodes", NodeJson("put-node"));
  api.MustRequest("PATCH", "/api/v1/nodes/put-node", R"({"metadata":{"labels":{"x":"1"}}})",
                  "application/merge-patch+json");
  auto patch_at = [](const std::string& rv) {
    return R"({"metadata":{"resourceVersion":")" + rv + R"(","labels":{"y":"2"}}})";
  };
  StatusOr<std::string> stale =
      client->Patch(NodePath("put-node"), PatchType::kMerge,
                    patch_at(ParseNode(created)->metadata.resource_version));
  BOOST_REQUIRE(!stale.ok());
  BOOST_TEST(IsConflict(stale.status()), stale.status().ToString());
  BOOST_TEST(Code(stale.status()) == "ABORTED");

  StatusOr<std::string> fresh = client->Get(NodePath("put-node"));
  BOOST_REQUIRE(fresh.ok());
  StatusOr<std::string> patched =
      client->Patch(NodePath("put-node"), PatchType::kMerge,
                    patch_at(ParseNode(*fresh)->metadata.resource_version));
  BOOST_REQUIRE_MESSAGE(patched.ok(), patched.status().ToString());
  BOOST_TEST(ParseNode(*patched)->metadata.labels.at("y") == "2");
}

BOOST_AUTO_TEST_CASE(create_existing_is_already_exists) {
  BOOST_REQUIRE(
      client->Create(ConfigMapsPath("kube-system"), R"({"metadata":{"name":"dup"},"data":{}})")
          .ok());
  StatusOr<std::string> again =
      client->Create(ConfigMapsPath("kube-system"), R"({"metadata":{"name":"dup"},"data":{}})");
  BOOST_REQUIRE(!again.ok());
  BOOST_TEST(IsAlreadyExists(again.status()), again.status().ToString());
}

BOOST_AUTO_TEST_CASE(delete_honours_the_uid_precondition) {
  StatusOr<Pod> pod =
      ParsePod(api.MustRequest("POST", "/api/v1/namespaces/del/pods", testing::PodJson("p", "n")));
  BOOST_REQUIRE(pod.ok());
  DeleteOptions wrong;
  wrong.precondition_uid = "not-the-uid";
  StatusOr<std::string> refused = client->Delete(PodPath("del", "p"), wrong);
  BOOST_REQUIRE(!refused.ok());
  BOOST_TEST(IsConflict(refused.status()));
  BOOST_TEST(client->Get(PodPath("del", "p")).ok());

  DeleteOptions right;
  right.precondition_uid = pod->metadata.uid;
  right.grace_period_seconds = 0;
  BOOST_TEST(client->Delete(PodPath("del", "p"), right).ok());
  BOOST_TEST(IsNotFound(client->Get(PodPath("del", "p")).status()));
}

BOOST_AUTO_TEST_CASE(wrong_token_is_unauthenticated_and_not_retried) {
  KubeConfig config = testing::ConfigFor(api);
  config.token_file.clear();
  config.token = "wrong-token";
  auto bad = testing::ClientFor(config);
  StatusOr<std::string> r = bad->Get(NodePath("any"));
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST(Code(r.status()) == "UNAUTHENTICATED");
  BOOST_TEST(CountRequests(api.Requests(), "GET", "/api/v1/nodes/any") == 1);
}

BOOST_AUTO_TEST_CASE(too_many_requests_is_retried_after_retry_after) {
  api.MustRequest("POST", "/api/v1/nodes", NodeJson("busy-node"));
  api.ClearRequests();
  api.AddFault(R"({"method":"GET","path":"/nodes/busy-node$","status":429,"retry_after":1})");
  const TimedGet got = SimulatedGet(api, testing::FastOptions(), "busy-node");
  BOOST_TEST(got.result.ok(), got.result.status().ToString());
  // Retry-After, not the 20 ms backoff.
  BOOST_TEST(got.took.count() == 1000);
  BOOST_TEST(CountRequests(api.Requests(), "GET", "/api/v1/nodes/busy-node") == 2);
}

BOOST_AUTO_TEST_CASE(server_errors_are_retried_with_growing_backoff) {
  api.MustRequest("POST", "/api/v1/nodes", NodeJson("flaky-node"));
  api.ClearRequests();
  api.AddFault(R"({"method":"GET","path":"/nodes/flaky-node$","status":500,"count":1})");
  api.AddFault(R"({"method":"GET","path":"/nodes/flaky-node$","status":503,"count":1})");
  const TimedGet got = SimulatedGet(api, testing::FastOptions(), "flaky-node");
  BOOST_TEST(got.result.ok(), got.result.status().ToString());
  BOOST_TEST(got.took.count() == 20 + 40);  // initial backoff, then doubled
  BOOST_TEST(CountRequests(api.Requests(), "GET", "/api/v1/nodes/flaky-node") == 3);
}

BOOST_AUTO_TEST_CASE(retries_stop_at_max_retries) {
  KubeClientOptions o = testing::FastOptions();
  o.max_retries = 2;
  o.max_backoff_ms = 30;
  api.AddFault(R"({"method":"GET","path":"/nodes/down$","status":503,"count":10})");
  const TimedGet got = SimulatedGet(api, o, "down");
  BOOST_TEST(got.took.count() == 20 + 30);  // two backoffs, the second capped
  BOOST_REQUIRE(!got.result.ok());
  BOOST_TEST(Code(got.result.status()) == "UNAVAILABLE");
  BOOST_TEST(got.result.status().message().find("3 attempts") != std::string::npos);
  BOOST_TEST(CountRequests(api.Requests(), "GET", "/api/v1/nodes/down") == 3);
}

BOOST_AUTO_TEST_CASE(slow_response_times_out) {
  KubeClientOptions o = testing::FastOptions();
  o.request_timeout_ms = 300;
  o.max_retries = 0;
  auto c = testing::ClientFor(testing::ConfigFor(api), o);
  api.AddFault(R"({"method":"GET","path":"/nodes/slow$","status":0,"delay_ms":1500})");
  auto start = SteadyClock::now();
  StatusOr<std::string> r = c->Get(NodePath("slow"));
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST(Code(r.status()) == "DEADLINE_EXCEEDED", r.status().ToString());
  BOOST_TEST(MillisSince(start) < 1200);
}

BOOST_AUTO_TEST_CASE(server_signed_by_an_unknown_ca_is_refused) {
  KubeConfig config = testing::ConfigFor(api);
  config.ca_pem = testing::ReadFile(api.wrong_ca_file());
  auto c = testing::ClientFor(config);
  StatusOr<std::string> r = c->Get(NodePath("any"));
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST(Code(r.status()) == "UNAUTHENTICATED", r.status().ToString());
  BOOST_TEST(r.status().message().find("not trusted") != std::string::npos);
}

// No CA in the config: the system trust store (OpenSSL's default paths), which does
// not hold the fake server's CA; verification is not skipped.
BOOST_AUTO_TEST_CASE(without_a_ca_the_system_store_decides) {
  KubeConfig config = testing::ConfigFor(api);
  config.ca_pem.clear();
  auto c = testing::ClientFor(config);
  StatusOr<std::string> r = c->Get(NodePath("any"));
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST(Code(r.status()) == "UNAUTHENTICATED", r.status().ToString());
}

// The TLS context is made once per material: a changed CA on the same
// pool is a different context, and a kept-alive connection of the first
// one is not reused for it.
BOOST_AUTO_TEST_CASE(one_pool_follows_a_changed_ca) {
  kube::HttpChannelPool pool;
  kube::HttpRequest request;
  request.url = api.server_url() + "/api/v1/nodes";
  request.headers = {"Authorization: Bearer " + api.token()};
  kube::TlsMaterial tls;
  for (const std::string& ca : {api.wrong_ca_file(), api.ca_file(), api.wrong_ca_file()}) {
    tls.ca_pem = testing::ReadFile(ca);
    StatusOr<kube::HttpResponse> r = pool.Perform(tls, request);
    if (ca == api.ca_file()) {
      BOOST_REQUIRE_MESSAGE(r.ok(), r.status().ToString());
      BOOST_TEST(r->status == 200);
    } else {
      BOOST_REQUIRE(!r.ok());
      BOOST_TEST(Code(r.status()) == "UNAUTHENTICATED", r.status().ToString());
    }
  }
}

// A body beyond the request's limit (a broken proxy, a wrong server) ends
// the transfer with a clear error instead of growing without bound.
BOOST_AUTO_TEST_CASE(a_body_larger_than_the_limit_is_refused_not_collected) {
  api.AddFault(R"({"method":"GET","path":"^/api/v1/nodes/huge$","status":200,"body":")" +
               std::string(4096, 'x') + R"("})");
  kube::HttpChannelPool pool;
  kube::HttpRequest request;
  request.url = api.server_url() + "/api/v1/nodes/huge";
  request.headers = {"Authorization: Bearer " + api.token()};
  request.max_body_bytes = 1024;
  kube::TlsMaterial tls;
  tls.ca_pem = testing::ReadFile(api.ca_file());
  StatusOr<kube::HttpResponse> r = pool.Perform(tls, request);
  BOOST_REQUIRE_MESSAGE(!r.ok(), "collected " << r->body.size() << " bytes");
  BOOST_TEST(Code(r.status()) == "RESOURCE_EXHAUSTED", r.status().ToString());
  BOOST_TEST(r.status().message().find("1024") != std::string::npos, r.status().ToString());
}

// JSON nested a million levels deep (a hostile server) is refused with a
// clear error; parsing it recursively would overflow the stack.
BOOST_AUTO_TEST_CASE(a_body_nested_beyond_any_object_is_an_error_not_a_crash) {
  api.AddFault(R"({"method":"GET","path":"^/api/v1/nodes/deep$","status":200,"body":")" +
               std::string(1000000, '[') + R"("})");
  StatusOr<NodeObject> node = GetNode(*client, "deep");
  BOOST_REQUIRE(!node.ok());
  BOOST_TEST(Code(node.status()) == "INVALID_ARGUMENT", node.status().ToString());
}

// The same in an error answer: the status comes back, with an excerpt.
BOOST_AUTO_TEST_CASE(an_error_body_nested_beyond_any_object_is_an_excerpt_not_a_crash) {
  api.AddFault(R"({"method":"GET","path":"^/api/v1/nodes/deep-error$","status":403,"body":")" +
               std::string(1000000, '[') + R"("})");
  StatusOr<std::string> r = client->Get(NodePath("deep-error"));
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST(Code(r.status()) == "PERMISSION_DENIED", r.status().ToString().substr(0, 200));
}

// The same on a watch stream: the watch ends with the error.
BOOST_AUTO_TEST_CASE(a_watch_event_nested_beyond_any_object_ends_the_watch) {
  const std::string line = R"({\"type\":\"ADDED\",\"object\":{\"a\":)" +
                           std::string(1000000, '[') + std::string(1000000, ']') + R"(}}\n)";
  api.AddFault(R"({"method":"GET","path":"^/api/v1/nodes$","query":"watch=true",)"
               R"("status":200,"count":1,"body":")" + line + R"("})");
  Status s = client->Watch(NodePath(""), ListOptions(), [](const WatchEvent&) { return true; });
  BOOST_TEST(Code(s) == "INVALID_ARGUMENT", s.ToString());
}

BOOST_AUTO_TEST_CASE(client_certificate_from_kubeconfig_authenticates) {
  StatusOr<KubeConfig> config = LoadKubeconfig(api.kubeconfig_cert_path());
  BOOST_REQUIRE_MESSAGE(config.ok(), config.status().ToString());
  BOOST_REQUIRE(config->token.empty() && config->token_file.empty());
  auto c = testing::ClientFor(*config);
  StatusOr<std::string> r = c->List(NodePath(""));
  BOOST_TEST(r.ok(), r.status().ToString());
}

BOOST_AUTO_TEST_CASE(in_cluster_token_rotation_is_picked_up) {
  TempDir sa;
  std::string old_token = api.token();
  testing::WriteFile(sa.Join("token"), old_token);
  testing::WriteFile(sa.Join("ca.crt"), testing::ReadFile(api.ca_file()));
  StatusOr<KubeConfig> config = LoadInClusterConfig(
      {"127.0.0.1", std::to_string(api.port()), sa.Join("token"), sa.Join("ca.crt")});
  BOOST_REQUIRE_MESSAGE(config.ok(), config.status().ToString());
  auto c = testing::ClientFor(*config);
  BOOST_REQUIRE(c->List(NodePath("")).ok());

  api.SetToken("rotated-token");  // the server now wants the new token
  StatusOr<std::string> stale = c->List(NodePath(""));
  BOOST_TEST(Code(stale.status()) == "UNAUTHENTICATED");

  testing::WriteFile(sa.Join("token"), "rotated-token\n");  // kubelet refreshes the file
  StatusOr<std::string> fresh = c->List(NodePath(""));
  api.SetToken(old_token);
  BOOST_TEST(fresh.ok(), fresh.status().ToString());
}

BOOST_AUTO_TEST_CASE(watch_delivers_events_and_bookmarks_from_a_resource_version) {
  std::string created = api.MustRequest("POST", "/api/v1/nodes", NodeJson("watched"));
  std::string rv = ParseNode(created)->metadata.resource_version;
  api.MustRequest("PATCH", "/api/v1/nodes/watched", R"({"metadata":{"labels":{"x":"1"}}})",
                  "application/merge-patch+json");
  ListOptions o;
  o.resource_version = rv;
  o.field_selector = "metadata.name=watched";
  o.allow_watch_bookmarks = true;
  std::vector<WatchEvent> events;
  Status s = client->Watch(NodePath(""), o, [&](const WatchEvent& e) {
    events.push_back(e);
    return e.type != WatchEventType::kBookmark;
  });
  BOOST_REQUIRE_MESSAGE(s.ok(), s.ToString());
  BOOST_REQUIRE(events.size() == 2u);
  BOOST_TEST((events[0].type == WatchEventType::kModified));
  BOOST_TEST(ParseNode(events[0].object_json)->metadata.labels.at("x") == "1");
  BOOST_TEST((events[1].type == WatchEventType::kBookmark));
  BOOST_TEST(std::stoll(events[1].resource_version) >= std::stoll(events[0].resource_version));
}

BOOST_AUTO_TEST_CASE(watch_from_a_compacted_resource_version_is_gone) {
  std::string created = api.MustRequest("POST", "/api/v1/nodes", NodeJson("compacted"));
  api.MustRequest("PATCH", "/api/v1/nodes/compacted", R"({"metadata":{"labels":{"x":"1"}}})",
                  "application/merge-patch+json");
  api.Compact();
  ListOptions o;
  o.resource_version = ParseNode(created)->metadata.resource_version;
  Status s = client->Watch(NodePath(""), o, [](const WatchEvent&) { return true; });
  BOOST_TEST(IsGone(s), s.ToString());
}

// A watch stream that never ends a line (a broken proxy, a wrong server)
// ends with a clear error once the line passes the body limit (64 MiB),
// instead of being buffered without bound.
BOOST_AUTO_TEST_CASE(a_watch_line_beyond_the_body_limit_ends_the_watch) {
  api.AddFault(R"({"method":"GET","path":"^/api/v1/nodes$","query":"watch=true",)"
               R"("status":200,"stream_bytes":67174400,"count":1})");  // 64 MiB + 64 KiB
  Status s = client->Watch(NodePath(""), ListOptions(), [](const WatchEvent&) { return true; });
  BOOST_TEST(Code(s) == "RESOURCE_EXHAUSTED", s.ToString());
}

BOOST_AUTO_TEST_CASE(watch_stops_promptly_when_cancelled) {
  std::atomic<bool> cancel{false};
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    cancel = true;
  });
  auto start = SteadyClock::now();
  ListOptions o;
  o.resource_version = "999999999";
  Status s = client->Watch(
      NodePath(""), o, [](const WatchEvent&) { return true; }, &cancel);
  canceller.join();
  BOOST_TEST(Code(s) == "CANCELLED", s.ToString());
  BOOST_TEST(MillisSince(start) < 1000);
}

// Captures every line the library logs (instead of stderr) while it lives.
class CapturingSink {
 public:
  CapturingSink()
      : previous_(SetLogSink([this](const LogLine& line) {
          std::lock_guard<std::mutex> lock(mu_);
          text_.append(line.message).append("\n");
        })) {}
  ~CapturingSink() { SetLogSink(previous_); }
  std::string text() {
    std::lock_guard<std::mutex> lock(mu_);
    return text_;
  }

 private:
  std::mutex mu_;
  std::string text_;
  LogSink previous_;
};

BOOST_AUTO_TEST_CASE(credentials_never_appear_in_logs_or_errors) {
  std::optional<CapturingSink> sink(std::in_place);
  SetLogLevel(LogSeverity::kInfo, 10);
  const std::string secret = "super-secret-token-0123456789";
  KubeConfig config = testing::ConfigFor(api);
  config.token_file.clear();
  config.token = secret;
  config.client_cert_pem = testing::ReadFile(api.client_cert_file());
  config.client_key_pem = testing::ReadFile(api.client_key_file());
  auto c = testing::ClientFor(config);
  std::string messages;
  api.AddFault(R"({"method":"GET","path":"/nodes/logged$","status":503,"count":2})");
  messages += c->Get(NodePath("logged")).status().ToString();   // retried, then 404
  messages += c->Get(NodePath("missing")).status().ToString();  // 404
  config.ca_pem = testing::ReadFile(api.wrong_ca_file());
  messages += testing::ClientFor(config)->Get(NodePath("x")).status().ToString();  // TLS
  SetLogLevel(LogSeverity::kInfo, 0);
  std::string logged = sink->text();
  sink.reset();
  BOOST_TEST(logged.find("/nodes/logged") != std::string::npos);  // the sink saw the traffic
  for (const std::string& text : {logged, messages}) {
    BOOST_TEST(text.find(secret) == std::string::npos);
    BOOST_TEST(text.find("Bearer") == std::string::npos);
    BOOST_TEST(text.find("PRIVATE KEY") == std::string::npos);
  }
}

BOOST_AUTO_TEST_CASE(concurrent_calls_share_one_client) {
  api.MustRequest("POST", "/api/v1/nodes", NodeJson("shared"));
  std::atomic<int> ok{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 5; ++i) ok += client->Get(NodePath("shared")).ok() ? 1 : 0;
    });
  }
  for (std::thread& t : threads) t.join();
  BOOST_TEST(ok.load() == 20);
}

BOOST_AUTO_TEST_CASE(sequential_calls_reuse_one_connection) {
  api.MustRequest("POST", "/api/v1/nodes", NodeJson("keepalive"));
  api.ClearRequests();
  for (int i = 0; i < 5; ++i) BOOST_REQUIRE(client->Get(NodePath("keepalive")).ok());
  std::set<int> ports;
  for (const FakeRequest& r : api.Requests()) ports.insert(r.peer_port);
  BOOST_TEST(ports.size() == 1u);
}

// A watch the server accepted and then went silent on (its peer gone, a
// proxy that dropped it) ends once no byte, not even an asked-for bookmark,
// came for the stall timeout; not after the server's timeout plus 30 s.
BOOST_AUTO_TEST_CASE(a_silent_watch_with_bookmarks_ends_after_the_stall_timeout) {
  api.AddFault(R"({"method":"GET","path":"^/api/v1/nodes$","query":"watch=true",)"
               R"("status":200,"stall":true,"count":1})");
  KubeClientOptions o = testing::FastOptions();  // server timeout 10 s (+30 s)
  o.watch_stall_timeout_s = 1;
  auto c = testing::ClientFor(testing::ConfigFor(api), o);
  ListOptions list;
  list.allow_watch_bookmarks = true;
  std::atomic<bool> cancel{false};
  std::atomic<bool> done{false};
  Status s;
  const auto start = SteadyClock::now();
  std::thread watcher([&] {
    s = c->Watch(
        NodePath(""), list, [](const WatchEvent&) { return true; }, &cancel);
    done = true;
  });
  const bool ended = testing::Eventually([&] { return done.load(); }, 10000);
  cancel = true;  // one that did not end is not waited for
  watcher.join();
  BOOST_TEST(ended, "still watching after " << MillisSince(start) << " ms");
  BOOST_TEST(Code(s) == "DEADLINE_EXCEEDED", s.ToString());
}

// The keepalive settings of this process's TCP socket bound to local `port`.
struct SocketKeepalive {
  int on = 0;
  int idle_s = 0;
  int interval_s = 0;
  int count = 0;
};
std::optional<SocketKeepalive> KeepaliveOfLocalPort(int port) {
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return std::nullopt;
  std::optional<SocketKeepalive> found;
  while (dirent* entry = readdir(dir)) {
    const int fd = std::atoi(entry->d_name);
    struct stat st {};
    if (fd <= 2 || fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode)) continue;
    sockaddr_storage addr{};
    socklen_t len = sizeof(addr);
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) continue;
    int local_port = 0;
    if (addr.ss_family == AF_INET) {
      local_port = ntohs(reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
    } else if (addr.ss_family == AF_INET6) {
      local_port = ntohs(reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port);
    }
    if (local_port != port) continue;
    SocketKeepalive k;
    socklen_t n = sizeof(int);
    getsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &k.on, &n);
    getsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &k.idle_s, &n);
    getsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &k.interval_s, &n);
    getsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &k.count, &n);
    found = k;
  }
  closedir(dir);
  return found;
}

// A quiet watch to an API server whose host vanished without a reset (its
// route gone, a NAT that dropped the state) sends nothing and so learns
// nothing: TCP keepalive probes find the dead peer within a minute, as
// client-go's dialer does (keepalive 30 s), instead of never.
BOOST_AUTO_TEST_CASE(connections_probe_a_silent_peer_with_tcp_keepalive) {
  ListOptions list;
  list.allow_watch_bookmarks = true;  // the shared server bookmarks every 500 ms
  std::atomic<bool> cancel{false};
  std::thread watcher([&] {
    Status ignored = client->Watch(
        NodePath(""), list, [](const WatchEvent&) { return true; }, &cancel);
    (void)ignored;
  });
  int port = 0;
  const bool seen = testing::Eventually([&] {
    for (const FakeRequest& r : api.Requests()) {
      if (r.watch) port = r.peer_port;
    }
    return port != 0;
  });
  std::optional<SocketKeepalive> k = seen ? KeepaliveOfLocalPort(port) : std::nullopt;
  cancel = true;
  watcher.join();
  BOOST_REQUIRE(seen);
  BOOST_REQUIRE(k.has_value());
  BOOST_TEST(k->on == 1);
  BOOST_TEST(k->idle_s <= 30);
  BOOST_TEST(k->idle_s + k->count * k->interval_s <= 60);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(kube_client_paths)

BOOST_AUTO_TEST_CASE(paths_are_built_and_escaped) {
  BOOST_TEST(NodePath("n1").ToString() == "/api/v1/nodes/n1");
  BOOST_TEST(NodeStatusPath("n1").ToString() == "/api/v1/nodes/n1/status");
  BOOST_TEST(PodsPath().ToString() == "/api/v1/pods");
  BOOST_TEST(PodPath("ns", "p").ToString() == "/api/v1/namespaces/ns/pods/p");
  BOOST_TEST(ConfigMapPath("kube-system", "hcu-topology-info").ToString() ==
             "/api/v1/namespaces/kube-system/configmaps/hcu-topology-info");
  BOOST_TEST(NodePath("a/b").ToString() == "/api/v1/nodes/a%2Fb");
}

BOOST_AUTO_TEST_CASE(invalid_configs_are_refused) {
  KubeConfig c;
  c.server = "ftp://x";
  BOOST_TEST(!KubeClient::New(c).ok());
  c.server = "https://x";
  c.client_cert_pem = "cert";
  BOOST_TEST(!KubeClient::New(c).ok());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp
