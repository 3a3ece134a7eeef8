// OfferableInventory: which vHCUs the slices may offer as free pre-split
// devices. A vHCU published free while a claim still runs on it is handed to
// a second claim (issue 23, reproduction 1), so anything that says it may be
// someone's keeps it out.
#include <glog/logging.h>

#include <set>
#include <string>
#include <vector>

#include "hcudp/dra/slices.h"
#include "hcudp/vhcu_manager.h"

namespace hcudp::dra {

NodeInventory OfferableInventory(const NodeInventory& inventory, const std::string& host_root,
                                 const std::vector<PreparedClaim>& prepared,
                                 std::vector<LeftOutDevice>* left_out) {
  std::set<int> recorded;               // vHCU ids prepared claims record
  std::set<std::string> dynamic_cards;  // BDFs of cards DRA made vHCUs on
  for (const PreparedClaim& c : prepared) {
    for (const PreparedDevice& d : c.devices) {
      if (d.vhcu_id >= 0) recorded.insert(d.vhcu_id);
      if (d.kind == PreparedKind::kDynamicVhcu) dynamic_cards.insert(d.card_bdf);
    }
  }
  StatusOr<std::vector<MarkFile>> marks = ListMarkFiles(host_root, nullptr);
  std::set<int> marked_cards;  // card indexes vHCU marks name
  if (marks.ok()) {
    for (const MarkFile& m : *marks) {
      if (!m.name.whole_card()) marked_cards.insert(m.name.card);
    }
  }
  auto leave_out = [&](const Vhcu& v, std::string reason) {
    LOG_EVERY_N(WARNING, 100) << "vdev" << v.id << " (" << v.conf_path << "): " << reason
                              << "; not offered in the slices";
    if (left_out != nullptr) left_out->push_back({"vdev" + std::to_string(v.id), reason});
  };
  NodeInventory out = inventory;
  out.vhcus.clear();
  for (const Vhcu& v : inventory.vhcus) {
    if (!marks.ok()) {
      leave_out(v, "its owners cannot be read: " + marks.status().message());
      continue;
    }
    StatusOr<std::vector<VhcuClaim>> claims = FindVhcuClaims(host_root, v);
    if (!claims.ok()) {
      leave_out(v, "its owners cannot be read: " + claims.status().message());
      continue;
    }
    if (!claims->empty()) continue;  // someone's: capacity consumed, not a device
    if (recorded.count(v.id) != 0) {
      leave_out(v, "a prepared claim records it (its mark is missing)");
      continue;
    }
    if (dynamic_cards.count(v.card_bdf) != 0 || marked_cards.count(v.card) != 0) {
      leave_out(v, "no mark names it, but its card carries claimed vHCUs (a lost mark?)");
      continue;
    }
    out.vhcus.push_back(v);
  }
  return out;
}

}  // namespace hcudp::dra
