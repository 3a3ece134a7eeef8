// The backend's memory of cards across discoveries (issue 23). A card that
// one discovery cannot read or does not find is kept as unknown, with its
// last known identity, until its absence is confirmed: its PCI device is
// gone from sysfs, or kLooksToConfirm discoveries in a row agree. Never
// dropped silently: whoever destroys or frees on "absent" would otherwise
// act on a card that only failed to answer once.
#ifndef HCUDP_SRC_BACKEND_CARD_KEEPER_H_
#define HCUDP_SRC_BACKEND_CARD_KEEPER_H_

#include <map>
#include <set>
#include <string>
#include <vector>

#include "hcudp/device.h"
#include "hcudp_internal/thread_annotations.h"

namespace hcudp {

// What one discovery read about the cards.
struct CardLook {
  std::vector<Card> cards;             // readable, sorted by index
  std::vector<UnknownCard> failed;     // counted by the vendor, a query failed
  std::set<std::string> driver_bound;  // BDFs the HCU driver binds in sysfs
};

// HCU BDFs bound to the HCU driver under host_root/sys/module/hy*cu/drivers/
// pci:*/ (hcu-hardware.md §2.2); empty when sysfs cannot be read.
std::set<std::string> DriverBoundBdfs(const std::string& host_root);

class CardKeeper {
 public:
  // A card missed by this many discoveries in a row, while its PCI device
  // still exists, is taken as gone.
  static constexpr int kLooksToConfirm = 3;

  explicit CardKeeper(std::string host_root) : host_root_(std::move(host_root)) {}

  // The unknown cards of `look`, merged with what earlier looks saw, sorted
  // by BDF (an unread BDF sorts first). Remembers the readable cards.
  std::vector<UnknownCard> Merge(const CardLook& look);

 private:
  // host_root/sys/bus/pci/devices/<bdf> exists.
  bool PciPresent(const std::string& bdf) const;

  const std::string host_root_;
  // A leaf: only sysfs stats are made under it, never a vendor call.
  Mutex mutex_;
  std::map<std::string, Card> seen_ HCUDP_GUARDED_BY(mutex_);   // last identity, by BDF
  std::map<std::string, int> missed_ HCUDP_GUARDED_BY(mutex_);  // looks in a row, by BDF
  // Confirmed gone while still bound in sysfs: not unknown again until read.
  std::set<std::string> gone_ HCUDP_GUARDED_BY(mutex_);
};

}  // namespace hcudp

#endif  // HCUDP_SRC_BACKEND_CARD_KEEPER_H_
