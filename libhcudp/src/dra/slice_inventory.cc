// OfferSlices: the slices' reading of the one offer rule (hcudp/offer.h).
// A vHCU published free while a claim still runs on it is handed to a second
// claim (issue 23, repro 1); a card published whole while its pre-split
// vHCUs are held is handed to a claim over the running pods (issue 28,
// repro 1). DecideOffers says what is free; this maps its verdicts onto
// what BuildPoolPlan publishes.

#include <algorithm>
#include <string>
#include <vector>

#include "hcudp/dra/slices.h"
#include "hcudp/offer.h"
#include "hcudp_internal/log.h"
#include "node/ledger_read.h"

namespace hcudp::dra {
namespace {

// Held by the claims' or pods' own drivers (a vHCU made for a request):
// capacity consumed from its card, silently not a device.
bool MadeForSomeone(const DeviceOffer& o, const Holdings& holdings) {
  if (o.reason != NotFree::kHeld) return false;
  Holders h = holdings.Of(o.device);
  return !h.holders().empty() && std::all_of(h.holders().begin(), h.holders().end(),
                                             [](const Holder& x) { return x.dynamic; });
}

}  // namespace

SliceOffer OfferSlices(const NodeInventory& inventory, const Holdings& holdings) {
  const OfferPlan plan = DecideOffers(inventory, holdings, OfferMode::kDra);
  SliceOffer offer;
  offer.inventory = inventory;
  offer.inventory.vhcus.clear();
  offer.inventory.mig_instances.clear();
  auto held_back = [&](const DeviceOffer* o, const std::string& what) {
    const std::string why = o != nullptr ? o->why : what + " has no verdict";
    LOG_EVERY_N(WARNING, 100) << what << ": " << why << "; not offered in the slices";
    offer.left_out.push_back({what, why});
  };
  for (const Card& card : inventory.cards) {
    const DeviceOffer* o = plan.Find(DeviceRef::OfCard(card));
    if (o != nullptr && o->free) continue;
    offer.not_whole.insert(card.bdf);
    // A card carrying vHCUs or MIG instances says so in BuildPoolPlan.
    if (o != nullptr && o->reason != NotFree::kCarriesVhcus && o->reason != NotFree::kCarriesMig) {
      held_back(o, "card " + std::to_string(card.index) + " (" + card.bdf + ") whole");
    }
  }
  for (const Vhcu& v : inventory.vhcus) {
    const DeviceOffer* o = plan.Find(DeviceRef::OfVhcu(v));
    if (o != nullptr && o->free) {
      offer.inventory.vhcus.push_back(v);
    } else if (o == nullptr || !MadeForSomeone(*o, holdings)) {
      held_back(o, "vdev" + std::to_string(v.id));
    }
  }
  for (const MigInstance& m : inventory.mig_instances) {
    const DeviceOffer* o = plan.Find(DeviceRef::OfMig(m));
    if (o != nullptr && o->free) {
      offer.inventory.mig_instances.push_back(m);
    } else {
      held_back(o, "MIG instance " + m.uuid);
    }
  }
  return offer;
}

SliceOffer OfferSlices(const NodeInventory& inventory, const std::string& host_root,
                       const std::string& cdi_dir) {
  ::hcudp::internal::LedgerSources sources;
  sources.host_root = host_root;
  sources.cdi_dir = cdi_dir;
  return OfferSlices(inventory, ::hcudp::internal::ReadLedger(sources));
}

}  // namespace hcudp::dra
