#include "watch/vhcu_keeper.h"

#include <algorithm>
#include <set>

#include "hcudp_internal/log.h"

namespace hcudp {
namespace {

// The index of kept vHCU `v`'s card in `inventory`, by the card's BDF: a
// card missed renumbers the cards after it, so the index `v` was read at
// may name another card now. -1 when its card is not discovered now.
// Without a BDF (never read), the index as read.
int KeptVhcuCardIndex(const Vhcu& v, const NodeInventory& inventory) {
  if (v.card_bdf.empty()) return v.card;
  const Card* card = inventory.FindCardByBdf(v.card_bdf);
  return card != nullptr ? card->index : -1;
}

}  // namespace

void VhcuKeeper::Apply(const std::vector<Vhcu>& last_good, NodeInventory* inventory) {
  if (inventory->vhcu_gaps.empty()) return;
  std::set<int> present;
  for (const Vhcu& v : inventory->vhcus) present.insert(v.id);
  auto keep = [&](const Vhcu& v) {
    if (!present.insert(v.id).second) return;
    inventory->vhcus.push_back(v);
    inventory->vhcus.back().card = KeptVhcuCardIndex(v, *inventory);
  };
  for (VhcuStateGap& gap : inventory->vhcu_gaps) {
    if (gap.vhcu_id < 0) {  // the whole directory: every vHCU we knew
      for (const Vhcu& v : last_good) keep(v);
      continue;
    }
    auto it = std::find_if(last_good.begin(), last_good.end(),
                           [&gap](const Vhcu& v) { return v.id == gap.vhcu_id; });
    if (it == last_good.end()) continue;  // never read: it may be on any card
    keep(*it);
    // Its card as it answers now; a card not discovered now leaves the
    // gap on no particular card (fail closed).
    if (gap.card < 0) gap.card = KeptVhcuCardIndex(*it, *inventory);
  }
  std::sort(inventory->vhcus.begin(), inventory->vhcus.end(),
            [](const Vhcu& a, const Vhcu& b) { return a.id < b.id; });
}

void VhcuKeeper::Log(const std::vector<VhcuStateGap>& gaps, Clock::TimePoint now) {
  std::set<std::string> current;
  for (const VhcuStateGap& gap : gaps) {
    if (!current.insert(gap.path).second) continue;
    auto it = warned_.find(gap.path);
    if (it != warned_.end() && now - it->second < kRewarnInterval) continue;
    warned_[gap.path] = now;
    std::string kept =
        gap.card >= 0 ? "card " + std::to_string(gap.card) +
                            "; it is not offered whole until this can be read"
                      : std::string("every card; none is offered whole until this can be read");
    if (warn_) {
      LOG(WARNING) << "cannot read vHCU state " << gap.path << ": " << gap.reason
                   << "; keeping the last good vHCUs of " << kept;
    } else {
      VLOG(1) << "cannot read vHCU state " << gap.path << ": " << gap.reason;
    }
  }
  for (auto it = warned_.begin(); it != warned_.end();) {
    if (current.count(it->first) != 0) {
      ++it;
      continue;
    }
    if (warn_) {
      LOG(INFO) << "vHCU state readable again: " << it->first;
    } else {
      VLOG(1) << "vHCU state readable again: " << it->first;
    }
    it = warned_.erase(it);
  }
}

}  // namespace hcudp
