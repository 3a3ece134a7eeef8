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
#include <mutex>
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
  bool WaitUntil(std::unique_lock<std::mutex>& lock, std::condition_variable& cv,
                 TimePoint deadline, const std::function<bool()>& done) override;

  // Moves both times forward by `d` and wakes every sleeper and waiter whose
  // deadline is now due.
  void Advance(std::chrono::nanoseconds d);
  // Waits (in real time, at most `real_timeout`) until at least `n` threads
  // are blocked in SleepUntil or WaitUntil; false at the deadline.
  bool WaitForSleepers(int n, std::chrono::milliseconds real_timeout) const;
  int sleepers() const;

 private:
  mutable std::mutex mu_;
  mutable std::condition_variable changed_;  // time moved or a sleeper came/went
  std::chrono::nanoseconds elapsed_{0};
  const WallTime wall_start_;
  int sleepers_ = 0;
  std::set<std::condition_variable*> waiting_on_;  // WaitUntil callers' cvs
};

}  // namespace hcudp::testing

#endif  // HCUDP_TEST_TESTING_SIM_CLOCK_H_
