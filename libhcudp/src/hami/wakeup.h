// Wakeup: how an agent thread waits for its next due time, a request or
// Stop(), through the agent's Clock (so that tests run it in simulated time).
// Internal to the HAMi agent.
#ifndef HCUDP_SRC_HAMI_WAKEUP_H_
#define HCUDP_SRC_HAMI_WAKEUP_H_

#include <condition_variable>
#include <functional>

#include "hcudp/clock.h"
#include "hcudp_internal/clock_wait.h"
#include "hcudp_internal/thread_annotations.h"

namespace hcudp::internal {

class Wakeup {
 public:
  explicit Wakeup(Clock& clock) : clock_(clock) {}
  Wakeup(const Wakeup&) = delete;
  Wakeup& operator=(const Wakeup&) = delete;

  // Adds `bits` to the pending requests and wakes the waiter.
  void Request(unsigned bits) HCUDP_EXCLUDES(mu_) {
    {
      MutexLock lock(mu_);
      requests_ |= bits;
    }
    cv_.notify_all();
  }
  // From now on every wait returns at once.
  void Stop() HCUDP_EXCLUDES(mu_) {
    {
      MutexLock lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
  }
  bool stopped() const HCUDP_EXCLUDES(mu_) {
    MutexLock lock(mu_);
    return stop_;
  }
  // Waits until Stop(), a request, `poll()` true (checked whenever the
  // waiter wakes; with the wake lock held, so it must be quick and take no
  // lock of the caller's), or `deadline`. Returns the pending requests and
  // clears them.
  unsigned WaitUntil(Clock::TimePoint deadline, const std::function<bool()>& poll = nullptr)
      HCUDP_EXCLUDES(mu_) {
    MutexLock lock(mu_);
    hcudp::WaitUntil(clock_, mu_, cv_, deadline, [&]() HCUDP_REQUIRES(mu_) {
      return stop_ || requests_ != 0 || (poll && poll());
    });
    const unsigned requests = requests_;
    requests_ = 0;
    return requests;
  }

 private:
  Clock& clock_;
  mutable Mutex mu_;
  std::condition_variable cv_;
  bool stop_ HCUDP_GUARDED_BY(mu_) = false;
  unsigned requests_ HCUDP_GUARDED_BY(mu_) = 0;
};

}  // namespace hcudp::internal

#endif  // HCUDP_SRC_HAMI_WAKEUP_H_
