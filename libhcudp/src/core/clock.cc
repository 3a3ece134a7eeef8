#include "hcudp/clock.h"

#include <thread>

namespace hcudp {
namespace {

class RealClock final : public Clock {
 public:
  TimePoint Now() const override { return std::chrono::steady_clock::now(); }
  WallTime WallNow() const override { return std::chrono::system_clock::now(); }
  void SleepUntil(TimePoint deadline) override { std::this_thread::sleep_until(deadline); }
  bool WaitUntil(Waiter& waiter, TimePoint deadline, const std::function<bool()>& done) override {
    while (!done()) {
      if (Now() >= deadline) return false;
      waiter.Block(deadline);
    }
    return true;
  }
};

}  // namespace

Clock& Clock::Real() {
  static RealClock* const clock = new RealClock();  // never destroyed: usable at exit
  return *clock;
}

}  // namespace hcudp
