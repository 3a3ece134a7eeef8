// VhcuKeeper: vHCU state the backend could not read (NodeInventory::
// vhcu_gaps) is never read as "no vHCUs" (fail closed, issue 9).
//
// Apply() fills a fresh inventory's gaps from the last good vHCUs, which
// are those of the inventory the node watcher last used (it keeps that
// inventory anyway; the keeper keeps no copy):
//   - a conf that cannot be read keeps the vHCU it last held, and the gap is
//     narrowed to that vHCU's card (other cards stay as read), found by its
//     BDF: a card missed renumbers the ones after it, and the index the
//     vHCU was read at may name another card now. When its card is not
//     discovered now, the gap stays on no particular card;
//   - a conf never read before, or /etc/vdev unreadable as a whole, leaves
//     the gap on no particular card: every card may carry vHCUs.
// A card with a gap stays in vhcu_gaps, so BuildResources never offers it
// whole.
//
// Each gap is logged as one warning naming its path when it appears, again
// every kRewarnInterval while it lasts, and once more (INFO) when the path
// is readable again.
//
// Thread-safety: none; the node watcher's thread owns it.
#ifndef HCUDP_WATCH_VHCU_KEEPER_H_
#define HCUDP_WATCH_VHCU_KEEPER_H_

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "hcudp/clock.h"
#include "hcudp/device.h"

namespace hcudp {

class VhcuKeeper {
 public:
  static constexpr std::chrono::seconds kRewarnInterval{300};

  // `warn`: log gaps as warnings (false when the strategy does not use
  // vHCU state; they are then logged at VLOG(1)).
  explicit VhcuKeeper(bool warn = true) : warn_(warn) {}

  // Merges `last_good` (the last inventory's vHCUs) into `inventory` where
  // it has gaps.
  static void Apply(const std::vector<Vhcu>& last_good, NodeInventory* inventory);
  // Logs what changed in the gaps since the last call (see above).
  void Log(const std::vector<VhcuStateGap>& gaps, Clock::TimePoint now);

 private:
  bool warn_;
  std::map<std::string, Clock::TimePoint> warned_;  // gap path -> last warning
};

}  // namespace hcudp

#endif  // HCUDP_WATCH_VHCU_KEEPER_H_
