#include "testing/sim_clock.h"

#include <thread>

namespace hcudp::testing {
namespace {

// SimClock's steady time starts here, far from 0 so that "deadline - 1 h"
// stays a valid time_point.
constexpr std::chrono::hours kEpoch(1'000'000);

}  // namespace

SimClock::SimClock(WallTime wall) : wall_start_(wall) {}

Clock::TimePoint SimClock::Now() const {
  std::lock_guard<std::mutex> lock(mu_);
  return TimePoint(kEpoch) + elapsed_;
}

Clock::WallTime SimClock::WallNow() const {
  std::lock_guard<std::mutex> lock(mu_);
  return wall_start_ + std::chrono::duration_cast<WallTime::duration>(elapsed_);
}

void SimClock::SleepUntil(TimePoint deadline) {
  std::unique_lock<std::mutex> lock(mu_);
  ++sleepers_;
  auto registered = deadlines_.insert(deadline);
  changed_.notify_all();
  changed_.wait(lock, [&] { return TimePoint(kEpoch) + elapsed_ >= deadline; });
  --sleepers_;
  deadlines_.erase(registered);
  changed_.notify_all();
}

bool SimClock::WaitUntil(Waiter& waiter, TimePoint deadline, const std::function<bool()>& done) {
  std::multiset<TimePoint>::iterator registered;
  {
    std::lock_guard<std::mutex> g(mu_);
    ++sleepers_;
    registered = deadlines_.insert(deadline);
    waiting_on_.insert(&waiter);
    changed_.notify_all();
  }
  bool result = false;
  while (true) {
    if (done()) {
      result = true;
      break;
    }
    if (Now() >= deadline) break;
    // Advance() wakes the waiter; the short real timeout covers an Advance
    // that lands between the checks above and this block (it cannot take
    // the waiter's lock).
    waiter.Block(std::chrono::steady_clock::now() + std::chrono::milliseconds(5));
  }
  std::lock_guard<std::mutex> g(mu_);
  --sleepers_;
  deadlines_.erase(registered);
  waiting_on_.erase(&waiter);
  changed_.notify_all();
  return result;
}

void SimClock::Advance(std::chrono::nanoseconds d) {
  std::lock_guard<std::mutex> lock(mu_);
  elapsed_ += d;
  changed_.notify_all();
  // Under mu_: a waiter leaves WaitUntil only after unregistering (which
  // needs mu_), so every waiter here is still alive.
  for (Waiter* waiter : waiting_on_) waiter->Wake();
}

bool SimClock::WaitForSleepers(int n, std::chrono::milliseconds real_timeout) const {
  std::unique_lock<std::mutex> lock(mu_);
  return changed_.wait_for(lock, real_timeout, [&] { return sleepers_ >= n; });
}

std::optional<Clock::TimePoint> SimClock::NextDeadline() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (deadlines_.empty()) return std::nullopt;
  return *deadlines_.begin();
}

int SimClock::sleepers() const {
  std::lock_guard<std::mutex> lock(mu_);
  return sleepers_;
}

bool AdvanceUntil(SimClock& clock, const std::function<bool()>& done,
                  std::chrono::nanoseconds max_step, std::chrono::milliseconds real_timeout) {
  const auto real_deadline = std::chrono::steady_clock::now() + real_timeout;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= real_deadline) return false;
    if (!clock.WaitForSleepers(1, std::chrono::milliseconds(5))) continue;
    const std::optional<Clock::TimePoint> next = clock.NextDeadline();
    const Clock::TimePoint now = clock.Now();
    if (next && *next > now && *next - now <= max_step) {
      clock.Advance(*next - now);
    } else {
      std::this_thread::yield();  // a sleeper is on its way out
    }
  }
  return true;
}

}  // namespace hcudp::testing
