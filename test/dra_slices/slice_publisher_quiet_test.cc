// SlicePublisher as one client of thousands (issue 24): at steady state a
// watch and nothing else, a cleanly ended watch resumed without a LIST, a
// 429's Retry-After honoured, no duplicate slice when a POST's answer is
// lost, and the Node owner followed when the Node is re-created or could not
// be read.
#include <rapidjson/document.h>

#include <boost/test/unit_test.hpp>
#include <chrono>
#include <set>
#include <string>

#include "dra_slices/many_cards.h"
#include "hcudp/dra/slice_publisher.h"
#include "kube/kube_test_util.h"

namespace hcudp::dra {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::FakeRequest;

constexpr char kSlices[] = "/apis/resource.k8s.io/v1/resourceslices";

int Lists(const std::vector<FakeRequest>& log) {
  return testing::CountRequests(log, "GET", kSlices, /*watch=*/false);
}
int Watches(const std::vector<FakeRequest>& log) {
  return testing::CountRequests(log, "GET", kSlices, /*watch=*/true);
}

// name -> the Node ownerReference's uid ("" none) of the node's slices.
std::map<std::string, std::string> Owners(testing::FakeApiServer& api, const std::string& node) {
  const std::string body =
      api.MustRequest("GET", std::string(kSlices) + "?fieldSelector=spec.nodeName%3D" + node);
  rapidjson::Document d;
  d.Parse(body.c_str());
  std::map<std::string, std::string> out;
  for (const auto& item : d["items"].GetArray()) {
    std::string uid;
    const auto& meta = item["metadata"];
    if (meta.HasMember("ownerReferences")) uid = meta["ownerReferences"][0]["uid"].GetString();
    out[meta["name"].GetString()] = uid;
  }
  return out;
}

std::string CreateNode(testing::FakeApiServer& api, const std::string& name) {
  rapidjson::Document d;
  d.Parse(api.MustRequest("POST", "/api/v1/nodes", testing::NodeJson(name)).c_str());
  return d["metadata"]["uid"].GetString();
}

struct QuietFixture : testing::ApiFixture {
  testing::SimClock clock;
  std::unique_ptr<KubeClient> sim_client;  // declared before the publisher: outlives it
  std::unique_ptr<SlicePublisher> pub;

  // A publisher on `clock` whose client retries nothing itself.
  void Make(SlicePublisherOptions o) {
    KubeClientOptions co = testing::FastOptions();
    co.max_retries = 0;
    co.clock = &clock;
    sim_client = testing::ClientFor(testing::ConfigFor(api), co);
    o.clock = &clock;
    auto p = SlicePublisher::New(*sim_client, o);
    BOOST_REQUIRE_MESSAGE(p.ok(), p.status().ToString());
    pub = std::move(p).value();
  }
  // A real-time publisher with a short resync.
  std::unique_ptr<SlicePublisher> RealTime(SlicePublisherOptions o) {
    auto p = SlicePublisher::New(*client, o);
    BOOST_REQUIRE_MESSAGE(p.ok(), p.status().ToString());
    return std::move(p).value();
  }
  bool WatchOpen() {
    return testing::PollUntil([&] { return Watches(api.Requests()) >= 1; });
  }
  ~QuietFixture() {
    if (pub) pub->Stop();
    api.Request("POST", "/_fake/gates", R"({"DRADeviceTaints":true})");
    api.Request("POST", "/_fake/version", R"({"gitVersion":"v1.32.0-fake"})");
  }
};

BOOST_FIXTURE_TEST_SUITE(slice_publisher_quiet, QuietFixture)

// The 30 s resync compares against the watched copy: minutes of steady
// state cost no LIST and no write (the bug: a LIST every 30 s per node).
BOOST_AUTO_TEST_CASE(steady_state_resyncs_send_no_request) {
  SlicePublisherOptions o;
  o.params.node_name = "quiet-steady";
  Make(o);
  pub->Start();
  const uint64_t seq = pub->SetInventory(ManyCards(2));
  BOOST_REQUIRE(testing::PollUntil([&] { return pub->state().synced_sequence >= seq; }));
  BOOST_REQUIRE(WatchOpen());
  // The watcher's LIST is in: the copy is trustworthy.
  BOOST_REQUIRE(testing::PollUntil([&] { return Lists(api.Requests()) >= 2; }));
  api.ClearRequests();
  for (int i = 0; i < 4; ++i) {
    const uint64_t syncs = pub->state().syncs;
    BOOST_REQUIRE(clock.WaitForSleepers(1, milliseconds(5000)));
    clock.Advance(o.resync_interval);
    BOOST_REQUIRE(testing::PollUntil([&] { return pub->state().syncs > syncs; }));
  }
  const auto log = api.Requests();
  BOOST_TEST(Lists(log) == 0);
  for (const FakeRequest& r : log) {
    BOOST_TEST((r.watch && r.method == "GET"), r.method << " " << r.path << "?" << r.query);
  }
  BOOST_TEST(pub->state().last_status.ok());
}

// The server ends the watch (its timeout, a restart): watched again from
// its last resourceVersion, no LIST.
BOOST_AUTO_TEST_CASE(a_cleanly_ended_watch_is_resumed_without_a_list) {
  SlicePublisherOptions o;
  o.params.node_name = "quiet-resume";
  auto p = RealTime(o);
  p->Start();
  const uint64_t seq = p->SetInventory(ManyCards(1));
  BOOST_REQUIRE(p->WaitSynced(seq, Clock::Real().Now() + seconds(10)));
  BOOST_REQUIRE(WatchOpen());
  BOOST_REQUIRE(testing::PollUntil([&] { return Lists(api.Requests()) >= 2; }));
  api.ClearRequests();
  api.CloseWatches();
  BOOST_REQUIRE(testing::PollUntil([&] { return Watches(api.Requests()) >= 1; }));
  const auto log = api.Requests();
  BOOST_TEST(Lists(log) == 0);
  for (const FakeRequest& r : log) {
    if (r.watch) BOOST_TEST(r.query.find("resourceVersion=") != std::string::npos, r.query);
  }
  // A slice deleted meanwhile is still seen (the watch is live). Waits for
  // one slice rather than reading once: before slice_watch.cc kept our own
  // newer writes over an older LIST, the watch loop's first LIST could race
  // the first create and the pool was written twice (seen under load).
  std::map<std::string, std::string> owners;
  BOOST_REQUIRE(testing::PollUntil([&] {
    owners = Owners(api, "quiet-resume");
    return owners.size() == 1u;
  }));
  api.MustRequest("DELETE", std::string(kSlices) + "/" + owners.begin()->first);
  BOOST_TEST(testing::PollUntil([&] { return Owners(api, "quiet-resume").size() == 1u; }));
  p->Stop();
}

// A server shedding load refuses a write with 429 and Retry-After: 30: the
// next sync comes after 30 s, not after the publisher's first backoff step
// (the bug: 0.2 s).
BOOST_AUTO_TEST_CASE(a_write_refused_with_429_waits_its_retry_after) {
  SlicePublisherOptions o;
  o.params.node_name = "quiet-429";
  o.watch = false;
  Make(o);
  api.AddFault(R"({"method":"POST","path":"/resourceslices$","status":429,"retry_after":30,)"
               R"("count":1})");
  pub->SetInventory(ManyCards(1));
  pub->Start();
  BOOST_REQUIRE(testing::PollUntil([&] { return pub->state().syncs == 1; }));
  BOOST_REQUIRE(!pub->state().last_status.ok());
  BOOST_REQUIRE(clock.WaitForSleepers(1, milliseconds(5000)));
  const auto next = clock.NextDeadline();
  BOOST_REQUIRE(next.has_value());
  BOOST_TEST(std::chrono::duration_cast<milliseconds>(*next - clock.Now()).count() == 30000);
  clock.Advance(seconds(30));
  BOOST_TEST(testing::PollUntil([&] { return pub->state().synced_sequence == 1; }));
}

// The server applied the POST and the answer was lost: nothing is sent
// again blindly (a second slice); the next sync LISTs, finds the slice, and
// the pool is whole with one POST.
BOOST_AUTO_TEST_CASE(a_lost_post_answer_makes_no_duplicate_slice) {
  SlicePublisherOptions o;
  o.params.node_name = "quiet-lost-post";
  auto p = RealTime(o);
  api.AddFault(R"({"method":"POST","path":"/resourceslices$","lose_answer":true,"count":1})");
  p->Start();
  const uint64_t seq = p->SetInventory(ManyCards(1));
  BOOST_REQUIRE(p->WaitSynced(seq, Clock::Real().Now() + seconds(10)));
  BOOST_TEST(testing::CountRequests(api.Requests(), "POST", kSlices) == 1);
  BOOST_TEST(Owners(api, "quiet-lost-post").size() == 1u);
  p->Stop();
}

// The Node could not be read at start (no owner), then is; later it is
// deleted and created again under the same name (a new UID), and GC deletes
// the slices it owned: the slices follow the Node each time.
BOOST_AUTO_TEST_CASE(the_owner_follows_the_node) {
  const std::string node = "quiet-owner";
  const std::string first_uid = CreateNode(api, node);
  api.AddFault(R"({"method":"GET","path":"^/api/v1/nodes/quiet-owner$","status":503,"count":1})");
  SlicePublisherOptions o;
  o.params.node_name = node;
  o.owned_by_node = true;
  o.resync_interval = milliseconds(200);
  auto p = RealTime(o);
  p->Start();
  const uint64_t seq = p->SetInventory(ManyCards(1));
  BOOST_REQUIRE(p->WaitSynced(seq, Clock::Real().Now() + seconds(10)));
  // Published without an owner first, then with the Node once it was read.
  BOOST_TEST(testing::PollUntil([&] {
    auto owners = Owners(api, node);
    return owners.size() == 1u && owners.begin()->second == first_uid;
  }));
  // The Node re-created: a new UID; GC deletes what the old one owned.
  api.MustRequest("DELETE", "/api/v1/nodes/" + node);
  const std::string second_uid = CreateNode(api, node);
  BOOST_REQUIRE(second_uid != first_uid);
  for (const auto& [name, uid] : Owners(api, node)) {
    api.MustRequest("DELETE", std::string(kSlices) + "/" + name);
  }
  BOOST_TEST(testing::PollUntil([&] {
    auto owners = Owners(api, node);
    return owners.size() == 1u && owners.begin()->second == second_uid;
  }));
  p->Stop();
}

// An API server with DRADeviceTaints off drops the taints: the publisher
// leaves the unhealthy card out instead. That holds for that server only:
// after an upgrade (another /version, seen once a watch ended) the taints
// are tried again, and kept.
BOOST_AUTO_TEST_CASE(dropped_taints_are_tried_again_after_a_server_upgrade) {
  api.MustRequest("POST", "/_fake/gates", R"({"DRADeviceTaints":false})");
  SlicePublisherOptions o;
  o.params.node_name = "quiet-upgrade";
  o.resync_interval = milliseconds(200);
  auto p = RealTime(o);
  p->Start();
  NodeInventory inv = ManyCards(2);
  inv.cards[0].health = Health::kUnhealthy;
  const uint64_t seq = p->SetInventory(inv);
  BOOST_REQUIRE(p->WaitSynced(seq, Clock::Real().Now() + seconds(10)));
  BOOST_REQUIRE(testing::PollUntil([&] { return p->state().taints_dropped; }));
  api.MustRequest("POST", "/_fake/gates", R"({"DRADeviceTaints":true})");
  api.MustRequest("POST", "/_fake/version", R"({"gitVersion":"v1.33.0-fake"})");
  api.CloseWatches();  // the server restarted
  BOOST_TEST(testing::PollUntil([&] {
    return !p->state().taints_dropped &&
           api.MustRequest(
                  "GET", std::string(kSlices) + "?fieldSelector=spec.nodeName%3D" + "quiet-upgrade")
                   .find("\"taints\"") != std::string::npos;
  }));
  p->Stop();
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp::dra
