// Clock: the library's one source of time, as leveldb's Env is for I/O. Code
// that reads the time, sleeps or waits with a deadline does it through a
// Clock, so that a test can run backoff, hysteresis and retry schedules in
// simulated time (test/testing/sim_clock.h) instead of real seconds.
//
//   Clock& clock = Clock::Real();
//   clock.SleepFor(std::chrono::seconds(1));
//   clock.WaitUntil(waiter, clock.Now() + std::chrono::seconds(1), [&] { return stop; });
//
// A Waiter is the caller's half of a timed wait: its lock and condition
// variable, behind two calls, so that this header names no mutex type.
#ifndef HCUDP_CLOCK_H_
#define HCUDP_CLOCK_H_

#include <chrono>
#include <functional>

#include "hcudp/export.h"

namespace hcudp {

class HCUDP_EXPORT Clock {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;
  using WallTime = std::chrono::system_clock::time_point;

  // The caller's side of a timed wait. The caller holds its lock when it
  // calls WaitUntil; Block releases it while blocked, and holds it again on
  // return, as a condition variable's wait does.
  class Waiter {
   public:
    virtual ~Waiter() = default;
    // Blocks until Wake, the caller's own notify, `real_deadline` (steady
    // clock), or spuriously.
    virtual void Block(std::chrono::steady_clock::time_point real_deadline) = 0;
    // Wakes a Block in progress (the clock calls it when its time moves).
    virtual void Wake() = 0;
  };

  virtual ~Clock() = default;

  // The monotonic time: deadlines, intervals, backoff.
  virtual TimePoint Now() const = 0;
  // The wall-clock time: timestamps written for other programs (RFC3339
  // annotations, mark-file names).
  virtual WallTime WallNow() const = 0;
  // Returns at `deadline` (at once if it has passed).
  virtual void SleepUntil(TimePoint deadline) = 0;
  // Blocks on `waiter` (its lock held) until `done()` is true or `deadline`
  // passes on this clock; returns done(). Whoever makes done() true wakes
  // the waiter as usual (notifies its condition variable).
  virtual bool WaitUntil(Waiter& waiter, TimePoint deadline, const std::function<bool()>& done) = 0;

  void SleepFor(std::chrono::nanoseconds d) { SleepUntil(Now() + d); }

  // The process's real clock (steady_clock, system_clock); never destroyed.
  static Clock& Real();
};

}  // namespace hcudp

#endif  // HCUDP_CLOCK_H_
