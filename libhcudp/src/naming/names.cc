// Resource name construction: prefixes per naming policy, vHCU and MIG
// profile keys and the HAMi names (seed-behaviour.md §2.2).
#include <algorithm>

#include "hcudp/naming.h"

namespace hcudp {
namespace {

constexpr std::string_view kHamiCount = "hcunum";

std::string_view CutAtComma(std::string_view model) { return model.substr(0, model.find(',')); }

}  // namespace

std::string_view DeviceKindName(DeviceKind kind) {
  switch (kind) {
    case DeviceKind::kCard:
      return "card";
    case DeviceKind::kVhcu:
      return "vhcu";
    case DeviceKind::kMig:
      return "mig";
    case DeviceKind::kHamiCount:
      return "hcunum";
    case DeviceKind::kHamiCores:
      return "hcucores";
  }
  return "card";
}

int64_t RoundGiB(uint64_t bytes) {
  // Half away from zero; bytes are never negative, so half up.
  return static_cast<int64_t>(bytes / kGiB + ((bytes % kGiB) >= kGiB / 2 ? 1 : 0));
}

std::string ResourcePrefix(const Card& card, NamingPolicy policy) {
  std::string model(CutAtComma(card.model));
  switch (policy) {
    case NamingPolicy::kDefault:
      return "hcu";
    case NamingPolicy::kModel:
      return model;
    case NamingPolicy::kModelMemoryCu: {
      std::replace(model.begin(), model.end(), '_', '-');
      return model + "_" + std::to_string(RoundGiB(card.memory_bytes)) + "G_" +
             std::to_string(card.compute_units) + "CU";
    }
  }
  return "hcu";
}

std::string VhcuProfileKey(int compute_units, uint64_t memory_bytes) {
  return "share-" + std::to_string(compute_units) + "c-" + std::to_string(RoundGiB(memory_bytes)) +
         "g";
}

std::string MigProfileKey(std::string_view profile) {
  constexpr std::string_view kMigPrefix = "MIG ";
  if (profile.substr(0, kMigPrefix.size()) == kMigPrefix) profile.remove_prefix(kMigPrefix.size());
  std::string key = "mig-" + std::string(profile);
  std::replace(key.begin(), key.end(), '.', '-');
  return key;
}

std::string HamiCountName(const NodeInventory& inventory, NamingPolicy policy) {
  // The vendor names HAMi resources after card 0 only. With no card there is
  // no model to name them after; the policy-0 name is the only sensible one.
  const Card* first = inventory.FindCard(0);
  if (first == nullptr && !inventory.cards.empty()) first = &inventory.cards.front();
  if (policy == NamingPolicy::kDefault || first == nullptr) return std::string(kHamiCount);
  return ResourcePrefix(*first, policy) + "_" + std::string(kHamiCount);
}

std::string HamiDerivedName(const std::string& count_name, std::string_view what) {
  size_t at = count_name.rfind(kHamiCount);
  if (at == std::string::npos) return count_name;
  std::string out = count_name;
  out.replace(at, kHamiCount.size(), what);
  return out;
}

}  // namespace hcudp
