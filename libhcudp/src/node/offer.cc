// DecideOffers: the one offer rule (hcudp/offer.h says it in words).
#include "hcudp/offer.h"

#include <algorithm>

namespace hcudp {
namespace {

DeviceOffer NotOffered(DeviceRef ref, NotFree reason, std::string why) {
  DeviceOffer o;
  o.device = std::move(ref);
  o.reason = reason;
  o.why = std::move(why);
  return o;
}

DeviceOffer Offered(DeviceRef ref, bool shared) {
  DeviceOffer o;
  o.device = std::move(ref);
  o.free = true;
  o.shared = shared;
  return o;
}

bool HeldBy(const Holders& h, HolderSource source) {
  return std::any_of(h.holders().begin(), h.holders().end(),
                     [&](const Holder& x) { return x.source == source; });
}

// A vHCU made for a claim's or a pod's request (not pre-split): every record
// holding it says so.
bool Dynamic(const Holders& h) {
  return !h.holders().empty() && std::all_of(h.holders().begin(), h.holders().end(),
                                             [](const Holder& x) { return x.dynamic; });
}

// Why the node's MIG state forbids whole cards and vHCUs, or kNone.
NotFree MigBlock(const NodeInventory& inv, std::string* why) {
  Lookup<bool> mode = inv.LookupMigMode();
  switch (mode.certainty()) {
    case Certainty::kUnknown:
      *why = mode.why();
      return NotFree::kMigModeUnknown;
    case Certainty::kFound:
      if (mode.value()) {
        *why = "the node is in MIG mode";
        return NotFree::kMigNode;
      }
      return NotFree::kNone;
    case Certainty::kAbsent:
      break;
  }
  return NotFree::kNone;
}

DeviceOffer DecideVhcu(const NodeInventory& inv, const Holdings& holdings, const Vhcu& v,
                       NotFree mig, const std::string& mig_why) {
  DeviceRef ref = DeviceRef::OfVhcu(v);
  const std::string name = ref.Name();
  if (mig != NotFree::kNone) return NotOffered(ref, mig, name + ": " + mig_why);
  Lookup<Card> card = inv.LookupCardByBdf(v.card_bdf);
  if (card.certainty() != Certainty::kFound || v.card < 0) {
    return NotOffered(ref, NotFree::kParentUnknown,
                      name + ": its card " + v.card_bdf + " is " +
                          std::string(CertaintyName(card.certainty())) +
                          (card.why().empty() ? "" : ": " + card.why()));
  }
  for (const VhcuStateGap& g : inv.vhcu_gaps) {
    if (g.vhcu_id == v.id || g.vhcu_id < 0) {
      return NotOffered(
          ref, NotFree::kUnknown,
          name + " is unknown: " + std::string(UnknownReasonName(g.kind)) + ": " + g.path);
    }
  }
  Holders own = holdings.Of(ref);
  Holders parent = holdings.Of(DeviceRef::OfCard(card.value()));
  if (own.certainty() == Certainty::kUnknown) {
    return NotOffered(ref, NotFree::kHoldersUnknown, own.why());
  }
  if (own.certainty() == Certainty::kFound) {
    return NotOffered(ref, NotFree::kHeld, name + " is held by " + own.Describe());
  }
  if (parent.certainty() == Certainty::kFound) {
    return NotOffered(ref, NotFree::kParentHeld,
                      name + ": its card is held whole by " + parent.Describe());
  }
  return Offered(ref, false);
}

DeviceOffer DecideCard(const NodeInventory& inv, const Holdings& holdings, const Card& card,
                       OfferMode mode, NotFree mig, const std::string& mig_why) {
  DeviceRef ref = DeviceRef::OfCard(card);
  const std::string name = ref.Name();
  // What its vHCUs take, whatever else is decided.
  bool only_dynamic_claims = true;
  int vhcus = 0;
  DeviceOffer tally;
  for (const Vhcu& v : inv.vhcus) {
    if (v.card != card.index) continue;
    ++vhcus;
    Holders h = holdings.Of(DeviceRef::OfVhcu(v));
    tally.used_vhcus += 1;
    tally.used_compute_units += v.compute_units;
    tally.used_memory_mib += v.memory_mib;
    const bool hami_pod =
        h.certainty() == Certainty::kFound &&
        (HeldBy(h, HolderSource::kHamiMark) || HeldBy(h, HolderSource::kVhcuIntent));
    if (!hami_pod) {
      tally.foreign_vhcus += 1;
      tally.foreign_compute_units += v.compute_units;
      tally.foreign_memory_mib += v.memory_mib;
    }
    if (h.certainty() != Certainty::kFound || !Dynamic(h) || !HeldBy(h, HolderSource::kDraClaim)) {
      only_dynamic_claims = false;
    }
  }
  auto with_tally = [&](DeviceOffer o) {
    o.used_vhcus = tally.used_vhcus;
    o.used_compute_units = tally.used_compute_units;
    o.used_memory_mib = tally.used_memory_mib;
    o.foreign_vhcus = tally.foreign_vhcus;
    o.foreign_compute_units = tally.foreign_compute_units;
    o.foreign_memory_mib = tally.foreign_memory_mib;
    return o;
  };
  if (mig != NotFree::kNone) return with_tally(NotOffered(ref, mig, name + ": " + mig_why));
  for (const MigInstance& m : inv.mig_instances) {
    if (m.card == card.index || m.card_bdf == card.bdf) {
      return with_tally(NotOffered(ref, NotFree::kCarriesMig, name + " carries MIG instances"));
    }
  }
  if (!inv.VhcuStateKnown(card.index)) {
    return with_tally(NotOffered(ref, NotFree::kUnknown, name + ": its vHCU state cannot be read"));
  }
  Holders own = holdings.Of(ref);
  if (own.certainty() == Certainty::kUnknown) {
    return with_tally(NotOffered(ref, NotFree::kHoldersUnknown, own.why()));
  }
  // HAMi accounts its own pods' whole cards (from their annotations): only
  // another owner takes a card from it.
  const bool hami_own =
      mode == OfferMode::kHami &&
      std::all_of(own.holders().begin(), own.holders().end(),
                  [](const Holder& x) { return x.source == HolderSource::kHamiMark; });
  if (own.certainty() == Certainty::kFound && !hami_own) {
    return with_tally(NotOffered(ref, NotFree::kHeld, name + " is held by " + own.Describe()));
  }
  if (vhcus > 0) {
    if (mode == OfferMode::kHami) return with_tally(Offered(ref, true));
    if (mode == OfferMode::kDra && only_dynamic_claims) return with_tally(Offered(ref, true));
    return with_tally(NotOffered(ref, NotFree::kCarriesVhcus,
                                 name + " carries " + std::to_string(vhcus) + " vHCU(s)"));
  }
  return with_tally(Offered(ref, mode == OfferMode::kHami));
}

DeviceOffer DecideMig(const NodeInventory& inv, const Holdings& holdings, const MigInstance& m) {
  DeviceRef ref = DeviceRef::OfMig(m);
  const std::string name = ref.Name();
  Lookup<bool> mode = inv.LookupMigMode();
  if (mode.certainty() != Certainty::kFound) {
    return NotOffered(ref, NotFree::kMigModeUnknown, name + ": " + mode.why());
  }
  Lookup<Card> card = inv.LookupCardByBdf(m.card_bdf);
  if (card.certainty() != Certainty::kFound || m.card < 0) {
    return NotOffered(
        ref, NotFree::kParentUnknown,
        name + ": its card " + m.card_bdf + " is " + std::string(CertaintyName(card.certainty())));
  }
  Holders own = holdings.Of(ref);
  if (own.certainty() == Certainty::kUnknown) {
    return NotOffered(ref, NotFree::kHoldersUnknown, own.why());
  }
  if (own.certainty() == Certainty::kFound) {
    return NotOffered(ref, NotFree::kHeld, name + " is held by " + own.Describe());
  }
  Holders parent = holdings.Of(DeviceRef::OfCard(card.value()));
  if (parent.certainty() == Certainty::kFound) {
    return NotOffered(ref, NotFree::kParentHeld,
                      name + ": its card is held whole by " + parent.Describe());
  }
  return Offered(ref, false);
}

}  // namespace

std::string_view NotFreeName(NotFree reason) {
  switch (reason) {
    case NotFree::kNone:
      return "offered";
    case NotFree::kUnknown:
      return "unknown";
    case NotFree::kHoldersUnknown:
      return "holders unknown";
    case NotFree::kHeld:
      return "held";
    case NotFree::kCarriesVhcus:
      return "carries vHCUs";
    case NotFree::kCarriesMig:
      return "carries MIG instances";
    case NotFree::kMigNode:
      return "MIG node";
    case NotFree::kMigModeUnknown:
      return "MIG mode unknown";
    case NotFree::kParentUnknown:
      return "parent card unknown";
    case NotFree::kParentHeld:
      return "parent card held";
  }
  return "?";
}

OfferPlan DecideOffers(const NodeInventory& inventory, const Holdings& holdings, OfferMode mode) {
  OfferPlan plan;
  std::string mig_why;
  const NotFree mig = MigBlock(inventory, &mig_why);
  for (const Card& card : inventory.cards) {
    plan.devices.push_back(DecideCard(inventory, holdings, card, mode, mig, mig_why));
  }
  for (const UnknownCard& u : inventory.unknown_cards) {
    DeviceRef ref = DeviceRef::OfCard(u.last_known);
    std::string why = ref.Name() + " is unknown: " + std::string(UnknownReasonName(u.reason)) +
                      (u.detail.empty() ? "" : ": " + u.detail);
    plan.devices.push_back(NotOffered(std::move(ref), NotFree::kUnknown, std::move(why)));
  }
  for (const Vhcu& v : inventory.vhcus) {
    plan.devices.push_back(DecideVhcu(inventory, holdings, v, mig, mig_why));
  }
  for (const MigInstance& m : inventory.mig_instances) {
    plan.devices.push_back(DecideMig(inventory, holdings, m));
  }
  return plan;
}

const DeviceOffer* OfferPlan::Find(const DeviceRef& device) const {
  for (const DeviceOffer& o : devices) {
    if (o.device.kind != device.kind) continue;
    switch (device.kind) {
      case DeviceRef::Kind::kCard:
        if (!device.card_bdf.empty() ? o.device.card_bdf == device.card_bdf
                                     : o.device.card == device.card) {
          return &o;
        }
        break;
      case DeviceRef::Kind::kVhcu:
        if (o.device.vhcu_id == device.vhcu_id) return &o;
        break;
      case DeviceRef::Kind::kMig:
        if (o.device.Name() == device.Name()) return &o;
        break;
    }
  }
  return nullptr;
}

bool OfferPlan::Free(const DeviceRef& device) const {
  const DeviceOffer* o = Find(device);
  return o != nullptr && o->free;
}

}  // namespace hcudp
