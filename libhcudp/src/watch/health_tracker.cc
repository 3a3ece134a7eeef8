#include "watch/health_tracker.h"

namespace hcudp {

void HealthTracker::Seed(const std::string& bdf, Health initial) {
  cards_.emplace(bdf, State{initial, 0});
}

bool HealthTracker::Record(const std::string& bdf, Health reading) {
  auto [it, inserted] = cards_.emplace(bdf, State{reading, 0});
  if (inserted) return false;
  State& s = it->second;
  if (reading == s.reported) {
    s.disagreeing = 0;
    return false;
  }
  if (++s.disagreeing < kConfirmReadings) return false;
  s.reported = reading;
  s.disagreeing = 0;
  return true;
}

bool HealthTracker::AnyPending() const {
  for (const auto& [bdf, s] : cards_) {
    if (s.disagreeing > 0) return true;
  }
  return false;
}

Health HealthTracker::Reported(const std::string& bdf, Health fallback) const {
  auto it = cards_.find(bdf);
  return it == cards_.end() ? fallback : it->second.reported;
}

void HealthTracker::Retain(const std::set<std::string>& present) {
  for (auto it = cards_.begin(); it != cards_.end();) {
    it = present.count(it->first) ? std::next(it) : cards_.erase(it);
  }
}

}  // namespace hcudp
