// EventRecorder against the fake API server, in simulated time: singleton,
// series, heartbeat and finish; the spam filter; retries; the bounded
// queue; Stop with a silent server; and the real kubectl describe node.
#include <rapidjson/document.h>

#include <boost/test/unit_test.hpp>
#include <chrono>
#include <functional>
#include <set>
#include <thread>

#include "fake_apiserver/fake_apiserver_process.h"
#include "hcudp/node_events.h"
#include "kube/kube_test_util.h"
#include "testing/sim_clock.h"
#include "testing/testutil.h"

namespace hcudp {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::CountRequests;
using testing::FakeApiServer;
using testing::SimClock;

constexpr char kEvents[] = "/apis/events.k8s.io/v1/namespaces/default/events";

bool Eventually(const std::function<bool()>& done, milliseconds timeout = milliseconds(5000)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(milliseconds(10));
  }
  return true;
}

int CountPatches(const std::vector<testing::FakeRequest>& log) {
  int n = 0;
  for (const auto& r : log) n += r.method == "PATCH" && r.path.rfind(kEvents, 0) == 0;
  return n;
}

// One fake API server for the whole executable (starting one costs ~0.3 s);
// each test uses its own node name, so its events are its own. Ended by the
// global fixture below.
std::unique_ptr<FakeApiServer>& ApiSlot() {
  static std::unique_ptr<FakeApiServer> server;
  return server;
}
FakeApiServer& Api() {
  if (!ApiSlot()) ApiSlot() = std::make_unique<FakeApiServer>();
  return *ApiSlot();
}
struct ApiTeardown {
  ~ApiTeardown() { ApiSlot().reset(); }
};
BOOST_TEST_GLOBAL_FIXTURE(ApiTeardown);

struct Fixture {
  explicit Fixture(int max_retries = 4) {
    api.ClearFaults();
    api.ClearRequests();
    KubeClientOptions o;
    o.max_retries = max_retries;
    o.initial_backoff_ms = 10;
    // Exact pauses: the retry delay is not spread (RetryPolicy::Spread has
    // its own test), so the simulated schedule below is the recorder's.
    o.retry_policy = testing::ExactPolicy(o);
    client = std::move(KubeClient::New(testing::ConfigFor(api), o).value());
  }
  ~Fixture() { api.ClearFaults(); }

  EventRecorderOptions Options(const std::string& node) {
    EventRecorderOptions o;
    o.node_name = node;
    o.client = client.get();
    return o;
  }
  // The events about `node`, through the core/v1 API (as kubectl reads them).
  rapidjson::Document CoreEvents(const std::string& node) {
    rapidjson::Document d;
    std::string body = api.MustRequest(
        "GET",
        "/api/v1/events?fieldSelector=involvedObject.kind%3DNode%2CinvolvedObject.name%3D" + node);
    d.Parse(body.c_str());
    BOOST_REQUIRE(d.IsObject() && d["items"].IsArray());
    return d;
  }

  FakeApiServer& api = Api();
  std::unique_ptr<KubeClient> client;
};

BOOST_FIXTURE_TEST_SUITE(event_recorder, Fixture)

BOOST_AUTO_TEST_CASE(repeats_become_one_series_that_is_finished_after_six_minutes) {
  SimClock clock;
  EventRecorder rec(Options("series-node"), clock);
  BOOST_REQUIRE(rec.Start().ok());
  const std::string note = "card 0000:09:00.0 (index 0, K100_AI) is Unhealthy: ECC";
  BOOST_TEST(rec.Record(EventType::kWarning, kReasonHcuUnhealthy, kActionHealthCheck, note));
  BOOST_REQUIRE(rec.WaitIdle(milliseconds(5000)));
  BOOST_TEST(rec.stats().created == 1u);
  // The stored event, as core/v1 readers see it.
  auto d = CoreEvents("series-node");
  BOOST_REQUIRE(d["items"].Size() == 1u);
  const auto& ev = d["items"][0];
  BOOST_TEST(std::string(ev["type"].GetString()) == "Warning");
  BOOST_TEST(std::string(ev["reason"].GetString()) == "HCUUnhealthy");
  BOOST_TEST(std::string(ev["message"].GetString()) == note);
  BOOST_TEST(std::string(ev["reportingComponent"].GetString()) == "hygon.com/hcu-device-plugin");
  BOOST_TEST(std::string(ev["reportingInstance"].GetString()) ==
             "hygon.com/hcu-device-plugin-series-node");
  BOOST_TEST(std::string(ev["involvedObject"]["uid"].GetString()) == "series-node");
  BOOST_TEST(!ev.HasMember("series"));

  // Second: the event becomes a series (one PATCH); third and fourth only
  // count in memory.
  for (int i = 0; i < 3; ++i) {
    rec.Record(EventType::kWarning, kReasonHcuUnhealthy, kActionHealthCheck, note);
  }
  BOOST_REQUIRE(rec.WaitIdle(milliseconds(5000)));
  BOOST_TEST(CountPatches(api.Requests()) == 1);
  BOOST_TEST(CoreEvents("series-node")["items"][0]["series"]["count"].GetInt() == 2);

  // Six quiet minutes end the series with its final count.
  BOOST_REQUIRE(clock.WaitForSleepers(1, milliseconds(5000)));
  clock.Advance(seconds(359));
  BOOST_REQUIRE(clock.WaitForSleepers(1, milliseconds(5000)));
  BOOST_TEST(CountPatches(api.Requests()) == 1);
  clock.Advance(seconds(1));
  BOOST_REQUIRE(Eventually([&] { return CountPatches(api.Requests()) == 2; }));
  BOOST_TEST(CoreEvents("series-node")["items"][0]["series"]["count"].GetInt() == 4);

  // The next occurrence is a new event.
  rec.Record(EventType::kWarning, kReasonHcuUnhealthy, kActionHealthCheck, note);
  BOOST_REQUIRE(rec.WaitIdle(milliseconds(5000)));
  BOOST_TEST(CoreEvents("series-node")["items"].Size() == 2u);
  BOOST_TEST(rec.stats().created == 2u);
}

BOOST_AUTO_TEST_CASE(an_active_series_gets_a_heartbeat) {
  SimClock clock;
  EventRecorderOptions o = Options("heartbeat-node");
  o.heartbeat = seconds(60);
  EventRecorder rec(o, clock);
  BOOST_REQUIRE(rec.Start().ok());
  for (int i = 0; i < 2; ++i) rec.Record(EventType::kNormal, kReasonHcuHealthy, "HealthCheck", "x");
  BOOST_REQUIRE(rec.WaitIdle(milliseconds(5000)));
  BOOST_TEST(CountPatches(api.Requests()) == 1);
  BOOST_REQUIRE(clock.WaitForSleepers(1, milliseconds(5000)));
  clock.Advance(seconds(60));
  BOOST_REQUIRE(Eventually([&] { return CountPatches(api.Requests()) == 2; }));
}

BOOST_AUTO_TEST_CASE(a_series_whose_event_expired_is_created_again) {
  SimClock clock;
  EventRecorderOptions o = Options("ttl-node");
  o.heartbeat = seconds(60);
  EventRecorder rec(o, clock);
  BOOST_REQUIRE(rec.Start().ok());
  for (int i = 0; i < 3; ++i)
    rec.Record(EventType::kWarning, kReasonHcuUnhealthy, "HealthCheck", "x");
  BOOST_REQUIRE(rec.WaitIdle(milliseconds(5000)));
  auto d = CoreEvents("ttl-node");
  BOOST_REQUIRE(d["items"].Size() == 1u);
  const std::string name = d["items"][0]["metadata"]["name"].GetString();
  // The API server's event TTL removes it; the heartbeat finds it gone and
  // creates it again, with the series so far.
  api.MustRequest("DELETE", "/api/v1/namespaces/default/events/" + name);
  BOOST_REQUIRE(clock.WaitForSleepers(1, milliseconds(5000)));
  clock.Advance(seconds(60));
  BOOST_REQUIRE(Eventually([&] { return rec.stats().created == 2; }));
  d = CoreEvents("ttl-node");
  BOOST_REQUIRE(d["items"].Size() == 1u);
  BOOST_TEST(std::string(d["items"][0]["metadata"]["name"].GetString()) != name);
  BOOST_TEST(d["items"][0]["series"]["count"].GetInt() == 3);
  BOOST_TEST(rec.stats().failed == 0u);
}

BOOST_AUTO_TEST_CASE(two_cards_are_two_events_not_one_series) {
  SimClock clock;
  EventRecorder rec(Options("two-cards"), clock);
  BOOST_REQUIRE(rec.Start().ok());
  rec.Record(EventType::kWarning, kReasonHcuUnhealthy, kActionHealthCheck, "card 0000:09:00.0");
  rec.Record(EventType::kWarning, kReasonHcuUnhealthy, kActionHealthCheck, "card 0000:0c:00.0");
  BOOST_REQUIRE(rec.WaitIdle(milliseconds(5000)));
  BOOST_TEST(CoreEvents("two-cards")["items"].Size() == 2u);
}

BOOST_AUTO_TEST_CASE(spam_filter_allows_25_then_one_per_five_minutes) {
  SimClock clock;
  EventRecorder rec(Options("spam-node"), clock);
  BOOST_REQUIRE(rec.Start().ok());
  for (int i = 0; i < 30; ++i) {
    rec.Record(EventType::kWarning, kReasonHcuUnhealthy, kActionHealthCheck,
               "flap " + std::to_string(i));
  }
  BOOST_REQUIRE(rec.WaitIdle(milliseconds(10000)));
  BOOST_TEST(rec.stats().created == 25u);
  BOOST_TEST(rec.stats().rate_limited == 5u);
  // Normal events have their own bucket.
  rec.Record(EventType::kNormal, kReasonHcuHealthy, kActionHealthCheck, "back");
  BOOST_REQUIRE(rec.WaitIdle(milliseconds(5000)));
  BOOST_TEST(rec.stats().created == 26u);
  BOOST_REQUIRE(clock.WaitForSleepers(1, milliseconds(5000)));
  clock.Advance(seconds(300));
  rec.Record(EventType::kWarning, kReasonHcuUnhealthy, kActionHealthCheck, "flap 30");
  rec.Record(EventType::kWarning, kReasonHcuUnhealthy, kActionHealthCheck, "flap 31");
  BOOST_REQUIRE(rec.WaitIdle(milliseconds(5000)));
  BOOST_TEST(rec.stats().created == 27u);
  BOOST_TEST(rec.stats().rate_limited == 6u);
  BOOST_TEST(CoreEvents("spam-node")["items"].Size() == 27u);
}

// What doc/events.md says takes a token and what does not: the create and
// the series PATCH do; the heartbeat does not.
BOOST_AUTO_TEST_CASE(heartbeats_take_no_token) {
  SimClock clock;
  EventRecorderOptions o = Options("token-node");
  o.burst = 2;
  o.heartbeat = seconds(60);
  EventRecorder rec(o, clock);
  BOOST_REQUIRE(rec.Start().ok());
  for (int i = 0; i < 2; ++i) {
    rec.Record(EventType::kWarning, kReasonHcuUnhealthy, kActionHealthCheck, "series");
  }
  rec.Record(EventType::kWarning, kReasonHcuUnhealthy, kActionHealthCheck, "another");
  BOOST_REQUIRE(rec.WaitIdle(milliseconds(5000)));
  BOOST_TEST(rec.stats().created == 1u);
  BOOST_TEST(rec.stats().patched == 1u);
  BOOST_TEST(rec.stats().rate_limited == 1u);  // the bucket is empty
  BOOST_REQUIRE(clock.WaitForSleepers(1, milliseconds(5000)));
  clock.Advance(seconds(60));
  BOOST_REQUIRE(Eventually([&] { return rec.stats().patched == 2u; }));
  BOOST_TEST(rec.stats().rate_limited == 1u);
}

struct NoRetryFixture : Fixture {
  NoRetryFixture() : Fixture(/*max_retries=*/0) {}
};

BOOST_FIXTURE_TEST_CASE(unreachable_server_is_retried_an_answer_is_not, NoRetryFixture) {
  SimClock clock;
  EventRecorder rec(Options("retry-node"), clock);
  BOOST_REQUIRE(rec.Start().ok());
  api.AddFault(R"({"method":"POST","path":"events$","status":503,"count":1})");
  rec.Record(EventType::kWarning, kReasonHcuUnhealthy, kActionHealthCheck, "first");
  // The first POST fails (503: Unavailable); the retry waits 10 s.
  BOOST_REQUIRE(Eventually([&] { return CountRequests(api.Requests(), "POST", kEvents) == 1; }));
  BOOST_REQUIRE(clock.WaitForSleepers(1, milliseconds(5000)));
  BOOST_TEST(rec.stats().created == 0u);
  clock.Advance(seconds(10));
  BOOST_REQUIRE(rec.WaitIdle(milliseconds(5000)));
  BOOST_TEST(rec.stats().created == 1u);
  // 403 is an answer: not retried, counted as failed.
  api.AddFault(R"({"method":"POST","path":"events$","status":403,"count":1})");
  rec.Record(EventType::kWarning, kReasonHcuUnhealthy, kActionHealthCheck, "second");
  BOOST_REQUIRE(rec.WaitIdle(milliseconds(5000)));
  BOOST_TEST(rec.stats().failed == 1u);
  BOOST_TEST(rec.stats().created == 1u);
}

// The client here retries 4 times on its own (the Fixture's default, as the
// daemon's shared client does); the recorder must not nest its retries on
// top: one POST per attempt, max_tries attempts at most, and none started
// after give_up_after.
BOOST_AUTO_TEST_CASE(one_retry_layer_with_a_bounded_total_time) {
  SimClock clock;
  EventRecorderOptions o = Options("one-layer-node");
  o.max_tries = 12;
  o.retry_delay = seconds(10);
  o.give_up_after = seconds(35);
  EventRecorder rec(o, clock);
  BOOST_REQUIRE(rec.Start().ok());
  api.AddFault(R"({"method":"POST","path":"events$","status":503,"count":1000})");
  rec.Record(EventType::kWarning, kReasonHcuUnhealthy, kActionHealthCheck, "unreachable");
  int expected = 0;
  for (int attempt = 1; attempt <= 4; ++attempt) {
    // The attempt's POST, then the recorder waits (on its clock) for the
    // next one; a nested client retry would show as more POSTs here.
    ++expected;
    BOOST_REQUIRE(
        Eventually([&] { return CountRequests(api.Requests(), "POST", kEvents) >= expected; }));
    if (attempt == 4) break;
    BOOST_REQUIRE(clock.WaitForSleepers(1, milliseconds(5000)));
    BOOST_TEST(CountRequests(api.Requests(), "POST", kEvents) == expected);
    clock.Advance(seconds(10));
  }
  // 30 s after the first attempt a fourth one ran; a fifth would start at
  // 40 s, past give_up_after (35 s): given up, not waited for.
  BOOST_REQUIRE(rec.WaitIdle(milliseconds(5000)));
  BOOST_TEST(CountRequests(api.Requests(), "POST", kEvents) == 4);
  BOOST_TEST(rec.stats().failed == 1u);
  BOOST_TEST(rec.stats().created == 0u);
  api.ClearFaults();
}

// API Priority and Fairness answers 429 when the server is busy, and 500
// is a server error: both are "cannot reach the server" (node_events.h),
// retried after retry_delay, not dropped at once.
BOOST_AUTO_TEST_CASE(throttled_and_server_error_answers_are_retried) {
  for (int status : {429, 500}) {
    BOOST_TEST_CONTEXT("HTTP " << status) {
      api.ClearRequests();
      SimClock clock;
      EventRecorderOptions o = Options("throttled-node-" + std::to_string(status));
      EventRecorder rec(o, clock);
      BOOST_REQUIRE(rec.Start().ok());
      api.AddFault(R"({"method":"POST","path":"events$","status":)" + std::to_string(status) +
                   R"(,"count":1})");
      rec.Record(EventType::kWarning, kReasonHcuUnhealthy, kActionHealthCheck, "busy");
      BOOST_REQUIRE(
          Eventually([&] { return CountRequests(api.Requests(), "POST", kEvents) >= 1; }));
      // The retry waits retry_delay on the recorder's clock.
      if (clock.WaitForSleepers(1, milliseconds(2000))) clock.Advance(o.retry_delay);
      BOOST_REQUIRE(rec.WaitIdle(milliseconds(5000)));
      BOOST_TEST(CountRequests(api.Requests(), "POST", kEvents) == 2);
      BOOST_TEST(rec.stats().created == 1u);
      BOOST_TEST(rec.stats().failed == 0u);
      rec.Stop();
      api.ClearFaults();
    }
  }
}

// The API server stores the Event but answers after the client's timeout:
// the retry meets AlreadyExists. The Event is there: counted created, and
// the next occurrence continues it as a series, not as a second Event.
BOOST_AUTO_TEST_CASE(a_create_whose_answer_was_lost_continues_as_a_series) {
  KubeClientOptions co;
  co.request_timeout_ms = 300;
  co.retry_policy = testing::ExactPolicy(co);
  auto slow_client = std::move(KubeClient::New(testing::ConfigFor(api), co).value());
  SimClock clock;
  EventRecorderOptions o = Options("lost-answer-node");
  o.client = slow_client.get();
  EventRecorder rec(o, clock);
  BOOST_REQUIRE(rec.Start().ok());
  api.AddFault(R"({"method":"POST","path":"events$","delay_ms":800,"count":1})");
  rec.Record(EventType::kWarning, kReasonHcuUnhealthy, kActionHealthCheck, "slow server");
  BOOST_REQUIRE(Eventually([&] { return CoreEvents("lost-answer-node")["items"].Size() == 1u; }));
  // Through the retry's wait (and any further one, should a loaded machine
  // make the retry miss the short timeout too) until the create is settled.
  BOOST_REQUIRE(testing::AdvanceUntil(
      clock, [&] { return rec.stats().created + rec.stats().failed >= 1; }, o.retry_delay));
  BOOST_REQUIRE(rec.WaitIdle(milliseconds(5000)));
  rec.Record(EventType::kWarning, kReasonHcuUnhealthy, kActionHealthCheck, "slow server");
  BOOST_REQUIRE(rec.WaitIdle(milliseconds(5000)));
  BOOST_TEST(rec.stats().failed == 0u);
  BOOST_TEST(rec.stats().created == 1u);
  auto d = CoreEvents("lost-answer-node");
  BOOST_TEST(d["items"].Size() == 1u);
  rec.Stop();
  api.ClearFaults();
}

// --events=auto: credentials the API server refuses turn events off after
// the first refusal; without off_when_refused each event is tried alone.
BOOST_AUTO_TEST_CASE(refused_credentials_turn_an_auto_recorder_off) {
  SimClock clock;
  EventRecorderOptions o = Options("refused-node");
  o.off_when_refused = true;
  EventRecorder rec(o, clock);
  BOOST_REQUIRE(rec.Start().ok());
  api.AddFault(R"({"method":"POST","path":"events$","status":403,"count":1000})");
  BOOST_TEST(rec.Record(EventType::kWarning, kReasonHcuUnhealthy, kActionHealthCheck, "one"));
  BOOST_REQUIRE(rec.WaitIdle(milliseconds(5000)));
  BOOST_TEST(rec.stats().failed == 1u);
  BOOST_TEST(!rec.Record(EventType::kWarning, kReasonHcuUnhealthy, kActionHealthCheck, "two"));
  BOOST_REQUIRE(rec.WaitIdle(milliseconds(5000)));
  BOOST_TEST(CountRequests(api.Requests(), "POST", kEvents) == 1);

  EventRecorderOptions strict = Options("refused-strict-node");
  EventRecorder on(strict, clock);
  BOOST_REQUIRE(on.Start().ok());
  api.ClearRequests();
  BOOST_TEST(on.Record(EventType::kWarning, kReasonHcuUnhealthy, kActionHealthCheck, "one"));
  BOOST_REQUIRE(on.WaitIdle(milliseconds(5000)));
  BOOST_TEST(on.Record(EventType::kWarning, kReasonHcuUnhealthy, kActionHealthCheck, "two"));
  BOOST_REQUIRE(on.WaitIdle(milliseconds(5000)));
  BOOST_TEST(CountRequests(api.Requests(), "POST", kEvents) == 2);
  BOOST_TEST(on.stats().failed == 2u);
  api.ClearFaults();
}

BOOST_AUTO_TEST_CASE(full_queue_drops_and_a_silent_server_does_not_delay_stop) {
  EventRecorderOptions o = Options("silent-node");
  o.queue_size = 3;
  EventRecorder rec(o);
  BOOST_REQUIRE(rec.Start().ok());
  api.NeverAnswer("POST", "events$");
  rec.Record(EventType::kWarning, kReasonHcuUnhealthy, kActionHealthCheck, "stuck");
  BOOST_REQUIRE(Eventually([&] { return CountRequests(api.Requests(), "POST", kEvents) == 1; }));
  int accepted = 0;
  for (int i = 0; i < 10; ++i) {
    accepted += rec.Record(EventType::kWarning, kReasonHcuUnhealthy, kActionHealthCheck,
                           "queued " + std::to_string(i));
  }
  BOOST_TEST(accepted == 3);
  BOOST_TEST(rec.stats().dropped_full == 7u);
  const auto t0 = std::chrono::steady_clock::now();
  rec.Stop();
  const auto ms =
      std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - t0).count();
  BOOST_TEST(ms < 1000, "Stop took " << ms << " ms");
  BOOST_TEST(!rec.Record(EventType::kNormal, kReasonHcuHealthy, kActionHealthCheck, "late"));
  api.ClearFaults();
}

// A node name may be 253 characters (a DNS subdomain); the Event's name
// must be one too. "<node>.<16 hex digits>" of a 245-character node would
// be 262, which the API server refuses (422), losing every event.
BOOST_AUTO_TEST_CASE(a_long_node_name_still_gives_a_valid_event_name) {
  const std::string label(60, 'a');
  // 245 characters; cut to fit, it would end in the '-' after the b's.
  const std::string node =
      label + "." + label + "." + label + "." + std::string(52, 'b') + "-" + std::string(9, 'c');
  EventRecorder rec(Options(node));
  BOOST_REQUIRE(rec.Start().ok());
  BOOST_TEST(rec.Record(EventType::kWarning, kReasonHcuUnhealthy, kActionHealthCheck, "n"));
  BOOST_TEST(rec.Record(EventType::kNormal, kReasonHcuHealthy, kActionHealthCheck, "n"));
  BOOST_REQUIRE(rec.WaitIdle(milliseconds(5000)));
  auto d = CoreEvents(node);
  BOOST_REQUIRE(d["items"].Size() == 2u);
  std::set<std::string> names;
  for (const auto& ev : d["items"].GetArray()) {
    const std::string name = ev["metadata"]["name"].GetString();
    names.insert(name);
    BOOST_TEST(name.size() <= 253u, name);
    BOOST_TEST(name.rfind(node.substr(0, 180), 0) == 0u, name);
    // Every dot-separated label begins and ends with a letter or digit.
    BOOST_TEST(name.find(".-") == std::string::npos, name);
    BOOST_TEST(name.find("-.") == std::string::npos, name);
    BOOST_TEST(name.find("..") == std::string::npos, name);
  }
  BOOST_TEST(names.size() == 2u);  // still unique
}

BOOST_AUTO_TEST_CASE(kubectl_describe_node_shows_the_event) {
  const std::string kubectl = HCUDP_KUBECTL;
  if (kubectl.empty() || !testing::PathExists(kubectl)) {
    BOOST_TEST_MESSAGE("no kubectl on this machine; skipped");
    return;
  }
  api.MustRequest("POST", "/api/v1/nodes", R"({"metadata":{"name":"kubectl-node"}})");
  EventRecorder rec(Options("kubectl-node"));
  BOOST_REQUIRE(rec.Start().ok());
  const std::string note = "card 0000:09:00.0 (index 0, K100_AI) is Unhealthy: ECC uncorrectable";
  for (int i = 0; i < 2; ++i) {
    rec.Record(EventType::kWarning, kReasonHcuUnhealthy, kActionHealthCheck, note);
  }
  BOOST_REQUIRE(rec.WaitIdle(milliseconds(5000)));
  auto r = testing::Run({"/usr/bin/timeout", "30", kubectl, "--kubeconfig", api.kubeconfig_path(),
                         "--request-timeout=10s", "describe", "node", "kubectl-node"});
  BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
  const size_t events = r.out.find("\nEvents:\n");
  BOOST_TEST_REQUIRE(events != std::string::npos, r.out);
  const std::string tail = r.out.substr(events);
  BOOST_TEST(tail.find("Warning  HCUUnhealthy") != std::string::npos, tail);
  BOOST_TEST(tail.find("(x2 over") != std::string::npos, tail);
  BOOST_TEST(tail.find("hygon.com/hcu-device-plugin") != std::string::npos, tail);
  BOOST_TEST(tail.find(note) != std::string::npos, tail);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp
