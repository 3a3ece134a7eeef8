// The HAMi agent as one client of thousands (issue 24): at steady state one
// PATCH of the Node per registration interval (the handshake, no GET before
// it) and the pod watch, and nothing else; the default interval satisfies
// the scheduler's 60 s rule with margin; Allocate during an outage answers
// within its deadline.
#include <boost/test/unit_test.hpp>
#include <chrono>

#include "hami/agent_fixture.h"
#include "hcudp/hami_agent.h"
#include "testing/sim_clock.h"
#include "testing/testutil.h"

namespace hcudp::testing {
namespace {

BOOST_AUTO_TEST_SUITE(hami_agent_quiet)

BOOST_AUTO_TEST_CASE(the_default_handshake_interval_is_30_s) {
  BOOST_TEST(HamiAgentOptions{}.register_interval.count() == 30000);
}

// Four intervals of steady state (the sweeps' stale-lock checks included):
// four PATCHes of the Node, no GET, nothing else but the pod watch (the bug:
// a GET and a PATCH of the Node every 20 s).
BOOST_AUTO_TEST_CASE(steady_state_is_one_handshake_patch_per_interval) {
  SimClock clock(TestWallStart());
  AgentFixture f(
      [](HamiAgentOptions& o) { o.register_interval = HamiAgentOptions{}.register_interval; },
      &clock);
  f.Start();
  f.api_.ClearRequests();
  int own_gets = 0;  // this test's own reads of the node
  auto handshake = [&] {
    ++own_gets;
    return f.NodeAnnotations()["hami.io/node-handshake-hcu"];
  };
  for (int i = 1; i <= 4; ++i) {
    // Time moves only once the registration and sweep threads are asleep on
    // the clock: a registration still finishing (its PATCH answered, its
    // time not yet taken) would otherwise take the new time for the old
    // handshake and skip the next (the flake: "handshake 3: Reported
    // 02:01:00Z" on a busy machine).
    BOOST_REQUIRE(clock.WaitForSleepers(2, std::chrono::seconds(30)));
    clock.Advance(std::chrono::seconds(30));
    const std::string want =
        "Reported 2026-03-01T02:0" + std::to_string(i / 2) + ":" + (i % 2 ? "30" : "00") + "Z";
    BOOST_REQUIRE_MESSAGE(WaitUntil([&] { return handshake() == want; }, 30000),
                          "handshake " << i << ": " << handshake());
  }
  // Let the sweeps at the same instants finish their look.
  BOOST_REQUIRE(clock.WaitForSleepers(2, std::chrono::seconds(30)));
  const auto log = f.api_.Requests();
  BOOST_TEST(CountRequests(log, "PATCH", "/api/v1/nodes/node1") == 4);
  BOOST_TEST(CountRequests(log, "GET", "/api/v1/nodes/node1") == own_gets);
  for (const FakeRequest& r : log) {
    const bool expected = (r.path == "/api/v1/nodes/node1" && r.method != "POST") ||
                          (r.watch && r.path == "/api/v1/pods");
    BOOST_TEST(expected, r.method << " " << r.path << "?" << r.query);
  }
}

// The API server down (every request 503) while kubelet allocates: Allocate
// answers with a refusal within its deadline, it does not hang.
BOOST_AUTO_TEST_CASE(allocate_during_an_outage_is_refused_within_its_deadline) {
  AgentFixture f([](HamiAgentOptions& o) {
    o.register_interval = std::chrono::hours(1);
    o.allocate_deadline = std::chrono::milliseconds(2000);
    o.failure_reserve = std::chrono::milliseconds(500);
  });
  f.Start();
  f.api_.AddFault(R"({"path":"^/api","status":503,"count":-1,"user_agent":"hcu-device-plugin"})");
  const auto start = std::chrono::steady_clock::now();
  auto r = f.agent_->AllocateCount({1});
  const auto took = MillisSince(start);
  BOOST_TEST(!r.ok());
  BOOST_TEST(took < 2500, took << " ms");
  f.api_.ClearFaults();
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp::testing
