// Clock::Real() and the tests' SimClock: the simulated time moves only on
// Advance, and sleepers and waiters wake exactly when it passes their
// deadline or their condition is notified.
#include "hcudp/clock.h"

#include <atomic>
#include <boost/test/unit_test.hpp>
#include <thread>

#include "hcudp_internal/clock_wait.h"
#include "testing/sim_clock.h"

namespace hcudp::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

BOOST_AUTO_TEST_SUITE(clock)

BOOST_AUTO_TEST_CASE(the_real_clock_waits_for_the_condition_or_the_deadline) {
  Clock& clock = Clock::Real();
  Mutex mu;
  std::condition_variable cv;
  MutexLock lock(mu);
  const auto start = clock.Now();
  BOOST_TEST(!WaitUntil(clock, mu, cv, start + milliseconds(20), [] { return false; }));
  BOOST_TEST((clock.Now() - start >= milliseconds(20)));
  BOOST_TEST(WaitUntil(clock, mu, cv, start + seconds(60), [] { return true; }));
}

BOOST_AUTO_TEST_CASE(a_sim_sleeper_wakes_only_when_time_passes_its_deadline) {
  SimClock clock;
  const auto start = clock.Now();
  const auto wall = clock.WallNow();
  std::atomic<bool> woke{false};
  std::thread sleeper([&] {
    clock.SleepFor(seconds(30));
    woke = true;
  });
  BOOST_REQUIRE(clock.WaitForSleepers(1, seconds(5)));
  clock.Advance(seconds(29));
  BOOST_TEST(clock.sleepers() == 1);  // still asleep: 29 s < 30 s
  BOOST_TEST(!woke);
  clock.Advance(seconds(1));
  sleeper.join();
  BOOST_TEST(woke);
  BOOST_TEST((clock.Now() - start == seconds(30)));
  BOOST_TEST((clock.WallNow() - wall == seconds(30)));
}

BOOST_AUTO_TEST_CASE(a_sim_wait_ends_at_its_deadline_or_on_notify) {
  SimClock clock;
  Mutex mu;
  std::condition_variable cv;
  bool done = false;
  bool timed_out_result = true;
  std::thread waiter([&] {
    MutexLock lock(mu);
    timed_out_result = WaitUntil(clock, mu, cv, clock.Now() + seconds(10), [&] { return done; });
  });
  BOOST_REQUIRE(clock.WaitForSleepers(1, seconds(5)));
  clock.Advance(seconds(10));
  waiter.join();
  BOOST_TEST(!timed_out_result);

  bool notified_result = false;
  std::thread second([&] {
    MutexLock lock(mu);
    notified_result = WaitUntil(clock, mu, cv, clock.Now() + seconds(10), [&] { return done; });
  });
  BOOST_REQUIRE(clock.WaitForSleepers(1, seconds(5)));
  {
    MutexLock lock(mu);
    done = true;
  }
  cv.notify_all();
  second.join();
  BOOST_TEST(notified_result);
  BOOST_TEST(clock.sleepers() == 0);
}

// A worker that finishes and at once sleeps again (a publisher that synced and
// now waits 30 s for its resync) can do both between AdvanceUntil's look at
// done() and its look at the next deadline, as when the test thread is
// preempted. `done` below forces exactly that interleaving. AdvanceUntil must
// not then run the 30 s sleep: it advances only steps up to max_step.
BOOST_AUTO_TEST_CASE(advance_until_never_runs_a_sleep_begun_after_done) {
  SimClock clock;
  const auto start = clock.Now();
  std::atomic<bool> finished{false};
  std::thread worker([&] {
    clock.SleepFor(milliseconds(100));  // the backoff the test means to run
    finished = true;
    clock.SleepFor(seconds(30));  // the next resync: not the test's to run
  });
  auto done = [&] {
    const bool seen = finished.load();
    if (!seen && clock.Now() - start >= milliseconds(100)) {
      // Preempted here: the worker finishes and sleeps again before we answer.
      const auto until = std::chrono::steady_clock::now() + seconds(5);
      while (!(finished && clock.sleepers() == 1) && std::chrono::steady_clock::now() < until) {
        std::this_thread::yield();
      }
    }
    return seen;
  };
  BOOST_TEST(AdvanceUntil(clock, done, seconds(1)));
  BOOST_TEST((clock.Now() - start == milliseconds(100)));
  clock.Advance(seconds(30));
  worker.join();
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp::testing
