// Clock: the library's one source of time, as leveldb's Env is for I/O. Code
// that reads the time, sleeps or waits with a deadline does it through a
// Clock, so that a test can run backoff, hysteresis and retry schedules in
// simulated time (test/testing/sim_clock.h) instead of real seconds.
//
//   Clock& clock = Clock::Real();
//   std::unique_lock<std::mutex> lock(mu);
//   clock.WaitUntil(lock, cv, clock.Now() + std::chrono::seconds(1), [&] { return stop; });
#ifndef HCUDP_CLOCK_H_
#define HCUDP_CLOCK_H_

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>

#include "hcudp/export.h"

namespace hcudp {

class HCUDP_EXPORT Clock {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;
  using WallTime = std::chrono::system_clock::time_point;

  virtual ~Clock() = default;

  // The monotonic time: deadlines, intervals, backoff.
  virtual TimePoint Now() const = 0;
  // The wall-clock time: timestamps written for other programs (RFC3339
  // annotations, mark-file names).
  virtual WallTime WallNow() const = 0;
  // Returns at `deadline` (at once if it has passed).
  virtual void SleepUntil(TimePoint deadline) = 0;
  // Waits on `cv` (with `lock` held on `cv`'s mutex) until `done()` is true
  // or `deadline` passes; returns done(). Whoever makes done() true notifies
  // `cv` as usual.
  virtual bool WaitUntil(std::unique_lock<std::mutex>& lock, std::condition_variable& cv,
                         TimePoint deadline, const std::function<bool()>& done) = 0;

  void SleepFor(std::chrono::nanoseconds d) { SleepUntil(Now() + d); }

  // The process's real clock (steady_clock, system_clock); never destroyed.
  static Clock& Real();
};

}  // namespace hcudp

#endif  // HCUDP_CLOCK_H_
