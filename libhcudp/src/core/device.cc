#include "hcudp/device.h"

#include <algorithm>
#include <string>

namespace hcudp {

std::string_view HealthName(Health health) {
  return health == Health::kHealthy ? "Healthy" : "Unhealthy";
}

StatusOr<Health> ParseHealth(std::string_view text) {
  if (text == "Healthy") return Health::kHealthy;
  if (text == "Unhealthy") return Health::kUnhealthy;
  return InvalidArgumentError("health \"" + std::string(text) +
                              "\" is not one of Healthy, Unhealthy");
}

std::string_view UnknownReasonName(UnknownReason reason) {
  switch (reason) {
    case UnknownReason::kQueryFailed:
      return "query failed";
    case UnknownReason::kConfTorn:
      return "conf torn";
    case UnknownReason::kVdevUnreadable:
      return "/etc/vdev unreadable";
    case UnknownReason::kMissedDiscovery:
      return "missed by discovery";
    case UnknownReason::kMigModeUnknown:
      return "MIG mode unknown";
    case UnknownReason::kMigConfUnreadable:
      return "MIG conf unreadable";
  }
  return "unknown";
}

std::string_view CertaintyName(Certainty certainty) {
  switch (certainty) {
    case Certainty::kFound:
      return "found";
    case Certainty::kAbsent:
      return "absent";
    case Certainty::kUnknown:
      return "unknown";
  }
  return "unknown";
}

std::string_view LinkTypeName(LinkType type) {
  switch (type) {
    case LinkType::kNone: return "NONE";
    case LinkType::kPcie: return "PCIE";
    case LinkType::kHsl: return "HSL";
    case LinkType::kHyswitch: return "HYSWITCH";
    case LinkType::kUnknown: return "UNKNOWN";
  }
  return "UNKNOWN";
}

StatusOr<LinkType> ParseLinkType(std::string_view text) {
  for (LinkType t : {LinkType::kNone, LinkType::kPcie, LinkType::kHsl, LinkType::kHyswitch,
                     LinkType::kUnknown}) {
    if (text == LinkTypeName(t)) return t;
  }
  return InvalidArgumentError("link type \"" + std::string(text) +
                              "\" is not one of PCIE, HSL, HYSWITCH");
}

const Card* NodeInventory::FindCard(int index) const {
  for (const Card& c : cards) {
    if (c.index == index) return &c;
  }
  return nullptr;
}

const Card* NodeInventory::FindCardByBdf(std::string_view bdf) const {
  for (const Card& c : cards) {
    if (c.bdf == bdf) return &c;
  }
  return nullptr;
}

Lookup<Card> NodeInventory::LookupCardByBdf(std::string_view bdf) const {
  if (const Card* card = FindCardByBdf(bdf)) return Lookup<Card>::Found(*card);
  for (const UnknownCard& u : unknown_cards) {
    if (u.last_known.bdf == bdf || u.last_known.bdf.empty()) {
      std::string why =
          "card " + std::to_string(u.last_known.index) +
          (u.last_known.bdf.empty() ? " (BDF never read)" : " (" + u.last_known.bdf + ")") +
          " is unknown: " + std::string(UnknownReasonName(u.reason));
      if (!u.detail.empty()) why += ": " + u.detail;
      return Lookup<Card>::Unknown(std::move(why));
    }
  }
  return Lookup<Card>::Absent();
}

Lookup<Vhcu> NodeInventory::LookupVhcu(int id) const {
  for (const Vhcu& v : vhcus) {
    if (v.id == id) return Lookup<Vhcu>::Found(v);
  }
  for (const VhcuStateGap& g : vhcu_gaps) {
    if (g.vhcu_id == id || g.vhcu_id < 0) {
      return Lookup<Vhcu>::Unknown("vHCU " + std::to_string(id) +
                                   " is unknown: " + std::string(UnknownReasonName(g.kind)) + ": " +
                                   g.path + (g.reason.empty() ? "" : ": " + g.reason));
    }
  }
  return Lookup<Vhcu>::Absent();
}

Lookup<bool> NodeInventory::LookupMigMode() const {
  for (const MigStateGap& g : mig_gaps) {
    if (g.kind == UnknownReason::kMigModeUnknown) {
      return Lookup<bool>::Unknown("MIG mode is unknown: " + g.reason);
    }
  }
  return Lookup<bool>::Found(mig_enabled);
}

Lookup<MigInstance> NodeInventory::LookupMig(std::string_view uuid) const {
  if (uuid.rfind("MIG-", 0) == 0) uuid.remove_prefix(4);
  for (const MigInstance& m : mig_instances) {
    if (m.uuid == uuid) return Lookup<MigInstance>::Found(m);
  }
  if (!mig_gaps.empty()) {
    const MigStateGap& g = mig_gaps.front();
    return Lookup<MigInstance>::Unknown("MIG instance " + std::string(uuid) +
                                        " is unknown: " + std::string(UnknownReasonName(g.kind)) +
                                        ": " + g.path + (g.reason.empty() ? "" : ": " + g.reason));
  }
  return Lookup<MigInstance>::Absent();
}

const Link* NodeInventory::FindLink(int src, int dst) const {
  for (const Link& l : links) {
    if (l.src == src && l.dst == dst) return &l;
  }
  return nullptr;
}

int NodeInventory::VhcuCount(int index) const {
  return static_cast<int>(
      std::count_if(vhcus.begin(), vhcus.end(), [&](const Vhcu& v) { return v.card == index; }));
}

bool NodeInventory::VhcuStateKnown(int index) const {
  return std::none_of(vhcu_gaps.begin(), vhcu_gaps.end(),
                      [&](const VhcuStateGap& g) { return g.card < 0 || g.card == index; });
}

bool NodeInventory::CardStateKnown(std::string_view bdf) const {
  Lookup<Card> card = LookupCardByBdf(bdf);
  switch (card.certainty()) {
    case Certainty::kFound:
      return VhcuStateKnown(card.value().index);
    case Certainty::kUnknown:
      return false;
    case Certainty::kAbsent:
      return true;
  }
  return false;
}

}  // namespace hcudp
