// HamiAgent: the node lock of a pod whose Allocate can no longer complete is
// released (issue 9 item 6), Allocate is bounded by its deadline against a
// silent API server and Stop() aborts it (issue 10 items 1-2), and the
// registration publishes the daemon's health verdict (issue 9 item 7).
#include <boost/test/unit_test.hpp>
#include <mutex>
#include <thread>

#include "hami/agent_fixture.h"
#include "hcudp/vhcu_manager.h"
#include "testing/sim_clock.h"
#include "testing/testutil.h"

namespace hcudp::testing {
namespace {

using SteadyClock = std::chrono::steady_clock;

constexpr char kLockTime[] = "2026-03-01T10:00:00+08:00";

std::string LockOf(const std::string& ns, const std::string& pod) {
  return std::string(kLockTime) + "," + ns + "," + pod;
}

// Node GETs the agent made since the request log was cleared (one per sync
// pass of the lock check, one or two per Allocate).
int NodeGets(const FakeApiServer& api) {
  return CountRequests(api.Requests(), "GET", "/api/v1/nodes/node1");
}

std::set<std::string> MarkNames(const std::string& root) {
  std::set<std::string> out;
  auto marks = ListMarkFiles(root, nullptr);
  BOOST_REQUIRE(marks.ok());
  for (const MarkFile& m : *marks) out.insert(m.path);
  return out;
}

BOOST_AUTO_TEST_SUITE(hami_agent_lock)

BOOST_AUTO_TEST_CASE(a_lock_left_by_an_earlier_process_is_released_and_its_pod_failed) {
  AgentFixture f;
  const std::string uid =
      f.CreatePod("default", "crashed", std::string(kSn0) + ",HCU,8192,30:;", 1740796800);
  {
    // The earlier process got as far as the vHCU and its mark, then died.
    VhcuManagerOptions mo;
    mo.host_root = f.root_.path();
    VhcuManager earlier(f.backend_.get(), mo);
    BOOST_REQUIRE(earlier.CreateVhcu({uid, "main"}, 0, 36, 8192).ok());
  }
  f.Lock(LockOf("default", "crashed"));
  f.Start();
  BOOST_TEST(f.NodeAnnotations().count("hami.io/mutex.lock") == 0u);
  BOOST_TEST(f.PodAnnotation("default", "crashed", "hami.io/bind-phase") == "failed");
  BOOST_TEST(WaitUntil(
      [&] { return MarkNames(f.root_.path()).empty() && f.backend_->Discover()->vhcus.empty(); }));
}

// The first look at the node fails (the API server is busy at the daemon's
// start): the lock then on the node is still recognised as the earlier
// process's at the next try, 5 s later, not taken for a new one.
BOOST_AUTO_TEST_CASE(an_earlier_lock_is_recognised_when_the_first_look_at_the_node_fails) {
  SimClock clock(TestWallStart());
  AgentFixture f([](HamiAgentOptions& o) { o.start_wait = std::chrono::milliseconds(0); }, &clock);
  f.CreatePod("default", "crashed", std::string(kSn0) + ",HCU,8192,30:;", 1740796800);
  f.Lock(LockOf("default", "crashed"));
  f.api_.AddFault(R"({"method":"GET","path":"^/api/v1/nodes/node1$","status":403,"count":1,)"
                  R"("user_agent":"hcu-device-plugin"})");
  f.api_.ClearRequests();
  f.agent_ = std::make_unique<HamiAgent>(f.backend_.get(), f.client_.get(), f.options_);
  BOOST_REQUIRE(f.agent_->Start().ok());
  BOOST_REQUIRE(WaitUntil([&] { return NodeGets(f.api_) >= 1; }));
  // The sweep and the registration both wait on the clock.
  BOOST_REQUIRE(clock.WaitForSleepers(2, std::chrono::seconds(10)));
  clock.Advance(std::chrono::seconds(5));
  BOOST_TEST(WaitUntil([&] { return f.NodeAnnotations().count("hami.io/mutex.lock") == 0; }));
  BOOST_TEST(f.PodAnnotation("default", "crashed", "hami.io/bind-phase") == "failed");
}

BOOST_AUTO_TEST_CASE(an_earlier_lock_of_another_namespace_fails_no_pod_of_this_one) {
  AgentFixture f;
  f.CreatePod("default", "a", std::string(kSn0) + ",HCU,8192,30:;", 1740796800);
  f.Lock(LockOf("other", "a"));  // other/a does not exist
  f.Start();
  BOOST_TEST(f.NodeAnnotations().count("hami.io/mutex.lock") == 0u);
  BOOST_TEST(f.PodAnnotation("default", "a", "hami.io/bind-phase") == "allocating");
  auto r = f.agent_->AllocateCount({1});
  BOOST_TEST(r.ok(), r.status().ToString());
}

BOOST_AUTO_TEST_CASE(a_lock_whose_pod_is_deleted_is_released_on_the_next_sync) {
  AgentFixture f;
  f.Start();
  f.CreatePod("default", "gone", std::string(kSn0) + ",HCU,8192,30:;", 1740796800);
  f.Lock(LockOf("default", "gone"));
  f.DeletePod("default", "gone");  // the deletion event starts a sync
  BOOST_TEST(WaitUntil([&] { return f.NodeAnnotations().count("hami.io/mutex.lock") == 0; }));
}

BOOST_AUTO_TEST_CASE(a_lock_whose_pod_no_longer_allocates_here_is_released_unmarked) {
  AgentFixture f([](HamiAgentOptions& o) { o.sweep_interval = std::chrono::milliseconds(100); });
  f.Start();
  f.CreatePod("default", "done", std::string(kSn0) + ",HCU,8192,30:;", 1740796800);
  f.api_.MustRequest("PATCH", "/api/v1/namespaces/default/pods/done",
                     R"({"metadata":{"annotations":{"hami.io/bind-phase":"success"}}})",
                     "application/merge-patch+json");
  f.Lock(LockOf("default", "done"));
  BOOST_TEST(WaitUntil([&] { return f.NodeAnnotations().count("hami.io/mutex.lock") == 0; }));
  BOOST_TEST(f.PodAnnotation("default", "done", "hami.io/bind-phase") == "success");
}

BOOST_AUTO_TEST_CASE(a_lock_for_a_pod_whose_allocate_is_still_to_come_is_left_alone) {
  AgentFixture f([](HamiAgentOptions& o) { o.sweep_interval = std::chrono::milliseconds(100); });
  f.Start();
  f.CreatePod("default", "waiting", std::string(kSn0) + ",HCU,8192,30:;", 1740796800);
  f.Lock(LockOf("default", "waiting"));
  f.api_.ClearRequests();
  // Three syncs looked: the sweeps (every 100 ms) read the lock from the
  // handshakes' answers (every 200 ms), or GET the node once they see it.
  BOOST_REQUIRE(WaitUntil(
      [&] { return CountRequests(f.api_.Requests(), "PATCH", "/api/v1/nodes/node1") >= 3; }));
  BOOST_TEST(f.NodeAnnotations()["hami.io/mutex.lock"] == LockOf("default", "waiting"));
  BOOST_TEST(f.PodAnnotation("default", "waiting", "hami.io/bind-phase") == "allocating");
  auto r = f.agent_->AllocateCount({1});
  BOOST_TEST(r.ok(), r.status().ToString());
  BOOST_TEST(f.NodeAnnotations().count("hami.io/mutex.lock") == 0u);
}

// A pod of two containers is served its first, then fails before kubelet
// asks for the second (kubelet's admission failed on another resource): its
// lock is released by the sweep, not left to the scheduler's expiry.
BOOST_AUTO_TEST_CASE(the_lock_of_a_pod_that_ends_between_its_containers_is_released) {
  AgentFixture f([](HamiAgentOptions& o) { o.sweep_interval = std::chrono::milliseconds(100); });
  f.Start();
  const std::string devices =
      std::string(kSn0) + ",HCU,8192,30:;" + std::string(kSn1) + ",HCU,8192,30:;";
  f.api_.MustRequest(
      "POST", "/api/v1/namespaces/default/pods",
      R"({"metadata":{"name":"two","namespace":"default","annotations":{)"
      R"("hami.io/vgpu-node":"node1","hami.io/bind-phase":"allocating",)"
      R"("hami.io/bind-time":"1740796800","hami.io/hcu-devices-to-allocate":")" +
          devices + R"(","hami.io/hcu-devices-allocated":")" + devices +
          R"("}},"spec":{"nodeName":"node1","containers":[{"name":"a"},{"name":"b"}]},)"
          R"("status":{"phase":"Pending"}})");
  f.Lock(LockOf("default", "two"));
  auto first = f.agent_->AllocateCount({1});
  BOOST_REQUIRE_MESSAGE(first.ok(), first.status().ToString());
  BOOST_REQUIRE(f.NodeAnnotations().count("hami.io/mutex.lock") == 1u);  // one more to come
  f.api_.MustRequest("PATCH", "/api/v1/namespaces/default/pods/two/status",
                     R"({"status":{"phase":"Failed"}})", "application/merge-patch+json");
  BOOST_TEST(WaitUntil([&] { return f.NodeAnnotations().count("hami.io/mutex.lock") == 0; }));
}

BOOST_AUTO_TEST_CASE(allocate_against_a_silent_api_server_ends_by_its_deadline) {
  AgentFixture f([](HamiAgentOptions& o) {
    o.allocate_deadline = std::chrono::milliseconds(1500);
    o.failure_reserve = std::chrono::milliseconds(500);
    o.sweep_interval = std::chrono::milliseconds(100);
  });
  f.Start();
  f.CreatePod("default", "p", std::string(kSn0) + ",HCU,8192,30:;", 1740796800);
  f.Lock(LockOf("default", "p"));
  for (const bool whole_server : {true, false}) {
    BOOST_TEST_CONTEXT((whole_server ? "nothing answered" : "the pod's PATCHes unanswered")) {
      // Silent from the first call, or only once the pod was found (the
      // failure path's own bind-phase patch then hangs too).
      if (whole_server) {
        f.api_.NeverAnswer();
      } else {
        f.api_.NeverAnswer("PATCH", "/pods/p$");
      }
      const auto start = SteadyClock::now();
      auto r = f.agent_->AllocateCount({1});
      const int64_t took = MillisSince(start);
      BOOST_TEST(!r.ok());
      BOOST_TEST(took < 1800, "Allocate took " << took << " ms: " << r.status().ToString());
      f.api_.ClearFaults();
    }
  }
  // The lock went within the deadline; the server answers again: the next
  // sync finishes the failure path (the bind-phase patch).
  BOOST_TEST(f.NodeAnnotations().count("hami.io/mutex.lock") == 0u);
  BOOST_TEST(
      WaitUntil([&] { return f.PodAnnotation("default", "p", "hami.io/bind-phase") == "failed"; }));
}

BOOST_AUTO_TEST_CASE(stop_aborts_an_allocate_in_flight) {
  AgentFixture f;
  f.Start();
  f.CreatePod("default", "p", std::string(kSn0) + ",HCU,8192,30:;", 1740796800);
  f.Lock(LockOf("default", "p"));
  f.api_.ClearRequests();
  f.api_.NeverAnswer();
  StatusOr<std::vector<ContainerAllocation>> r = InternalError("not run");
  std::thread allocate([&] { r = f.agent_->AllocateCount({1}); });
  BOOST_REQUIRE(WaitUntil([&] { return NodeGets(f.api_) >= 1; }));
  const auto start = SteadyClock::now();
  f.agent_->Stop();
  const int64_t stop_ms = MillisSince(start);
  allocate.join();
  const int64_t allocate_ms = MillisSince(start);
  BOOST_TEST(stop_ms < 1000);
  BOOST_TEST(allocate_ms < 1000);
  BOOST_TEST(!r.ok());
  BOOST_TEST((r.status().code() == StatusCode::kCancelled), r.status().ToString());
}

// The daemon says card 0 is unhealthy while Discover (as after a failed
// hy-smi, which leaves cards at the default Healthy) says all are healthy:
// the registration follows the daemon.
BOOST_AUTO_TEST_CASE(registration_publishes_the_daemons_health_verdict) {
  std::mutex mu;
  std::map<std::string, Health> verdicts;  // guarded by mu
  AgentFixture f([&](HamiAgentOptions& o) {
    o.card_health = [&](const std::string& bdf) -> std::optional<Health> {
      std::lock_guard<std::mutex> lock(mu);
      auto it = verdicts.find(bdf);
      if (it == verdicts.end()) return std::nullopt;
      return it->second;
    };
  });
  auto inventory = f.backend_->Discover();
  BOOST_REQUIRE(inventory.ok());
  for (const Card& c : inventory->cards) {
    BOOST_REQUIRE(c.health == Health::kHealthy);
    verdicts[c.bdf] = c.index == 0 ? Health::kUnhealthy : Health::kHealthy;
  }
  auto card0 = [&] {
    const std::string full = f.NodeAnnotations()["hami.io/node-hcu-register"];
    return full.substr(0, full.find(':'));
  };
  f.Start();
  BOOST_TEST(card0() == std::string(kSn0) + ",4,65520,100,HCU-K100_AI,0,false,0,hami");
  {
    std::lock_guard<std::mutex> lock(mu);
    for (const Card& c : inventory->cards) verdicts[c.bdf] = Health::kHealthy;
  }
  f.agent_->RequestRegister();
  BOOST_TEST(WaitUntil(
      [&] { return card0() == std::string(kSn0) + ",4,65520,100,HCU-K100_AI,0,true,0,hami"; }));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp::testing
