// A timed wait on an hcudp::Clock with an hcudp::Mutex held: the checked-lock
// form of Clock::WaitUntil, whose Waiter is the mutex and a condition variable.
//
//   MutexLock lock(mu_);
//   WaitUntil(clock_, mu_, cv_, deadline, [&]() HCUDP_REQUIRES(mu_) { return done_; });
#ifndef HCUDP_INTERNAL_CLOCK_WAIT_H_
#define HCUDP_INTERNAL_CLOCK_WAIT_H_

#include <condition_variable>
#include <functional>
#include <mutex>

#include "hcudp/clock.h"
#include "hcudp_internal/thread_annotations.h"

namespace hcudp {

// Clock::Waiter over a held std::unique_lock and a condition variable.
class CondVarWaiter final : public Clock::Waiter {
 public:
  CondVarWaiter(std::unique_lock<std::mutex>& lock, std::condition_variable& cv)
      : lock_(lock), cv_(cv) {}
  void Block(std::chrono::steady_clock::time_point real_deadline) override {
    cv_.wait_until(lock_, real_deadline);
  }
  void Wake() override { cv_.notify_all(); }

 private:
  std::unique_lock<std::mutex>& lock_;
  std::condition_variable& cv_;
};

// Waits on `cv` until `done()` or `deadline` (on `clock`); `mu` is held on
// entry and on return (released while waiting). Returns done().
inline bool WaitUntil(Clock& clock, Mutex& mu, std::condition_variable& cv,
                      Clock::TimePoint deadline, const std::function<bool()>& done)
    HCUDP_REQUIRES(mu) {
  std::unique_lock<std::mutex> lock(mu.native(), std::adopt_lock);
  CondVarWaiter waiter(lock, cv);
  const bool result = clock.WaitUntil(waiter, deadline, done);
  lock.release();  // still held; the caller's MutexLock releases it
  return result;
}

}  // namespace hcudp

#endif  // HCUDP_INTERNAL_CLOCK_WAIT_H_
