// SlicePublisher against the fake API server: create, generation bump on a
// change, no write when unchanged, recovery after the node's slices are
// deleted, the taint-dropped fallback, the split, and a slow or absent API
// server (bounded), a 409 Conflict on update and a watch answered 410 Gone.
#include "hcudp/dra/slice_publisher.h"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <set>
#include <string>

#include "dra_slices/many_cards.h"
#include "dra_slices/sim_inventory.h"
#include "hcudp/backend.h"
#include "kube/kube_test_util.h"

namespace hcudp::dra {
namespace {

using testing::DiscoverSimNode;

using testing::FakeApiServer;
using testing::FakeRequest;

struct StoredPool {
  std::vector<std::string> names;  // slice names
  std::set<int64_t> generations;
  std::set<int64_t> counts;          // resourceSliceCount values
  std::vector<std::string> devices;  // device names over all slices
  std::set<std::string> tainted;     // devices with taints
};

StoredPool Stored(FakeApiServer& api, const std::string& node) {
  std::string body = api.MustRequest(
      "GET", "/apis/resource.k8s.io/v1/resourceslices?fieldSelector=spec.nodeName%3D" + node);
  rapidjson::Document d;
  d.Parse(body.c_str());
  BOOST_REQUIRE(d.IsObject());
  StoredPool p;
  for (const auto& item : d["items"].GetArray()) {
    p.names.push_back(item["metadata"]["name"].GetString());
    p.generations.insert(item["spec"]["pool"]["generation"].GetInt64());
    p.counts.insert(item["spec"]["pool"]["resourceSliceCount"].GetInt64());
    for (const auto& dev : item["spec"]["devices"].GetArray()) {
      p.devices.push_back(dev["name"].GetString());
      if (dev.HasMember("taints")) p.tainted.insert(dev["name"].GetString());
    }
  }
  return p;
}

int Writes(const std::vector<FakeRequest>& log) {
  int n = 0;
  for (const FakeRequest& r : log) {
    if (r.path.find("/resourceslices") == std::string::npos) continue;
    if (r.method == "POST" || r.method == "PUT" || r.method == "DELETE" || r.method == "PATCH") {
      ++n;
    }
  }
  return n;
}

// The watches of ResourceSlices in `log`.
int SliceWatches(const std::vector<FakeRequest>& log) {
  int n = 0;
  for (const FakeRequest& r : log) {
    if (r.watch && r.path.find("/resourceslices") != std::string::npos) ++n;
  }
  return n;
}

// A publisher whose schedules (backoff, watch pauses) run on a SimClock; its
// client retries nothing, so every failure reaches the publisher. The client
// is declared first: it outlives the publisher.
struct PublisherOnClock {
  testing::SimClock clock;
  std::unique_ptr<KubeClient> client;
  std::unique_ptr<SlicePublisher> pub;
};

struct PublisherFixture : testing::ApiFixture {
  std::unique_ptr<SlicePublisher> New(
      const std::string& node, std::chrono::milliseconds sync_timeout = std::chrono::seconds(5),
      bool watch = true) {
    SlicePublisherOptions o;
    o.params.node_name = node;
    o.sync_timeout = sync_timeout;
    o.watch = watch;
    auto p = SlicePublisher::New(*client, o);
    BOOST_REQUIRE_MESSAGE(p.ok(), p.status().ToString());
    return std::move(p).value();
  }

  // `o` with the clock set here; `t` must stay where it is while it runs.
  // The client's retry policy (every pause of the publisher) runs from
  // `initial_backoff` doubling to `max_backoff`, without jitter.
  void MakeOnClock(PublisherOnClock& t, SlicePublisherOptions o,
                   std::chrono::milliseconds initial_backoff = std::chrono::milliseconds(20),
                   std::chrono::milliseconds max_backoff = std::chrono::milliseconds(100)) {
    KubeClientOptions co = testing::FastOptions();
    co.initial_backoff_ms = static_cast<int>(initial_backoff.count());
    co.max_backoff_ms = static_cast<int>(max_backoff.count());
    co.max_retries = 0;
    co.clock = &t.clock;
    t.client = testing::ClientFor(testing::ConfigFor(api), co);
    o.clock = &t.clock;
    auto p = SlicePublisher::New(*t.client, o);
    BOOST_REQUIRE_MESSAGE(p.ok(), p.status().ToString());
    t.pub = std::move(p).value();
  }
  void SetGates(bool taints) {
    api.MustRequest("POST", "/_fake/gates",
                    std::string(R"({"DRADeviceTaints":)") + (taints ? "true" : "false") + "}");
  }
  ~PublisherFixture() { SetGates(true); }
};

BOOST_FIXTURE_TEST_SUITE(slice_publisher, PublisherFixture)

BOOST_AUTO_TEST_CASE(publishes_then_bumps_generation_only_on_change) {
  auto pub = New("pub-change");
  NodeInventory inv = DiscoverSimNode("demo/nodes/k100ai-8-probe-order.yaml");
  BOOST_REQUIRE_MESSAGE(pub->SyncNow(inv).ok(), pub->state().last_status.ToString());
  StoredPool first = Stored(api, "pub-change");
  BOOST_TEST(first.names.size() == 1u);
  BOOST_TEST(first.devices.size() == 9u);  // 7 whole cards + 2 vHCUs
  BOOST_TEST((first.generations == std::set<int64_t>{1}));
  BOOST_TEST(pub->state().generation == 1);

  // Unchanged: one LIST, no write.
  api.ClearRequests();
  BOOST_REQUIRE(pub->SyncNow(inv).ok());
  auto log = api.Requests();
  BOOST_TEST(Writes(log) == 0);
  BOOST_TEST(log.size() == 1u);
  BOOST_TEST(Stored(api, "pub-change").names == first.names);

  // A health change: a new generation, written over the same slice.
  inv.cards[0].health = Health::kUnhealthy;
  api.ClearRequests();
  BOOST_REQUIRE(pub->SyncNow(inv).ok());
  StoredPool second = Stored(api, "pub-change");
  BOOST_TEST((second.generations == std::set<int64_t>{2}));
  BOOST_TEST(second.names == first.names);
  BOOST_TEST((second.tainted == std::set<std::string>{"hcu-0000-69-00-0"}));
  BOOST_TEST(testing::CountRequests(api.Requests(), "PUT",
                                    "/apis/resource.k8s.io/v1/resourceslices/" + first.names[0]) ==
             1);

  // The server's timeAdded on the taint does not count as a difference.
  api.ClearRequests();
  BOOST_REQUIRE(pub->SyncNow(inv).ok());
  BOOST_TEST(Writes(api.Requests()) == 0);

  // Healthy again: the taint goes, in a new generation.
  inv.cards[0].health = Health::kHealthy;
  BOOST_REQUIRE(pub->SyncNow(inv).ok());
  StoredPool third = Stored(api, "pub-change");
  BOOST_TEST(third.tainted.empty());
  BOOST_TEST((third.generations == std::set<int64_t>{3}));
}

BOOST_AUTO_TEST_CASE(dropped_taints_fall_back_to_leaving_the_card_out) {
  SetGates(false);
  auto pub = New("pub-gate-off");
  NodeInventory inv = DiscoverSimNode("demo/nodes/k100ai-8-probe-order.yaml");
  inv.cards[1].health = Health::kUnhealthy;  // 0000:09:00.0
  BOOST_REQUIRE_MESSAGE(pub->SyncNow(inv).ok(), pub->state().last_status.ToString());
  StoredPool p = Stored(api, "pub-gate-off");
  BOOST_TEST(pub->state().taints_dropped);
  BOOST_TEST(p.tainted.empty());
  BOOST_TEST(std::count(p.devices.begin(), p.devices.end(), "hcu-0000-09-00-0") == 0);
  BOOST_TEST(p.devices.size() == 8u);
  BOOST_TEST((p.generations == std::set<int64_t>{2}));  // written with the taint, then without
  // Stable afterwards: no flapping between the two shapes.
  api.ClearRequests();
  BOOST_REQUIRE(pub->SyncNow(inv).ok());
  BOOST_TEST(Writes(api.Requests()) == 0);
}

BOOST_AUTO_TEST_CASE(large_pool_splits_and_shrinks) {
  auto pub = New("pub-split");
  NodeInventory inv = ManyCards(200);
  inv.cards[150].health = Health::kUnhealthy;
  BOOST_REQUIRE_MESSAGE(pub->SyncNow(inv).ok(), pub->state().last_status.ToString());
  StoredPool big = Stored(api, "pub-split");
  BOOST_TEST(big.names.size() == 3u);  // 128, then the tainted one's slice holds at most 64
  BOOST_TEST((big.counts == std::set<int64_t>{3}));
  BOOST_TEST(big.generations.size() == 1u);
  BOOST_TEST(big.devices.size() == 200u);
  BOOST_TEST(std::set<std::string>(big.devices.begin(), big.devices.end()).size() == 200u);

  BOOST_REQUIRE(pub->SyncNow(ManyCards(10)).ok());
  StoredPool small = Stored(api, "pub-split");
  BOOST_TEST(small.names.size() == 1u);
  BOOST_TEST((small.counts == std::set<int64_t>{1}));
  BOOST_TEST(*small.generations.begin() > *big.generations.begin());
  BOOST_TEST(small.devices.size() == 10u);
}

BOOST_AUTO_TEST_CASE(worker_recovers_after_the_nodes_slices_are_deleted) {
  // No watch: the coordinator's RequestResync (on a kubelet restart) is
  // what restores them.
  auto pub = New("pub-wipe", std::chrono::seconds(5), /*watch=*/false);
  pub->Start();
  uint64_t seq = pub->SetInventory(DiscoverSimNode("demo/nodes/k100ai-8.yaml"));
  BOOST_REQUIRE(pub->WaitSynced(seq, Clock::Real().Now() + std::chrono::seconds(10)));
  StoredPool before = Stored(api, "pub-wipe");
  BOOST_REQUIRE(before.names.size() == 1u);
  const int64_t gen = pub->state().generation;

  // Kubelet restart: it deletes the node's slices; the coordinator asks
  // for a resync.
  api.MustRequest("DELETE", "/apis/resource.k8s.io/v1/resourceslices/" + before.names[0]);
  BOOST_REQUIRE(Stored(api, "pub-wipe").names.empty());
  pub->RequestResync();
  BOOST_TEST(testing::PollUntil([&] { return Stored(api, "pub-wipe").names.size() == 1u; }));
  StoredPool after = Stored(api, "pub-wipe");
  BOOST_TEST(after.devices == before.devices);
  BOOST_TEST(*after.generations.begin() > gen);

  // An inventory change reaches the server through the worker too.
  NodeInventory inv = DiscoverSimNode("demo/nodes/k100ai-8.yaml");
  inv.cards[3].health = Health::kUnhealthy;
  seq = pub->SetInventory(inv);
  BOOST_REQUIRE(pub->WaitSynced(seq, Clock::Real().Now() + std::chrono::seconds(10)));
  BOOST_TEST(Stored(api, "pub-wipe").tainted.size() == 1u);
  pub->Stop();
}

// Start -> slices published (the issue's bound is 200 ms): a new client and
// publisher, Start, SetInventory, until the pool is on the server, against
// the loopback fake. The inventory is discovered beforehand (discovery is
// not the publisher's time). Median of 7, printed; bounded loosely here
// (shared CI machines), the figure goes to BENCHMARKS.md.
BOOST_AUTO_TEST_CASE(start_to_slices_published_is_fast) {
  const NodeInventory inv = DiscoverSimNode("demo/nodes/k100ai-8-probe-order.yaml");
  std::vector<int64_t> ms;
  for (int i = 0; i < 7; ++i) {
    const auto start = std::chrono::steady_clock::now();
    auto c = testing::ClientFor(testing::ConfigFor(api));
    SlicePublisherOptions o;
    o.params.node_name = "pub-start-" + std::to_string(i);
    auto pub = SlicePublisher::New(*c, o);
    BOOST_REQUIRE(pub.ok());
    (*pub)->Start();
    uint64_t seq = (*pub)->SetInventory(inv);
    BOOST_REQUIRE((*pub)->WaitSynced(seq, Clock::Real().Now() + std::chrono::seconds(10)));
    ms.push_back(testing::MillisSince(start));
    BOOST_TEST(Stored(api, o.params.node_name).devices.size() == 9u);
  }
  std::sort(ms.begin(), ms.end());
  BOOST_TEST_MESSAGE("start -> slices published: median " << ms[3] << " ms, max " << ms.back()
                                                          << " ms (7 runs)");
  BOOST_TEST(ms[3] < 1000);
}

BOOST_AUTO_TEST_CASE(watch_restores_deleted_slices_without_being_asked) {
  auto pub = New("pub-watch");
  pub->Start();
  uint64_t seq = pub->SetInventory(ManyCards(4));
  BOOST_REQUIRE(pub->WaitSynced(seq, Clock::Real().Now() + std::chrono::seconds(10)));
  StoredPool before = Stored(api, "pub-watch");
  BOOST_REQUIRE(before.names.size() == 1u);
  // Let the watch be open before the deletion (it is a separate stream).
  BOOST_REQUIRE(testing::PollUntil([&] {
    for (const FakeRequest& r : api.Requests()) {
      if (r.watch && r.path.find("/resourceslices") != std::string::npos) return true;
    }
    return false;
  }));
  api.MustRequest("DELETE", "/apis/resource.k8s.io/v1/resourceslices/" + before.names[0]);
  const auto deleted = std::chrono::steady_clock::now();
  BOOST_TEST(testing::PollUntil([&] { return Stored(api, "pub-watch").names.size() == 1u; }));
  BOOST_TEST_MESSAGE("deleted -> republished: " << testing::MillisSince(deleted) << " ms");
  BOOST_TEST(testing::MillisSince(deleted) < 5000);  // resync_interval is 30 s
  BOOST_TEST(Stored(api, "pub-watch").devices == before.devices);
  pub->Stop();
}

// 409 Conflict on the update (someone else wrote the slice in between): the
// sync re-lists and writes again, and the change lands.
BOOST_AUTO_TEST_CASE(a_conflict_on_update_is_relisted_and_written_again) {
  auto pub = New("pub-conflict");
  NodeInventory inv = ManyCards(2);
  BOOST_REQUIRE(pub->SyncNow(inv).ok());
  const std::string slice = Stored(api, "pub-conflict").names.at(0);
  inv.cards[0].health = Health::kUnhealthy;
  api.AddFault(R"({"method":"PUT","path":"/resourceslices/","status":409,"count":1})");
  api.ClearRequests();
  Status st = pub->SyncNow(inv);
  api.ClearFaults();
  BOOST_REQUIRE_MESSAGE(st.ok(), st.ToString());
  const auto log = api.Requests();
  BOOST_TEST(
      testing::CountRequests(log, "PUT", "/apis/resource.k8s.io/v1/resourceslices/" + slice) == 2);
  BOOST_TEST(testing::CountRequests(log, "GET", "/apis/resource.k8s.io/v1/resourceslices") >= 2);
  StoredPool after = Stored(api, "pub-conflict");
  BOOST_TEST((after.tainted == std::set<std::string>{CardDeviceName(inv.cards[0].bdf)}));
  BOOST_TEST((after.generations == std::set<int64_t>{2}));
}

// 410 Gone on the watch (the server compacted past our resourceVersion):
// the publisher LISTs again and watches from the list's version, and a
// deletion after that is still noticed and repaired.
BOOST_AUTO_TEST_CASE(a_watch_answered_410_gone_restarts_from_scratch) {
  auto pub = New("pub-gone");
  pub->Start();
  uint64_t seq = pub->SetInventory(ManyCards(2));
  BOOST_REQUIRE(pub->WaitSynced(seq, Clock::Real().Now() + std::chrono::seconds(10)));
  auto watches = [&](bool with_version) {
    int n = 0;
    for (const FakeRequest& r : api.Requests()) {
      if (!r.watch || r.path.find("/resourceslices") == std::string::npos) continue;
      const bool versioned = r.query.find("resourceVersion=") != std::string::npos &&
                             r.query.find("resourceVersion=&") == std::string::npos &&
                             r.query.find("resourceVersion=0") == std::string::npos;
      if (versioned == with_version) ++n;
    }
    return n;
  };
  BOOST_REQUIRE(testing::PollUntil([&] { return watches(false) + watches(true) >= 1; }));
  // Let a bookmark or event give the watch a resourceVersion to resume from.
  api.MustRequest("POST", "/apis/resource.k8s.io/v1/resourceslices",
                  R"({"metadata":{"name":"other-node-slice"},"spec":{"driver":"dra.hygon.com",)"
                  R"("nodeName":"pub-gone-other","pool":{"name":"pub-gone-other","generation":1,)"
                  R"("resourceSliceCount":1},"devices":[]}})");
  api.AddFault(R"({"method":"GET","path":"/resourceslices","query":"watch=true","status":410,)"
               R"("count":1})");
  api.ClearRequests();
  api.CloseWatches();
  // The resumed watch gets 410; then a LIST, and a watch from its version.
  BOOST_REQUIRE(testing::PollUntil([&] {
    return testing::CountRequests(api.Requests(), "GET", "/apis/resource.k8s.io/v1/resourceslices",
                                  /*watch=*/false) >= 1 &&
           watches(true) >= 2;
  }));
  api.ClearFaults();
  const std::string slice = Stored(api, "pub-gone").names.at(0);
  api.MustRequest("DELETE", "/apis/resource.k8s.io/v1/resourceslices/" + slice);
  BOOST_TEST(testing::PollUntil([&] { return Stored(api, "pub-gone").names.size() == 1u; }));
  BOOST_TEST(Stored(api, "pub-gone").devices.size() == 2u);
  pub->Stop();
}

BOOST_AUTO_TEST_CASE(a_slice_of_another_pool_name_is_deleted) {
  api.MustRequest("POST", "/apis/resource.k8s.io/v1/resourceslices",
                  R"({"metadata":{"name":"stale-pool-slice"},"spec":{"driver":"dra.hygon.com",)"
                  R"("nodeName":"pub-foreign","pool":{"name":"old-name","generation":9,)"
                  R"("resourceSliceCount":1},"devices":[]}})");
  auto pub = New("pub-foreign");
  BOOST_REQUIRE(pub->SyncNow(ManyCards(2)).ok());
  StoredPool p = Stored(api, "pub-foreign");
  BOOST_TEST(p.names.size() == 1u);
  BOOST_TEST(p.names[0] != "stale-pool-slice");
  BOOST_TEST(p.devices.size() == 2u);
}

BOOST_AUTO_TEST_CASE(a_silent_api_server_bounds_the_sync) {
  auto pub = New("pub-silent", std::chrono::milliseconds(500));
  api.NeverAnswer("", "/resourceslices");
  const auto start = std::chrono::steady_clock::now();
  Status s = pub->SyncNow(ManyCards(2));
  const int64_t took = testing::MillisSince(start);
  api.ClearFaults();
  BOOST_TEST(!s.ok());
  BOOST_TEST((s.code() == StatusCode::kDeadlineExceeded), s.ToString());
  BOOST_TEST(took < 2000);
  BOOST_TEST(pub->SyncNow(ManyCards(2)).ok());
}

BOOST_AUTO_TEST_CASE(worker_retries_until_the_api_server_answers_and_stop_is_bounded) {
  auto pub = New("pub-retry", std::chrono::milliseconds(300));
  // Every LIST fails 503 for a while (the client's own retries included).
  api.AddFault(R"({"method":"GET","path":"/resourceslices","status":503,"count":12})");
  pub->Start();
  uint64_t seq = pub->SetInventory(ManyCards(3));
  BOOST_REQUIRE(pub->WaitSynced(seq, Clock::Real().Now() + std::chrono::seconds(15)));
  BOOST_TEST(Stored(api, "pub-retry").devices.size() == 3u);
  BOOST_TEST(pub->state().syncs >= 2u);

  // Stop while a call hangs returns promptly.
  api.NeverAnswer("", "/resourceslices");
  pub->RequestResync();
  BOOST_TEST(testing::PollUntil([&] {
    for (const FakeRequest& r : api.Requests()) {
      if (r.method == "GET" && r.path.find("/resourceslices") != std::string::npos) return true;
    }
    return false;
  }));
  const auto stop_start = std::chrono::steady_clock::now();
  pub->Stop();
  BOOST_TEST(testing::MillisSince(stop_start) < 1000);
  api.ClearFaults();
}

// The retry schedule on the publisher's clock: three failed syncs, then
// success after exactly 200 + 400 + 800 (capped) ms of simulated time.
BOOST_AUTO_TEST_CASE(failed_syncs_back_off_on_the_publishers_clock) {
  SlicePublisherOptions o;
  o.params.node_name = "pub-backoff";
  o.watch = false;
  const std::chrono::milliseconds max_backoff(800);
  PublisherOnClock t;
  MakeOnClock(t, o, std::chrono::milliseconds(200), max_backoff);
  api.AddFault(R"({"method":"GET","path":"/resourceslices","status":503,"count":3})");
  t.pub->SetInventory(ManyCards(1));
  const Clock::TimePoint start = t.clock.Now();
  t.pub->Start();
  // Bounded by the longest pause: the worker that succeeds goes straight
  // back to sleep until its 30 s resync, which must not be run too.
  BOOST_REQUIRE(testing::AdvanceUntil(
      t.clock, [&] { return t.pub->state().synced_sequence == 1; }, max_backoff));
  BOOST_TEST(std::chrono::duration_cast<std::chrono::milliseconds>(t.clock.Now() - start).count() ==
             1400);
  BOOST_TEST(t.pub->state().syncs == 4u);
  t.pub->Stop();
}

// A proxy or a broken API server that ends every watch at once with an empty
// 200: the watch is not opened again in a tight loop (hundreds of requests
// a second against the API server) but after the backoff, on the
// publisher's clock.
BOOST_AUTO_TEST_CASE(a_watch_that_ends_at_once_without_events_backs_off) {
  SlicePublisherOptions o;
  o.params.node_name = "pub-empty-watch";
  const std::chrono::milliseconds initial_backoff(200);
  PublisherOnClock t;
  MakeOnClock(t, o, initial_backoff, std::chrono::milliseconds(800));
  testing::SimClock& clock = t.clock;
  api.AddFault(R"({"method":"GET","path":"/resourceslices","query":"watch=true","status":200,)"
               R"("body":"","count":-1})");
  auto watches = [&] { return SliceWatches(api.Requests()); };
  t.pub->Start();
  BOOST_REQUIRE(testing::PollUntil([&] { return watches() >= 1; }));
  // The publisher's clock stands still: no second watch may come.
  BOOST_TEST(!testing::PollUntil([&] { return watches() >= 5; }, std::chrono::milliseconds(300)),
             watches() << " watches while the clock stood still");
  // After the backoff it watches again.
  BOOST_TEST(testing::AdvanceUntil(
      clock, [&] { return watches() >= 2; }, initial_backoff));
  t.pub->Stop();
}

// A server shedding load refuses the watch with 429 and Retry-After: the
// publisher comes back after that long (capped at retry_max), not after its
// own shorter backoff.
BOOST_AUTO_TEST_CASE(a_watch_refused_with_retry_after_waits_that_long) {
  SlicePublisherOptions o;
  o.params.node_name = "pub-retry-after";
  PublisherOnClock t;
  MakeOnClock(t, o, std::chrono::milliseconds(200), std::chrono::milliseconds(10000));
  testing::SimClock& clock = t.clock;
  api.AddFault(R"({"method":"GET","path":"/resourceslices","query":"watch=true","status":429,)"
               R"("retry_after":3,"count":1})");
  auto watches = [&] { return SliceWatches(api.Requests()); };
  t.pub->Start();
  BOOST_REQUIRE(testing::PollUntil([&] { return watches() >= 1; }));
  // Both threads asleep: the sync loop until its resync (30 s), the watch
  // loop for the Retry-After.
  BOOST_REQUIRE(clock.WaitForSleepers(2, std::chrono::milliseconds(5000)));
  const auto next = clock.NextDeadline();
  BOOST_REQUIRE(next.has_value());
  BOOST_TEST(std::chrono::duration_cast<std::chrono::milliseconds>(*next - clock.Now()).count() ==
             3000);
  BOOST_TEST(testing::AdvanceUntil(
      clock, [&] { return watches() >= 2; }, std::chrono::seconds(3)));
  t.pub->Stop();
}

// The driver's strings (the model from dmiDeviceInfo.name, up to 255 bytes;
// the serial; a version that is not semver) over the API's 64-byte limit of
// a string attribute: the pool is still published, with each cut to 64
// bytes, rather than the API server refusing every slice of the node.
BOOST_AUTO_TEST_CASE(driver_strings_over_64_bytes_are_cut_not_refused) {
  auto pub = New("pub-long");
  NodeInventory inv = ManyCards(2);
  inv.cards[0].model = "K100_AI " + std::string(90, 'x');
  inv.cards[1].serial = std::string(70, '7');
  inv.driver_version = "hygon driver build " + std::string(60, 'z');
  Status st = pub->SyncNow(inv);
  BOOST_REQUIRE_MESSAGE(st.ok(), st.ToString());
  std::string body = api.MustRequest(
      "GET", "/apis/resource.k8s.io/v1/resourceslices?fieldSelector=spec.nodeName%3Dpub-long");
  rapidjson::Document d;
  d.Parse(body.c_str());
  BOOST_REQUIRE(d.IsObject());
  int devices = 0;
  for (const auto& item : d["items"].GetArray()) {
    for (const auto& dev : item["spec"]["devices"].GetArray()) {
      ++devices;
      const auto& attrs = dev["attributes"];
      for (const char* key : {"productName", "uuid", "driverVersionString"}) {
        BOOST_REQUIRE_MESSAGE(attrs.HasMember(key), key);
        BOOST_TEST(attrs[key]["string"].GetStringLength() <= 64u, key);
      }
    }
  }
  BOOST_TEST(devices == 2);
}

// A broken answer from the API server is an error naming it, not a crash,
// and nothing is written on the strength of it.
BOOST_AUTO_TEST_CASE(a_broken_list_answer_is_a_clear_error) {
  auto pub = New("pub-broken");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"not json", "not a JSON object"},
      {R"({"kind":"ResourceSliceList"})", "no items array"},
      {R"({"items":[{"metadata":{"name":"x"},"spec":{"pool":{"name":"p"}}}]})",
       "spec.pool.generation"},
      {R"({"items":[7]})", "lacks metadata"},
  };
  for (const auto& [body, words] : cases) {
    BOOST_TEST_CONTEXT(body) {
      rapidjson::StringBuffer b;
      rapidjson::Writer<rapidjson::StringBuffer> w(b);
      w.StartObject();
      w.Key("method");
      w.String("GET");
      w.Key("path");
      w.String("/resourceslices");
      w.Key("status");
      w.Int(200);
      w.Key("body");
      w.String(body.c_str());
      w.EndObject();
      api.ClearRequests();
      api.AddFault(b.GetString());
      Status s = pub->SyncNow(ManyCards(1));
      BOOST_TEST(!s.ok());
      BOOST_TEST(s.message().find(words) != std::string::npos, s.ToString());
      BOOST_TEST(Writes(api.Requests()) == 0);
    }
  }
  api.ClearFaults();
  BOOST_TEST(pub->SyncNow(ManyCards(1)).ok());
}

BOOST_AUTO_TEST_CASE(bad_options_are_refused) {
  SlicePublisherOptions o;
  o.params.node_name = "Bad Name";
  BOOST_TEST(!SlicePublisher::New(*client, o).ok());
  o.params.node_name = "ok";
  o.sync_timeout = std::chrono::milliseconds(0);
  BOOST_TEST(!SlicePublisher::New(*client, o).ok());
}

BOOST_AUTO_TEST_SUITE_END()

struct Teardown : testing::SharedApiServerTeardown {};
BOOST_TEST_GLOBAL_FIXTURE(Teardown);

}  // namespace
}  // namespace hcudp::dra
