// SimClock: a hcudp::Clock whose time moves only when the test says so.
// Sleeps and timed waits block until Advance() carries the time past their
// deadline (or, for WaitUntil, until the waited-for condition is notified as
// usual), so a test of a 30 s backoff takes no real time and cannot flake on a
// loaded machine.
//
//   SimClock clock;
//   std::thread t([&] { thing_under_test.Run(clock); });  // sleeps 30 s
//   BOOST_REQUIRE(clock.WaitForSleepers(1, seconds(5)));   // real deadline
//   clock.Advance(seconds(30));
#ifndef HCUDP_TEST_TESTING_SIM_CLOCK_H_
#define HCUDP_TEST_TESTING_SIM_CLOCK_H_

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <set>

#include "hcudp/clock.h"

namespace hcudp::testing {

class SimClock final : public Clock {
 public:
  // Starts at an arbitrary, fixed steady time and at `wall` on the wall clock.
  explicit SimClock(WallTime wall = WallTime(std::chrono::seconds(1'800'000'000)));

  TimePoint Now() const override;
  WallTime WallNow() const override;
  void SleepUntil(TimePoint deadline) override;
  bool WaitUntil(Waiter& waiter, TimePoint deadline, const std::function<bool()>& done) override;

  // Moves both times forward by `d` and wakes every sleeper and waiter whose
  // deadline is now due.
  void Advance(std::chrono::nanoseconds d);
  // Waits (in real time, at most `real_timeout`) until at least `n` threads
  // are blocked in SleepUntil or WaitUntil; false at the deadline.
  bool WaitForSleepers(int n, std::chrono::milliseconds real_timeout) const;
  int sleepers() const;
  // The earliest deadline a sleeper or waiter is blocked on, if any: a test
  // advances to it to run a schedule of backoffs exactly.
  std::optional<TimePoint> NextDeadline() const;

 private:
  mutable std::mutex mu_;
  mutable std::condition_variable changed_;  // time moved or a sleeper came/went
  std::chrono::nanoseconds elapsed_{0};
  const WallTime wall_start_;
  int sleepers_ = 0;
  std::set<Waiter*> waiting_on_;        // WaitUntil callers' waiters
  std::multiset<TimePoint> deadlines_;  // of the blocked callers
};

// Moves `clock` to the deadline of whatever is blocked on it, again and
// again, until `done()` holds: runs a schedule of backoffs and retries
// exactly, in no real time. False when `done()` still fails after
// `real_timeout` of real time.
//
// Only deadlines at most `max_step` ahead are advanced to. A thread that
// makes `done()` true and then sleeps again (a worker that succeeded and now
// waits for its next resync) can do both between this loop's look at done()
// and its look at the next deadline; without the bound the loop would then
// carry the clock through that sleep too. Give the longest step the schedule
// under test takes.
bool AdvanceUntil(SimClock& clock, const std::function<bool()>& done,
                  std::chrono::nanoseconds max_step = std::chrono::hours(24 * 365),
                  std::chrono::milliseconds real_timeout = std::chrono::seconds(20));

}  // namespace hcudp::testing

#endif  // HCUDP_TEST_TESTING_SIM_CLOCK_H_
