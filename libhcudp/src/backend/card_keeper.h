// The backend's memory of cards across discoveries (issues 23, 28). A card
// that one discovery cannot read or does not find is kept as unknown, with
// its last known identity, until its absence is confirmed: its PCI device is
// gone from sysfs, or — on time, never by counting calls — at least
// kLooksToConfirm looks in a row agree AND kTimeToConfirm has passed since
// the first of them. A re-check (Backend::Recheck: a caller asking again
// about an unknown card) is never counted as a look. Never dropped
// silently: whoever destroys or frees on "absent" would otherwise act on a
// card the vendor library only missed for a few seconds.
#ifndef HCUDP_SRC_BACKEND_CARD_KEEPER_H_
#define HCUDP_SRC_BACKEND_CARD_KEEPER_H_

#include <chrono>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "hcudp/clock.h"
#include "hcudp/device.h"
#include "hcudp_internal/host_fs.h"
#include "hcudp_internal/thread_annotations.h"

namespace hcudp {

// What one discovery read about the cards.
struct CardLook {
  std::vector<Card> cards;             // readable, sorted by index
  std::vector<UnknownCard> failed;     // counted by the vendor, a query failed
  std::set<std::string> driver_bound;  // BDFs the HCU driver binds in sysfs
};

// HCU BDFs bound to the HCU driver under <host-root>/sys/module/hy*cu/drivers/
// pci:*/ (hcu-hardware.md §2.2); empty when sysfs cannot be read.
std::set<std::string> DriverBoundBdfs(const internal::HostFs& fs);

class CardKeeper {
 public:
  // A card missed by this many looks in a row, over at least kTimeToConfirm
  // since the first, while its PCI device still exists, is taken as gone.
  static constexpr int kLooksToConfirm = 3;
  static constexpr std::chrono::seconds kTimeToConfirm{60};

  // `clock` is not owned and must outlive the keeper.
  CardKeeper(internal::HostFs fs, Clock& clock) : fs_(std::move(fs)), clock_(clock) {}

  // How a discovery counts.
  enum class LookKind {
    kLook,     // a look at the node: counts towards confirming a miss
    kRecheck,  // asking again about unknown cards: never counts
  };

  // The unknown cards of `look`, merged with what earlier looks saw, sorted
  // by BDF (an unread BDF sorts first). Remembers the readable cards.
  std::vector<UnknownCard> Merge(const CardLook& look, LookKind kind = LookKind::kLook);

 private:
  // <host-root>/sys/bus/pci/devices/<bdf> exists.
  bool PciPresent(const std::string& bdf) const;
  // Counts one more miss of `bdf` (a look, not a re-check) and says whether
  // its absence is now confirmed; `detail` gets why, for the log.
  bool Missed(const std::string& bdf, LookKind kind, int* missed) HCUDP_REQUIRES(mutex_);

  const internal::HostFs fs_;
  Clock& clock_;
  // A leaf: only sysfs stats are made under it, never a vendor call.
  Mutex mutex_;
  std::map<std::string, Card> seen_ HCUDP_GUARDED_BY(mutex_);   // last identity, by BDF
  std::map<std::string, int> missed_ HCUDP_GUARDED_BY(mutex_);  // looks in a row, by BDF
  // When each missing card was first missed (this run of misses), by BDF.
  std::map<std::string, Clock::TimePoint> first_missed_ HCUDP_GUARDED_BY(mutex_);
  // Confirmed gone while still bound in sysfs: not unknown again until read.
  std::set<std::string> gone_ HCUDP_GUARDED_BY(mutex_);
};

}  // namespace hcudp

#endif  // HCUDP_SRC_BACKEND_CARD_KEEPER_H_
