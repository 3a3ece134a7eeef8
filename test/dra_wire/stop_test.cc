// Stop is bounded (DESIGN.md §3: exit within 5 s): health streams end at
// once, a handler that honours cancellation is cancelled, and a handler that
// hangs is left behind within the budget.
#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <iostream>
#include <thread>

#include "dra_wire/dra_node.h"
#include "testing/testutil.h"

namespace hcudp::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using SteadyClock = std::chrono::steady_clock;

void WaitForStream(DraNode& node) {
  auto s = node.kubelet().WaitFor(
      [](const WatcherSnapshot& s) {
        auto h = s.health.find(kDriver);
        return h != s.health.end() && h->second.stream_messages > 0;
      },
      seconds(10));
  BOOST_REQUIRE(s.has_value());
}

BOOST_AUTO_TEST_SUITE(stop)

BOOST_AUTO_TEST_CASE(open_health_streams_end_promptly_and_cleanly) {
  DraNode node;
  node.Start();
  WaitForStream(node);
  const auto t0 = SteadyClock::now();
  BOOST_TEST(node.plugin().Stop());
  const long ms = MillisSince(t0);
  std::cerr << "DRA: stop with an open health stream: " << ms << " ms\n";
  BOOST_TEST(ms < 500);  // no grace period spent on the stream
  auto s = node.kubelet().WaitFor(
      [](const WatcherSnapshot& s) { return s.health.at(kDriver).streams_ended >= 1; }, seconds(5));
  BOOST_REQUIRE(s.has_value());
  // kubelet may have cancelled it first (it deregisters us as the
  // registration socket goes); either way nothing is left open on our side.
  BOOST_TEST(PollUntil([&] { return node.plugin().health_streams() == 0; }));
  BOOST_TEST(!std::filesystem::exists(node.dra_sock()));
}

BOOST_AUTO_TEST_CASE(a_prepare_that_honours_cancellation_is_cancelled_by_stop) {
  DraNode node;
  node.Start();
  node.handler().Block(/*honour_cancel=*/true);
  std::thread caller([&] { node.kubelet().NodePrepareResources(kDriver, {MakeClaim("u", "c")}); });
  BOOST_REQUIRE(node.handler().WaitBlocked(seconds(5)));
  const auto t0 = SteadyClock::now();
  BOOST_TEST(node.plugin().Stop());
  const long ms = MillisSince(t0);
  std::cerr << "DRA: stop with a cancellable Prepare running: " << ms << " ms\n";
  BOOST_TEST(ms < 2000);
  caller.join();
}

BOOST_AUTO_TEST_CASE(a_hung_prepare_is_left_behind_within_the_budget) {
  DraNode node;
  node.Start();
  node.handler().Block(/*honour_cancel=*/false);
  std::thread caller([&] { node.kubelet().NodePrepareResources(kDriver, {MakeClaim("u", "c")}); });
  BOOST_REQUIRE(node.handler().WaitBlocked(seconds(5)));
  const auto t0 = SteadyClock::now();
  BOOST_TEST(!node.plugin().Stop());  // a call had to be left behind
  const long ms = MillisSince(t0);
  std::cerr << "DRA: stop with a hung Prepare: " << ms << " ms\n";
  BOOST_TEST(ms < 3000);
  node.handler().Release();  // the call left behind returns before the handler goes
  caller.join();
  // The left-behind handler call leaves the handler before it goes.
  BOOST_TEST(node.handler().WaitIdle(seconds(5)));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp::testing
