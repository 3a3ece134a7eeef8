// Deadlines and cancellation of KubeClient calls (issue 10 items 1 and 2):
// against an API server that accepts requests and never answers, a call ends
// by its deadline or when its cancel flag is set, and never retries past it.
#include <atomic>
#include <boost/test/unit_test.hpp>
#include <thread>

#include "hcudp/kube_client.h"
#include "hcudp/kube_ops.h"
#include "hcudp/pod_cache.h"
#include "kube/kube_test_util.h"

namespace hcudp {
namespace {

using testing::ApiFixture;
using testing::MillisSince;
using testing::NodeJson;
using SteadyClock = std::chrono::steady_clock;

BOOST_FIXTURE_TEST_SUITE(kube_deadlines, ApiFixture)

BOOST_AUTO_TEST_CASE(stopping_a_pod_cache_aborts_a_list_the_server_never_answers) {
  api.NeverAnswer("GET", "/pods$");
  PodCacheOptions o;
  o.field_selector = "spec.nodeName=silent-node";
  PodCache cache(client.get(), o);
  cache.Start();
  BOOST_REQUIRE(testing::Eventually([&] {
    for (const auto& r : api.Requests()) {
      if (r.path == "/api/v1/pods" && !r.watch) return true;
    }
    return false;
  }));
  const auto start = SteadyClock::now();
  cache.Stop();
  BOOST_TEST(MillisSince(start) < 1000);
  BOOST_TEST(!cache.HasSynced());
}

BOOST_AUTO_TEST_CASE(a_get_the_server_never_answers_ends_by_its_deadline) {
  api.MustRequest("POST", "/api/v1/nodes", NodeJson("silent-get"));
  api.NeverAnswer("GET", "/nodes/silent-get$");
  CallOptions call;
  call.deadline = SteadyClock::now() + std::chrono::milliseconds(600);
  const auto start = SteadyClock::now();
  auto got = client->Get(NodePath("silent-get"), call);  // request timeout: 5 s
  const int64_t took = MillisSince(start);
  BOOST_TEST(!got.ok());
  BOOST_TEST((got.status().code() == StatusCode::kDeadlineExceeded), got.status().ToString());
  BOOST_TEST(took >= 550);
  BOOST_TEST(took < 1000);
}

BOOST_AUTO_TEST_CASE(no_retry_is_started_past_the_deadline_whatever_retry_after_says) {
  api.MustRequest("POST", "/api/v1/nodes", NodeJson("busy-get"));
  api.AddFault(R"({"method":"GET","path":"/nodes/busy-get$","status":503,"count":10,)"
               R"("retry_after":5})");
  CallOptions call;
  call.deadline = SteadyClock::now() + std::chrono::milliseconds(1000);
  const auto start = SteadyClock::now();
  auto got = client->Get(NodePath("busy-get"), call);
  BOOST_TEST(MillisSince(start) < 1000);  // never waited the 5 s Retry-After
  BOOST_TEST((got.status().code() == StatusCode::kUnavailable), got.status().ToString());
  BOOST_TEST(got.status().message().find("no time left") != std::string::npos,
             got.status().message());
  BOOST_TEST(testing::CountRequests(api.Requests(), "GET", "/api/v1/nodes/busy-get") == 1);
}

BOOST_AUTO_TEST_CASE(a_deadline_already_passed_sends_nothing) {
  CallOptions call;
  call.deadline = SteadyClock::now() - std::chrono::milliseconds(1);
  auto got = client->Get(NodePath("late"), call);
  BOOST_TEST((got.status().code() == StatusCode::kDeadlineExceeded), got.status().ToString());
  BOOST_TEST(testing::CountRequests(api.Requests(), "GET", "/api/v1/nodes/late") == 0);
}

BOOST_AUTO_TEST_CASE(a_cancel_aborts_a_transfer_in_flight_and_a_backoff) {
  api.MustRequest("POST", "/api/v1/nodes", NodeJson("cancelled"));
  for (const bool hang : {true, false}) {
    BOOST_TEST_CONTEXT((hang ? "in flight" : "in a backoff")) {
      api.ClearFaults();
      if (hang) {
        api.NeverAnswer("PATCH", "/nodes/cancelled$");
      } else {
        api.AddFault(R"({"method":"PATCH","path":"/nodes/cancelled$","status":429,"count":10,)"
                     R"("retry_after":5})");
      }
      std::atomic<bool> cancel{false};
      CallOptions call;
      call.cancel = &cancel;
      StatusOr<NodeObject> patched = InternalError("not run");
      std::thread caller([&] { patched = PatchNodeAnnotations(*client, "cancelled", {}, call); });
      BOOST_REQUIRE(testing::Eventually([&] {
        return testing::CountRequests(api.Requests(), "PATCH", "/api/v1/nodes/cancelled") > 0;
      }));
      const auto start = SteadyClock::now();
      cancel = true;
      caller.join();
      BOOST_TEST(MillisSince(start) < 500);
      BOOST_TEST((patched.status().code() == StatusCode::kCancelled), patched.status().ToString());
      api.ClearRequests();
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp
