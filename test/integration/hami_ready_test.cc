// Ready before advertised, and one backoff per loop (issue 30), from outside:
// the real daemon in HAMi mode, the fake kubelet, and the fake API server
// scripted with the start-up faults of the issue (3 x 500, then 409 on the
// first node PATCH and PUT, then 429 on the first pod LIST).
//   (a) a pod the scheduler places as soon as the registration annotation
//       appears is allocated (it failed: UNAVAILABLE "not ready yet", the
//       annotation having come before the pod cache sync);
//   (b) after those faults, watches cut and the history compacted, a pod
//       deleted while the daemon is blind is cleaned (vHCU and mark) within
//       10 s of the API server answering again (the pod cache waited behind
//       the process-wide ladder the other loops had pushed up).
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <string>
#include <thread>

#include "fake_apiserver/fake_apiserver_process.h"
#include "integration/hami_node.h"

namespace hcudp::testing {
namespace {

constexpr char kDaemonAgent[] = R"("user_agent":"hcu-device-plugin")";

// The issue's start-up faults, for the daemon's requests only (the test's
// own, playing the scheduler, are spared).
void AddStartupFaults(FakeApiServer& api) {
  api.AddFault(std::string(R"({"status":500,"count":3,)") + kDaemonAgent + "}");
  api.AddFault(std::string(R"({"method":"PATCH","path":"^/api/v1/nodes/node1$","status":409,)") +
               R"("count":1,)" + kDaemonAgent + "}");
  api.AddFault(std::string(R"({"method":"PUT","path":"^/api/v1/nodes/node1$","status":409,)") +
               R"("count":1,)" + kDaemonAgent + "}");
  // A LIST: a pods GET that is no watch.
  api.AddFault(
      std::string(R"x({"method":"GET","path":"^/api/v1/pods$","query":"^(?!.*watch=)",)x") +
      R"("status":429,"count":1,)" + kDaemonAgent + "}");
}

bool Registered(HamiNode& n) { return n.NodeAnnotations().count("hami.io/node-hcu-register") > 0; }

// Every device kubelet has of the HAMi resource reports `health`, within
// `timeout`.
bool AllDevices(HamiNode& n, const std::string& health,
                milliseconds timeout = milliseconds(10000)) {
  return n.h()
      .kubelet()
      .WaitForDevices(
          kHamiCount,
          [&](const std::vector<v1beta1::Device>& devices) {
            if (devices.empty()) return false;
            for (const auto& d : devices) {
              if (d.health() != health) return false;
            }
            return true;
          },
          timeout)
      .has_value();
}

// Starts the daemon under the start-up faults; returns once the scheduler
// would see the node (its registration annotation), then at once schedules
// `pod` and allocates it through kubelet, as a scheduler and a kubelet that
// are quick would.
void StartAndAllocateAtOnce(HamiNode& n, const std::string& pod) {
  AddStartupFaults(n.api());
  n.h().Start();
  BOOST_REQUIRE_MESSAGE(WaitUntil([&] { return Registered(n); }, milliseconds(60000)),
                        "the node never registered");
  n.SchedulePod({pod, {{"main", std::string(kSn0) + ",HCU,8192,30:"}}});
  n.h().RequireRegistered(kHamiCount);
  v1beta1::AllocateResponse response;
  grpc::Status s = n.Allocate({{std::string(kSn0) + "-fake-0"}}, &response);
  BOOST_REQUIRE_MESSAGE(s.ok(), "Allocate failed: " << s.error_message());
  BOOST_REQUIRE_EQUAL(response.container_responses_size(), 1);
  BOOST_TEST(n.PodAnnotation(pod, "hami.io/bind-phase") == "success");
}

BOOST_AUTO_TEST_SUITE(hami_ready)

BOOST_AUTO_TEST_CASE(a_pod_scheduled_as_soon_as_the_node_registers_is_allocated) {
  HamiNode n;
  StartAndAllocateAtOnce(n, "quick");
  BOOST_TEST(n.Confs().size() == 1u);
  BOOST_TEST(n.Marks().size() == 1u);
  // The devices kubelet sees are healthy by now (nothing was offered healthy
  // before the agent could serve).
  BOOST_TEST(AllDevices(n, "Healthy", milliseconds(5000)));
}

BOOST_AUTO_TEST_CASE(a_pod_deleted_while_the_daemon_is_blind_is_cleaned_soon_after_recovery) {
  HamiNode n;
  StartAndAllocateAtOnce(n, "doomed");
  BOOST_REQUIRE_EQUAL(n.Confs().size(), 1u);
  BOOST_REQUIRE_EQUAL(n.Marks().size(), 1u);
  // Blind: every request of the daemon answered 503, its watch cut; the pod
  // deleted, and the history compacted (the deletion cannot be watched: a
  // 410, then a relist, must find it).
  n.api().AddFault(std::string(R"({"path":"^/api","status":503,"count":-1,)") + kDaemonAgent + "}");
  n.api().CloseWatches();
  n.api().MustRequest("DELETE", "/api/v1/namespaces/default/pods/doomed");
  n.api().Compact();
  std::this_thread::sleep_for(std::chrono::seconds(3));
  BOOST_REQUIRE_EQUAL(n.Confs().size(), 1u);  // blind: nothing known yet
  n.api().ClearFaults();
  const auto recovered = std::chrono::steady_clock::now();
  const bool cleaned =
      WaitUntil([&] { return n.Confs().empty() && n.Marks().empty(); }, milliseconds(20000));
  const auto took =
      std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - recovered);
  BOOST_TEST_MESSAGE("cleaned " << took.count() << " ms after recovery");
  BOOST_TEST(cleaned);
  BOOST_TEST(took.count() <= 10000, "cleaned " << took.count() << " ms after recovery");
}

// While the pod cache cannot sync, nothing is advertised: no registration
// annotation for the scheduler, and kubelet sees the devices unhealthy; an
// Allocate that comes anyway waits a few seconds for readiness, then is
// refused. Once the API server answers, both follow.
BOOST_AUTO_TEST_CASE(nothing_is_advertised_before_the_pod_cache_syncs) {
  HamiNode n;
  n.api().AddFault(
      std::string(R"x({"method":"GET","path":"^/api/v1/pods$","query":"^(?!.*watch=)",)x") +
      R"("status":503,"count":-1,)" + kDaemonAgent + "}");
  n.h().Start();
  // The daemon registers with kubelet after its start wait (10 s).
  n.h().RequireRegistered(kHamiCount, 1, milliseconds(30000));
  BOOST_TEST(AllDevices(n, "Unhealthy", milliseconds(5000)));
  BOOST_TEST(!Registered(n));
  n.SchedulePod({"early", {{"main", std::string(kSn0) + ",HCU,8192,30:"}}});
  const auto asked = std::chrono::steady_clock::now();
  v1beta1::AllocateResponse response;
  grpc::Status s = n.Allocate({{std::string(kSn0) + "-fake-0"}}, &response);
  const auto took =
      std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - asked);
  BOOST_TEST(!s.ok());
  BOOST_TEST(s.error_code() == grpc::StatusCode::UNAVAILABLE, s.error_message());
  BOOST_TEST(took.count() >= 3000, took.count() << " ms");  // it waited, bounded
  BOOST_TEST(took.count() <= 8000, took.count() << " ms");
  n.api().ClearFaults();
  BOOST_TEST(WaitUntil([&] { return Registered(n); }, milliseconds(60000)));
  BOOST_TEST(AllDevices(n, "Healthy", milliseconds(10000)));
}

// Card 0's entry of the registration annotation says it is healthy.
bool Card0RegisteredHealthy(HamiNode& n, bool healthy) {
  return n.NodeAnnotations()["hami.io/node-hcu-register"].rfind(
             std::string(kSn0) + ",4,65520,100,HCU-K100_AI,0," + (healthy ? "true" : "false"), 0) ==
         0;
}

// Readiness lost later: the pod cache's history is gone (410) and it cannot
// relist. The node says so (its cards registered unhealthy, kubelet's
// devices Unhealthy) until the relist is in.
BOOST_AUTO_TEST_CASE(a_pod_cache_that_cannot_relist_withdraws_the_offer_until_it_can) {
  HamiNode n;
  n.Start();
  BOOST_REQUIRE(AllDevices(n, "Healthy"));
  BOOST_REQUIRE(Card0RegisteredHealthy(n, true));
  n.api().AddFault(std::string(R"({"method":"GET","path":"^/api/v1/pods$","query":"watch=true",)") +
                   R"("status":410,"count":-1,)" + kDaemonAgent + "}");
  n.api().AddFault(
      std::string(R"x({"method":"GET","path":"^/api/v1/pods$","query":"^(?!.*watch=)",)x") +
      R"("status":503,"count":-1,)" + kDaemonAgent + "}");
  n.api().CloseWatches();
  BOOST_TEST(AllDevices(n, "Unhealthy"));
  BOOST_TEST(WaitUntil([&] { return Card0RegisteredHealthy(n, false); }, milliseconds(10000)));
  // Back once the relist is in (its LIST may be in a retry pause of up to
  // 8 s when the server answers again).
  n.api().ClearFaults();
  BOOST_TEST(WaitUntil([&] { return Card0RegisteredHealthy(n, true); }, milliseconds(20000)));
  BOOST_TEST(AllDevices(n, "Healthy"));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp::testing
