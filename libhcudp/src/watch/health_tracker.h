// HealthTracker: per-card health with hysteresis. A card's reported health
// flips only after kConfirmReadings consecutive readings that disagree with
// it (2: one bad reading never drains a node, one good reading never
// readmits a flapping card). Readings only come from successful queries; a
// failed query records nothing, so it never changes health.
//
// Not thread-safe: owned by the node watcher's thread.
#ifndef HCUDP_WATCH_HEALTH_TRACKER_H_
#define HCUDP_WATCH_HEALTH_TRACKER_H_

#include <map>
#include <set>
#include <string>

#include "hcudp/device.h"

namespace hcudp {

class HealthTracker {
 public:
  static constexpr int kConfirmReadings = 2;

  // Starts tracking `bdf` at `initial` (no-op if already tracked).
  void Seed(const std::string& bdf, Health initial);
  // Records one reading. Returns true when the reported health changed.
  bool Record(const std::string& bdf, Health reading);
  // True when some card has readings disagreeing with its reported health
  // that are not yet confirmed (the caller should re-read soon).
  bool AnyPending() const;
  // Reported health; `fallback` for an untracked card.
  Health Reported(const std::string& bdf, Health fallback) const;
  // Drops cards not in `present` (they left the node).
  void Retain(const std::set<std::string>& present);

 private:
  struct State {
    Health reported = Health::kHealthy;
    int disagreeing = 0;  // consecutive readings != reported
  };
  std::map<std::string, State> cards_;
};

}  // namespace hcudp

#endif  // HCUDP_WATCH_HEALTH_TRACKER_H_
