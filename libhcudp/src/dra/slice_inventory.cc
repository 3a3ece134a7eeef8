// OfferSlices: the offer rule of the slices. A vHCU published free while a
// claim still runs on it is handed to a second claim (issue 23, repro 1); a
// card published whole while its pre-split vHCUs are held is handed to a
// claim over the running pods (issue 28, repro 1). So whatever says a device
// may be someone's keeps it, and its card, out.
#include <glog/logging.h>

#include <set>
#include <string>
#include <vector>

#include "hcudp/dra/slices.h"
#include "hcudp/vhcu_manager.h"

namespace hcudp::dra {

SliceOffer OfferSlices(const NodeInventory& inventory, const std::string& host_root,
                       const std::vector<PreparedClaim>& prepared) {
  std::set<int> held_presplit;          // pre-split vHCU ids prepared claims hold
  std::set<int> recorded_dynamic;       // vHCU ids claims made (their marks may be lost)
  std::set<std::string> held_migs;      // MIG instance UUIDs prepared claims hold
  std::set<std::string> dynamic_cards;  // BDFs of cards DRA made vHCUs on
  for (const PreparedClaim& c : prepared) {
    for (const PreparedDevice& d : c.devices) {
      if (d.kind == PreparedKind::kVhcu) held_presplit.insert(d.vhcu_id);
      if (d.kind == PreparedKind::kDynamicVhcu) {
        recorded_dynamic.insert(d.vhcu_id);
        dynamic_cards.insert(d.card_bdf);
      }
      if (d.kind == PreparedKind::kMig) held_migs.insert(d.mig_uuid);
    }
  }
  StatusOr<std::vector<MarkFile>> marks = ListMarkFiles(host_root, nullptr);
  std::set<int> marked_cards;  // card indexes vHCU marks name
  if (marks.ok()) {
    for (const MarkFile& m : *marks) {
      if (!m.name.whole_card()) marked_cards.insert(m.name.card);
    }
  }
  SliceOffer offer;
  offer.inventory = inventory;
  offer.inventory.vhcus.clear();
  offer.inventory.mig_instances.clear();
  auto leave_out = [&](const std::string& what, const std::string& card_bdf, std::string reason,
                       bool card_not_whole) {
    LOG_EVERY_N(WARNING, 100) << what << ": " << reason << "; not offered in the slices";
    offer.left_out.push_back({what, std::move(reason)});
    if (card_not_whole) offer.not_whole.insert(card_bdf);
  };
  for (const MigInstance& m : inventory.mig_instances) {
    if (held_migs.count(m.uuid) != 0) {
      const Card* card = inventory.FindCard(m.card);
      leave_out("MIG instance " + m.uuid, card != nullptr ? card->bdf : "",
                "a prepared claim holds it", true);
      continue;
    }
    offer.inventory.mig_instances.push_back(m);
  }
  for (const Vhcu& v : inventory.vhcus) {
    const std::string what = "vdev" + std::to_string(v.id);
    if (!marks.ok()) {
      leave_out(what, v.card_bdf, "its owners cannot be read: " + marks.status().message(), true);
      continue;
    }
    if (held_presplit.count(v.id) != 0) {
      leave_out(what, v.card_bdf, "a prepared claim holds it", true);
      continue;
    }
    StatusOr<std::vector<VhcuClaim>> claims = FindVhcuClaims(host_root, v);
    if (!claims.ok()) {
      leave_out(what, v.card_bdf, "its owners cannot be read: " + claims.status().message(), true);
      continue;
    }
    if (!claims->empty()) continue;  // someone's: capacity consumed, not a device
    if (recorded_dynamic.count(v.id) != 0) {
      // A claim's own vHCU whose mark is lost: consumed capacity still.
      leave_out(what, v.card_bdf, "a prepared claim made it (its mark is missing)", false);
      continue;
    }
    if (dynamic_cards.count(v.card_bdf) != 0 || marked_cards.count(v.card) != 0) {
      leave_out(what, v.card_bdf,
                "no mark names it, but its card carries claimed vHCUs (a lost mark?)", true);
      continue;
    }
    offer.inventory.vhcus.push_back(v);
  }
  return offer;
}

}  // namespace hcudp::dra
