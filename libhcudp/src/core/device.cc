#include "hcudp/device.h"

#include <algorithm>

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

const Vhcu* NodeInventory::FindVhcu(int id) const {
  for (const Vhcu& v : vhcus) {
    if (v.id == id) return &v;
  }
  return nullptr;
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

}  // namespace hcudp
