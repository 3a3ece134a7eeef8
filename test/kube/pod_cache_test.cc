// PodCache (LIST + WATCH reflector) against the fake kube-apiserver.
#include "hcudp/pod_cache.h"

#include <boost/test/unit_test.hpp>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "hcudp/kube_ops.h"
#include "kube/kube_test_util.h"

namespace hcudp {
namespace {

using testing::CountRequests;
using testing::Eventually;
using testing::PodJson;

// Records the callback's events as "added ns/name", "updated ...", "deleted ...".
class EventLog {
 public:
  void operator()(const PodEvent& e) {
    std::lock_guard<std::mutex> lock(mu_);
    const Pod& pod = e.new_pod ? *e.new_pod : *e.old_pod;
    const char* verb = e.type == PodEvent::Type::kAdded     ? "added"
                       : e.type == PodEvent::Type::kUpdated ? "updated"
                                                            : "deleted";
    lines_.push_back(std::string(verb) + " " + pod.metadata.namespace_name + "/" +
                     pod.metadata.name);
    if (e.type == PodEvent::Type::kUpdated) {
      updates_.push_back({*e.old_pod, *e.new_pod});
    }
  }
  std::vector<std::string> lines() {
    std::lock_guard<std::mutex> lock(mu_);
    return lines_;
  }
  std::vector<std::pair<Pod, Pod>> updates() {
    std::lock_guard<std::mutex> lock(mu_);
    return updates_;
  }
  bool Contains(const std::string& line) {
    auto l = lines();
    return std::find(l.begin(), l.end(), line) != l.end();
  }

 private:
  std::mutex mu_;
  std::vector<std::string> lines_;
  std::vector<std::pair<Pod, Pod>> updates_;
};

struct CacheFixture : testing::ApiFixture {
  // A cache of the pods on `node`, started and synced.
  std::unique_ptr<PodCache> StartCache(const std::string& node) {
    PodCacheOptions o;
    o.field_selector = "spec.nodeName=" + node;
    o.page_size = 2;
    o.on_event = [this](const PodEvent& e) { events(e); };
    auto cache = std::make_unique<PodCache>(client.get(), o);
    cache->Start();
    BOOST_REQUIRE(Eventually([&] { return cache->HasSynced(); }));
    return cache;
  }
  // LISTs the cache has started (first pages; later pages carry continue=).
  int ListsStarted() {
    int n = 0;
    for (const testing::FakeRequest& r : api.Requests()) {
      if (r.method == "GET" && r.path == "/api/v1/pods" && !r.watch &&
          r.query.find("continue=") == std::string::npos) {
        ++n;
      }
    }
    return n;
  }
  void CreatePod(const std::string& ns, const std::string& name, const std::string& node) {
    api.MustRequest("POST", "/api/v1/namespaces/" + ns + "/pods", PodJson(name, node));
  }
  EventLog events;
};

BOOST_FIXTURE_TEST_SUITE(pod_cache, CacheFixture)

BOOST_AUTO_TEST_CASE(initial_list_reports_existing_pods_of_the_node_only) {
  CreatePod("c1", "a", "cache-node-1");
  CreatePod("c1", "b", "cache-node-1");
  CreatePod("c2", "c", "cache-node-1");
  CreatePod("c1", "elsewhere", "another-node");
  auto cache = StartCache("cache-node-1");
  BOOST_TEST(cache->HasSynced());
  std::vector<std::string> names;
  for (const Pod& p : cache->List())
    names.push_back(p.metadata.namespace_name + "/" + p.metadata.name);
  BOOST_TEST((names == std::vector<std::string>{"c1/a", "c1/b", "c2/c"}));
  BOOST_TEST(cache->Get("c1", "a").has_value());
  BOOST_TEST(!cache->Get("c1", "elsewhere").has_value());
  BOOST_TEST(
      (events.lines() == std::vector<std::string>{"added c1/a", "added c1/b", "added c2/c"}));
}

BOOST_AUTO_TEST_CASE(watch_events_update_the_cache_with_old_and_new) {
  auto cache = StartCache("cache-node-2");
  CreatePod("w", "p", "cache-node-2");
  BOOST_REQUIRE(Eventually([&] { return cache->Get("w", "p").has_value(); }));
  api.MustRequest("PATCH", "/api/v1/namespaces/w/pods/p",
                  R"({"metadata":{"annotations":{"hami.io/bind-phase":"allocating"}}})",
                  "application/merge-patch+json");
  BOOST_REQUIRE(Eventually([&] { return !events.updates().empty(); }));
  auto [old_pod, new_pod] = events.updates().front();
  BOOST_TEST(old_pod.metadata.annotations.count("hami.io/bind-phase") == 0u);
  BOOST_TEST(new_pod.metadata.annotations.at("hami.io/bind-phase") == "allocating");
  BOOST_TEST(cache->Get("w", "p")->metadata.annotations.at("hami.io/bind-phase") == "allocating");
  api.MustRequest("DELETE", "/api/v1/namespaces/w/pods/p");
  BOOST_REQUIRE(Eventually([&] { return !cache->Get("w", "p").has_value(); }));
  BOOST_REQUIRE(Eventually([&] { return events.lines().size() == 3u; }));
  BOOST_TEST(
      (events.lines() == std::vector<std::string>{"added w/p", "updated w/p", "deleted w/p"}));
}

BOOST_AUTO_TEST_CASE(no_list_while_the_watch_is_healthy) {
  auto cache = StartCache("cache-node-3");
  for (int i = 0; i < 3; ++i) CreatePod("q", "p" + std::to_string(i), "cache-node-3");
  BOOST_REQUIRE(Eventually([&] { return cache->List().size() == 3u; }));
  BOOST_TEST(ListsStarted() == 1);
  BOOST_TEST(CountRequests(api.Requests(), "GET", "/api/v1/pods") == 1);
}

BOOST_AUTO_TEST_CASE(bookmarks_advance_the_resource_version) {
  auto cache = StartCache("cache-node-4");
  std::string before = cache->ResourceVersion();
  CreatePod("bm", "unrelated", "some-other-node");  // moves the global RV, no event for us
  BOOST_TEST(
      Eventually([&] { return std::stoll(cache->ResourceVersion()) > std::stoll(before); }, 3000));
  BOOST_TEST(events.lines().empty());
}

BOOST_AUTO_TEST_CASE(gone_relists_and_reports_what_was_missed) {
  CreatePod("g", "stays", "cache-node-5");
  CreatePod("g", "goes", "cache-node-5");
  auto cache = StartCache("cache-node-5");
  // The next watch is held for 400 ms and then answered 410 Gone; meanwhile
  // a pod is deleted, an event the cache never sees on a stream.
  api.AddFault(R"({"method":"GET","path":"^/api/v1/pods$","query":"watch=true",)"
               R"("status":410,"delay_ms":400,"count":1})");
  api.CloseWatches();
  api.MustRequest("DELETE", "/api/v1/namespaces/g/pods/goes");
  BOOST_REQUIRE(Eventually([&] { return ListsStarted() == 2; }));
  BOOST_REQUIRE(Eventually([&] { return !cache->Get("g", "goes").has_value(); }));
  BOOST_TEST(cache->Get("g", "stays").has_value());
  BOOST_TEST(Eventually([&] { return events.Contains("deleted g/goes"); }));
  BOOST_TEST(!events.Contains("updated g/stays"));  // unchanged: same resourceVersion
}

// After a 410 the cache may have missed events: it says so (not Current)
// until the relist is in; the relist waits a random part of relist_jitter
// (a fleet meeting a restarted API server does not relist together), and
// asks for resourceVersion=0, the server's watch cache, as client-go does.
BOOST_AUTO_TEST_CASE(after_gone_the_cache_is_not_current_until_a_spread_relist_from_the_cache) {
  testing::SimClock clock;
  KubeClientOptions client_options = testing::FastOptions();
  client_options.clock = &clock;
  auto sim_client = testing::ClientFor(testing::ConfigFor(api), client_options);
  PodCacheOptions o;
  o.field_selector = "spec.nodeName=cache-node-16";
  o.clock = &clock;
  o.relist_jitter = std::chrono::milliseconds(2000);
  PodCache cache(sim_client.get(), o);
  cache.Start();
  BOOST_REQUIRE(Eventually([&] { return cache.Current(); }));
  CreatePod("r", "seen", "cache-node-16");  // an event: the watch is past the LIST
  BOOST_REQUIRE(Eventually([&] { return cache.Get("r", "seen").has_value(); }));
  api.AddFault(R"({"method":"GET","path":"^/api/v1/pods$","query":"watch=true",)"
               R"("status":410,"count":1})");
  api.CloseWatches();
  BOOST_REQUIRE(clock.WaitForSleepers(1, std::chrono::milliseconds(5000)));  // the spread
  BOOST_TEST(!cache.Current());
  BOOST_TEST(cache.HasSynced());
  BOOST_TEST(ListsStarted() == 1);
  clock.Advance(std::chrono::milliseconds(2000));
  BOOST_REQUIRE(Eventually([&] { return cache.Current(); }));
  BOOST_TEST(ListsStarted() == 2);
  for (const testing::FakeRequest& r : api.Requests()) {
    if (r.path == "/api/v1/pods" && !r.watch) {
      BOOST_TEST(("&" + r.query + "&").find("&resourceVersion=0&") != std::string::npos, r.query);
    }
  }
  cache.Stop();
}

BOOST_AUTO_TEST_CASE(a_fresh_lists_version_refused_as_gone_is_relisted_after_a_backoff) {
  // Every watch is answered 410 Gone at once, even one from the resource
  // version of the LIST just made (a hostile or misrouted server): the cache
  // must pause before the next LIST, not list and watch in a hot loop.
  api.AddFault(R"({"method":"GET","path":"^/api/v1/pods$","query":"watch=true",)"
               R"("status":410,"count":-1})");
  testing::SimClock clock;  // never advanced here: a backoff does not end
  KubeClientOptions client_options = testing::FastOptions();
  client_options.clock = &clock;
  auto sim_client = testing::ClientFor(testing::ConfigFor(api), client_options);
  PodCacheOptions o;
  o.field_selector = "spec.nodeName=cache-node-9";
  o.clock = &clock;
  PodCache cache(sim_client.get(), o);
  cache.Start();
  BOOST_REQUIRE(Eventually([&] { return cache.HasSynced(); }));
  const bool paused = clock.WaitForSleepers(1, std::chrono::milliseconds(2000));
  const int lists = ListsStarted();
  cache.Stop();
  BOOST_TEST(paused);
  BOOST_TEST(lists == 1);
}

BOOST_AUTO_TEST_CASE(watches_the_server_keeps_ending_at_once_get_growing_pauses) {
  // Every watch is answered 200 with an empty body (a proxy that does not
  // stream): after three such ends the cache pauses, longer each time.
  api.AddFault(R"({"method":"GET","path":"^/api/v1/pods$","query":"watch=true",)"
               R"("status":200,"body":"","count":-1})");
  testing::SimClock clock;
  KubeClientOptions client_options = testing::FastOptions();
  client_options.clock = &clock;
  auto sim_client = testing::ClientFor(testing::ConfigFor(api), client_options);
  PodCacheOptions o;
  o.field_selector = "spec.nodeName=cache-node-10";
  o.clock = &clock;
  PodCache cache(sim_client.get(), o);
  cache.Start();
  std::vector<int64_t> pauses_ms;
  for (int i = 0; i < 4; ++i) {
    // The next pause: a deadline ahead of the simulated now.
    std::optional<Clock::TimePoint> next;
    BOOST_REQUIRE(Eventually([&] {
      next = clock.NextDeadline();
      return next && *next > clock.Now();
    }));
    const auto pause = *next - clock.Now();
    pauses_ms.push_back(std::chrono::duration_cast<std::chrono::milliseconds>(pause).count());
    clock.Advance(pause);
  }
  cache.Stop();
  // The client's retry policy (FastOptions: 20 ms doubling to 100 ms).
  BOOST_TEST(pauses_ms == (std::vector<int64_t>{20, 40, 80, 100}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(stream_error_relists_after_backoff) {
  auto cache = StartCache("cache-node-6");
  api.AddFault(R"({"method":"GET","path":"^/api/v1/pods$","query":"watch=true",)"
               R"("status":500,"count":1})");
  api.CloseWatches();
  BOOST_REQUIRE(Eventually([&] { return ListsStarted() == 2; }));
  CreatePod("e", "after", "cache-node-6");
  BOOST_TEST(Eventually([&] { return cache->Get("e", "after").has_value(); }));
}

// The server ends the stream (its timeout, a restart): the cache watches
// again from its version. At steady state a watch, and nothing else.
BOOST_AUTO_TEST_CASE(a_cleanly_ended_watch_is_reopened_from_its_version_without_a_list) {
  auto cache = StartCache("cache-node-14");
  const std::string version = cache->ResourceVersion();
  api.CloseWatches();
  CreatePod("c", "after-close", "cache-node-14");
  BOOST_REQUIRE(Eventually([&] { return cache->Get("c", "after-close").has_value(); }));
  BOOST_TEST(ListsStarted() == 1);
  int rewatches = 0;
  for (const testing::FakeRequest& r : api.Requests()) {
    if (r.watch && r.path == "/api/v1/pods" &&
        r.query.find("resourceVersion=" + version) != std::string::npos) {
      ++rewatches;
    }
  }
  BOOST_TEST(rewatches >= 1);
}

// An outage: every watch cut, then 503 for a while. The cache is current to
// its last version, so it watches again from there after the pauses; a LIST
// (the heaviest request) would only add load to a server coming back.
BOOST_AUTO_TEST_CASE(a_watch_cut_by_an_outage_is_watched_again_without_a_list) {
  auto cache = StartCache("cache-node-15");
  api.AddFault(R"({"method":"GET","path":"^/api/v1/pods$","query":"watch=true",)"
               R"("status":503,"count":3})");
  api.CloseWatches();
  BOOST_REQUIRE(
      Eventually([&] { return CountRequests(api.Requests(), "GET", "/api/v1/pods", true) >= 5; }));
  CreatePod("o", "after-outage", "cache-node-15");
  BOOST_REQUIRE(Eventually([&] { return cache->Get("o", "after-outage").has_value(); }));
  BOOST_TEST(ListsStarted() == 1);
}

BOOST_AUTO_TEST_CASE(failing_list_is_retried_until_synced) {
  api.AddFault(R"({"method":"GET","path":"^/api/v1/pods$","query":"limit","status":503,)"
               R"("count":6})");  // more than the client's own retries
  // The client's retries inside the LIST wait a ladder of the call (20, 40,
  // 80, 100 ms), the cache's pause after the failed LIST its own ladder's
  // first step (20 ms: client-go's REST client retries apart from a
  // reflector's backoff), and the next LIST's one retry a fresh ladder of
  // its own (20 ms), on one simulated clock: the schedule runs in no real
  // time.
  testing::SimClock clock;
  KubeClientOptions client_options = testing::FastOptions();
  client_options.clock = &clock;
  auto sim_client = testing::ClientFor(testing::ConfigFor(api), client_options);
  PodCacheOptions o;
  o.field_selector = "spec.nodeName=cache-node-7";
  o.clock = &clock;
  PodCache cache(sim_client.get(), o);
  const Clock::TimePoint start = clock.Now();
  cache.Start();
  // Steps of at most 100 ms, the schedule's longest backoff: whatever the
  // cache sleeps on once it has synced is not part of the schedule.
  BOOST_REQUIRE(testing::AdvanceUntil(
      clock, [&] { return cache.HasSynced(); }, std::chrono::milliseconds(100)));
  // Five failed attempts of the first LIST (one plus four client retries),
  // the cache's pause, a sixth failure and the client's retry that works.
  BOOST_TEST(ListsStarted() == 7);
  BOOST_TEST((clock.Now() - start == std::chrono::milliseconds(20 + 40 + 80 + 100 + 20 + 20)));
  cache.Stop();
}

// A watch that went silent (its peer gone, a proxy that dropped it) is
// ended after the client's stall timeout and watched again from the cache's
// version: changes made since reach the cache, and nothing is relisted.
BOOST_AUTO_TEST_CASE(a_stalled_watch_is_watched_again_from_where_it_was) {
  api.AddFault(R"({"method":"GET","path":"^/api/v1/pods$","query":"watch=true",)"
               R"("status":200,"stall":true,"count":1})");
  KubeClientOptions client_options = testing::FastOptions();  // server timeout 10 s (+30 s)
  client_options.watch_stall_timeout_s = 1;
  auto stall_client = testing::ClientFor(testing::ConfigFor(api), client_options);
  PodCacheOptions o;
  o.field_selector = "spec.nodeName=cache-node-11";
  PodCache cache(stall_client.get(), o);
  cache.Start();
  BOOST_REQUIRE(Eventually([&] { return cache.HasSynced(); }));
  CreatePod("s", "after-stall", "cache-node-11");
  BOOST_TEST(Eventually([&] { return cache.Get("s", "after-stall").has_value(); }, 10000));
  cache.Stop();
  BOOST_TEST(CountRequests(api.Requests(), "GET", "/api/v1/pods", true) >= 2);
  BOOST_TEST(ListsStarted() == 1);
}

// The pause the cache takes after its watch was refused with 429 and
// Retry-After: `retry_after_s` (simulated time).
int64_t PauseAfterWatch429(testing::FakeApiServer& api, int retry_after_s, int max_retry_after_ms) {
  api.AddFault(R"({"method":"GET","path":"^/api/v1/pods$","query":"watch=true",)"
               R"("status":429,"retry_after":)" +
               std::to_string(retry_after_s) + R"(,"count":1})");
  testing::SimClock clock;
  KubeClientOptions client_options = testing::FastOptions();
  client_options.clock = &clock;
  client_options.max_retry_after_ms = max_retry_after_ms;
  auto sim_client = testing::ClientFor(testing::ConfigFor(api), client_options);
  PodCacheOptions o;
  o.field_selector = "spec.nodeName=cache-node-12";
  o.clock = &clock;
  PodCache cache(sim_client.get(), o);
  cache.Start();
  std::optional<Clock::TimePoint> next;
  const bool paused = Eventually([&] {
    next = clock.NextDeadline();
    return next && *next > clock.Now();
  });
  const auto pause = paused ? *next - clock.Now() : Clock::TimePoint::duration(0);
  cache.Stop();
  BOOST_REQUIRE(paused);
  return std::chrono::duration_cast<std::chrono::milliseconds>(pause).count();
}

// An API server shedding load answers the watch 429 with Retry-After: the
// cache waits that long before its next request, not its own 20 ms.
BOOST_AUTO_TEST_CASE(a_watch_refused_with_retry_after_pauses_that_long) {
  BOOST_TEST(PauseAfterWatch429(api, 3, 10000) == 3000);
}

BOOST_AUTO_TEST_CASE(a_watch_retry_after_is_capped_at_the_longest_honoured) {
  BOOST_TEST(PauseAfterWatch429(api, 3600, 2000) == 2000);
}

// After that pause it asks for the watch again from its version: a LIST (a
// full read, from etcd) is the heaviest request to send a server that is
// shedding load, and nothing was missed.
BOOST_AUTO_TEST_CASE(a_watch_refused_with_retry_after_is_watched_again_without_a_list) {
  api.AddFault(R"({"method":"GET","path":"^/api/v1/pods$","query":"watch=true",)"
               R"("status":429,"retry_after":1,"count":1})");
  testing::SimClock clock;
  KubeClientOptions client_options = testing::FastOptions();
  client_options.clock = &clock;
  auto sim_client = testing::ClientFor(testing::ConfigFor(api), client_options);
  PodCacheOptions o;
  o.field_selector = "spec.nodeName=cache-node-13";
  o.clock = &clock;
  PodCache cache(sim_client.get(), o);
  cache.Start();
  BOOST_REQUIRE(clock.WaitForSleepers(1, std::chrono::milliseconds(5000)));
  clock.Advance(std::chrono::seconds(1));
  const bool rewatched =
      Eventually([&] { return CountRequests(api.Requests(), "GET", "/api/v1/pods", true) == 2; });
  cache.Stop();
  BOOST_TEST(rewatched);
  BOOST_TEST(ListsStarted() == 1);
}

BOOST_AUTO_TEST_CASE(stop_joins_promptly_during_a_watch) {
  auto cache = StartCache("cache-node-8");
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  auto start = std::chrono::steady_clock::now();
  cache->Stop();
  BOOST_TEST(testing::MillisSince(start) < 1000);
  cache->Stop();  // idempotent
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp
