// ReconcileLoop (common/include/hcudp_internal/reconcile_loop.h), the loop
// of the daemon's device-plugin manager and DRA plugin: a pass at once, on
// every Wake(), at the time the last pass returned (on a SimClock), on a
// readable descriptor its drain says counts; Stop() joins it.
#include "hcudp_internal/reconcile_loop.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <cstdint>
#include <thread>

#include "testing/sim_clock.h"

namespace hcudp {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// Polls `ok` for up to 5 s of real time.
bool Soon(const std::function<bool()>& ok) {
  for (int i = 0; i < 500 && !ok(); ++i) std::this_thread::sleep_for(milliseconds(10));
  return ok();
}

BOOST_AUTO_TEST_SUITE(reconcile_loop)

BOOST_AUTO_TEST_CASE(passes_at_once_on_wake_and_at_the_time_the_pass_returned) {
  testing::SimClock clock;
  std::atomic<int> passes{0};
  ReconcileLoop loop(clock, [&] {
    ++passes;
    return clock.Now() + seconds(5);  // the backstop
  });
  BOOST_REQUIRE(loop.Start().ok());
  BOOST_REQUIRE(Soon([&] { return passes == 1 && clock.sleepers() == 1; }));
  loop.Wake();
  BOOST_REQUIRE(Soon([&] { return passes == 2 && clock.sleepers() == 1; }));
  clock.Advance(seconds(4));
  std::this_thread::sleep_for(milliseconds(50));
  BOOST_TEST(passes == 2, "a pass before its time");
  clock.Advance(seconds(1));
  BOOST_TEST(Soon([&] { return passes == 3; }));
  loop.Stop();
  const int stopped_at = passes;
  loop.Wake();
  clock.Advance(seconds(10));
  std::this_thread::sleep_for(milliseconds(50));
  BOOST_TEST(passes == stopped_at, "a pass after Stop");
}

BOOST_AUTO_TEST_CASE(a_readable_descriptor_wakes_it_only_when_its_drain_says_so) {
  testing::SimClock clock;
  std::atomic<int> passes{0};
  std::atomic<bool> counts{false};
  const int fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  BOOST_REQUIRE(fd >= 0);
  ReconcileLoop loop(clock, [&] {
    ++passes;
    return clock.Now() + seconds(5);
  });
  BOOST_REQUIRE(loop.Start(fd,
                           [&] {
                             uint64_t n = 0;
                             (void)::read(fd, &n, sizeof n);
                             return counts.load();
                           })
                    .ok());
  BOOST_REQUIRE(Soon([&] { return passes == 1; }));
  const uint64_t one = 1;
  BOOST_REQUIRE(::write(fd, &one, sizeof one) == sizeof one);  // an event that does not count
  std::this_thread::sleep_for(milliseconds(100));
  BOOST_TEST(passes == 1);
  counts = true;
  BOOST_REQUIRE(::write(fd, &one, sizeof one) == sizeof one);
  BOOST_TEST(Soon([&] { return passes == 2; }));
  loop.Stop();
  ::close(fd);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp
