// BuildResources: strategy x naming policy -> resources and their devices
// (seed-behaviour.md §2.1, §2.5; DESIGN.md §4.1).
#include <algorithm>
#include <map>

#include "hcudp/naming.h"
#include "naming/natural_order.h"

namespace hcudp {
namespace {

constexpr int kHamiCoresPerCard = 100;

std::string FullName(const std::string& last_name) {
  return std::string(kResourceNamespace) + "/" + last_name;
}

std::string PolicyNumber(NamingPolicy policy) { return std::to_string(static_cast<int>(policy)); }

// The resources of one group (physical, vHCU, MIG), keyed and ordered by
// last name; each card contributes under its own prefix.
class ResourceGroup {
 public:
  explicit ResourceGroup(DeviceKind kind) : kind_(kind) {}

  // Registers `last_name` even if no device is added (a resource with zero
  // devices still tells kubelet the capacity is 0). `model` is for errors.
  Status Declare(const std::string& last_name, const std::string& model, NamingPolicy policy) {
    if (by_name_.count(last_name) != 0) return OkStatus();
    Status valid = ValidateResourceName(FullName(last_name));
    if (!valid.ok()) {
      return InvalidArgumentError("naming policy " + PolicyNumber(policy) + " gives model \"" +
                                  model + "\" an invalid resource name: " + valid.message());
    }
    Resource& r = by_name_[last_name];
    r.name = FullName(last_name);
    r.last_name = last_name;
    r.kind = kind_;
    return OkStatus();
  }

  void Add(const std::string& last_name, ResourceDevice device) {
    by_name_[last_name].devices.push_back(std::move(device));
  }

  void AppendTo(std::vector<Resource>* out) {
    for (auto& [name, resource] : by_name_) out->push_back(std::move(resource));
  }

 private:
  DeviceKind kind_;
  std::map<std::string, Resource> by_name_;
};

ResourceDevice CardDevice(const Card& card, std::string id) {
  ResourceDevice d;
  d.id = std::move(id);
  d.health = card.health;
  d.numa_node = card.numa_node;
  d.card = card.index;
  return d;
}

// Whole cards. `hide_split_cards` (mixed) leaves out cards that carry a vHCU
// or may carry one (their vHCU state could not be read: fail closed); on a
// MIG node no whole card is usable, so the resource has no devices.
Status AddPhysical(const NodeInventory& inv, NamingPolicy policy, bool hide_split_cards,
                   std::vector<Resource>* out) {
  ResourceGroup group(DeviceKind::kCard);
  for (const Card& card : inv.cards) {
    std::string last_name = ResourcePrefix(card, policy);
    HCUDP_RETURN_IF_ERROR(group.Declare(last_name, card.model, policy));
    if (inv.mig_enabled) continue;
    if (hide_split_cards && (inv.VhcuCount(card.index) > 0 || !inv.VhcuStateKnown(card.index))) {
      continue;
    }
    group.Add(last_name, CardDevice(card, card.bdf));
  }
  group.AppendTo(out);
  return OkStatus();
}

// One resource per distinct vHCU profile. vHCUs whose parent card was not
// discovered cannot be named or allocated and are left out. Under MIG mode
// vHCUs are unusable too (a container without a CI conf sees no device).
Status AddVhcuProfiles(const NodeInventory& inv, NamingPolicy policy, std::vector<Resource>* out) {
  ResourceGroup group(DeviceKind::kVhcu);
  for (const Vhcu& vhcu : inv.vhcus) {
    const Card* card = inv.FindCard(vhcu.card);
    if (card == nullptr) continue;
    std::string last_name = ResourcePrefix(*card, policy) + "-" +
                            VhcuProfileKey(vhcu.compute_units, vhcu.memory_bytes());
    HCUDP_RETURN_IF_ERROR(group.Declare(last_name, card->model, policy));
    if (inv.mig_enabled) continue;
    ResourceDevice d = CardDevice(*card, "vdev" + std::to_string(vhcu.id));
    d.vhcu_id = vhcu.id;
    group.Add(last_name, std::move(d));
  }
  group.AppendTo(out);
  return OkStatus();
}

Status AddMigProfiles(const NodeInventory& inv, NamingPolicy policy, std::vector<Resource>* out) {
  ResourceGroup group(DeviceKind::kMig);
  for (size_t i = 0; i < inv.mig_instances.size(); ++i) {
    const MigInstance& mig = inv.mig_instances[i];
    const Card* card = inv.FindCard(mig.card);
    if (card == nullptr) continue;
    std::string last_name = ResourcePrefix(*card, policy) + "-" + MigProfileKey(mig.profile);
    HCUDP_RETURN_IF_ERROR(group.Declare(last_name, card->model, policy));
    ResourceDevice d = CardDevice(*card, mig.device_id());
    d.mig_index = static_cast<int>(i);
    group.Add(last_name, std::move(d));
  }
  group.AppendTo(out);
  return OkStatus();
}

Status AddHami(const NodeInventory& inv, const NamingParams& params, std::vector<Resource>* out) {
  HCUDP_RETURN_IF_ERROR(
      CheckDeviceSplitCount(params.device_split_count).WithContext("device-split-count"));
  std::string count_name = HamiCountName(inv, params.policy);
  std::string model = inv.cards.empty() ? std::string() : inv.cards.front().model;
  ResourceGroup counts(DeviceKind::kHamiCount);
  HCUDP_RETURN_IF_ERROR(counts.Declare(count_name, model, params.policy));
  for (const Card& card : inv.cards) {
    for (int i = 0; i < params.device_split_count; ++i) {
      counts.Add(count_name, CardDevice(card, "HCU-" + card.serial + "-fake-" + std::to_string(i)));
    }
  }
  counts.AppendTo(out);
  if (!params.resource_multiple) return OkStatus();

  std::string cores_name = HamiDerivedName(count_name, "hcucores");
  ResourceGroup cores(DeviceKind::kHamiCores);
  HCUDP_RETURN_IF_ERROR(cores.Declare(cores_name, model, params.policy));
  int total = static_cast<int>(inv.cards.size()) * kHamiCoresPerCard;
  for (int i = 0; i < total; ++i) {
    ResourceDevice d;
    d.id = std::to_string(i);  // Healthy, no NUMA, no card: as the vendor.
    cores.Add(cores_name, std::move(d));
  }
  cores.AppendTo(out);
  return OkStatus();
}

void SortDevices(Resource* r) {
  auto& devices = r->devices;
  if (r->kind == DeviceKind::kCard || r->kind == DeviceKind::kMig) {
    // BDFs and UUIDs are hex: plain byte order is their natural order.
    std::sort(devices.begin(), devices.end(),
              [](const ResourceDevice& a, const ResourceDevice& b) { return a.id < b.id; });
  } else {
    std::sort(devices.begin(), devices.end(), [](const ResourceDevice& a, const ResourceDevice& b) {
      return NaturalLess(a.id, b.id);
    });
  }
}

// Whether the rule keeps `d` listed, marking it not offered where it lists
// it only for its holder.
bool ApplyOffer(const NodeInventory& inv, const NamingParams& params, const OfferPlan& plan,
                DeviceKind kind, ResourceDevice* d) {
  switch (kind) {
    case DeviceKind::kCard: {
      const Card* card = inv.FindCard(d->card);
      if (card == nullptr) return false;
      const DeviceOffer* o = plan.Find(DeviceRef::OfCard(*card));
      if (o == nullptr || o->free) return true;
      // The vendor's hcu strategy lists split cards whole (DESIGN §4.1).
      return params.strategy == Strategy::kHcu && o->reason == NotFree::kCarriesVhcus;
    }
    case DeviceKind::kVhcu: {
      Lookup<Vhcu> v = inv.LookupVhcu(d->vhcu_id);
      // Built from inv.vhcus: found (a gap on it is the rule's to weigh).
      if (v.certainty() != Certainty::kFound) return true;
      const DeviceOffer* o = plan.Find(DeviceRef::OfVhcu(v.value()));
      if (o == nullptr || o->free) return true;
      if (o->reason == NotFree::kMigNode || o->reason == NotFree::kParentUnknown) return false;
      d->offered = false;
      return true;
    }
    case DeviceKind::kMig: {
      if (d->mig_index < 0 || static_cast<size_t>(d->mig_index) >= inv.mig_instances.size()) {
        return true;
      }
      const DeviceOffer* o =
          plan.Find(DeviceRef::OfMig(inv.mig_instances[static_cast<size_t>(d->mig_index)]));
      if (o == nullptr || o->free) return true;
      if (o->reason == NotFree::kParentUnknown) return false;
      d->offered = false;
      return true;
    }
    case DeviceKind::kHamiCount:
    case DeviceKind::kHamiCores:
      return true;
  }
  return true;
}

}  // namespace

StatusOr<std::vector<Resource>> BuildResources(const NodeInventory& inventory,
                                               const NamingParams& params, const OfferPlan& plan) {
  HCUDP_ASSIGN_OR_RETURN(std::vector<Resource> resources, BuildResources(inventory, params));
  for (Resource& r : resources) {
    std::vector<ResourceDevice> kept;
    for (ResourceDevice& d : r.devices) {
      if (ApplyOffer(inventory, params, plan, r.kind, &d)) kept.push_back(std::move(d));
    }
    r.devices = std::move(kept);
  }
  return resources;
}

StatusOr<std::vector<Resource>> BuildResources(const NodeInventory& inventory,
                                               const NamingParams& params) {
  std::vector<Resource> out;
  switch (params.strategy) {
    case Strategy::kHcu:
      HCUDP_RETURN_IF_ERROR(AddPhysical(inventory, params.policy, false, &out));
      break;
    case Strategy::kVhcu:
      HCUDP_RETURN_IF_ERROR(AddVhcuProfiles(inventory, params.policy, &out));
      break;
    case Strategy::kMig:
      HCUDP_RETURN_IF_ERROR(AddMigProfiles(inventory, params.policy, &out));
      break;
    case Strategy::kMixed:
      HCUDP_RETURN_IF_ERROR(AddPhysical(inventory, params.policy, true, &out));
      HCUDP_RETURN_IF_ERROR(AddVhcuProfiles(inventory, params.policy, &out));
      break;
    case Strategy::kHami:
      HCUDP_RETURN_IF_ERROR(AddHami(inventory, params, &out));
      break;
    case Strategy::kDra:  // devices are offered as ResourceSlices, not resources
      break;
  }
  for (Resource& r : out) SortDevices(&r);
  return out;
}

Status CheckDeviceSplitCount(int64_t count) {
  if (count < 1) return InvalidArgumentError(std::to_string(count) + " must be at least 1");
  if (count > kMaxDeviceSplitCount) {
    return InvalidArgumentError(
        std::to_string(count) + " is above " + std::to_string(kMaxDeviceSplitCount) +
        ": every card lists that many hcunum devices in one ListAndWatch message, and kubelet "
        "refuses messages over 4 MiB (" +
        std::to_string(kMaxDeviceSplitCount) +
        " a card keeps 64 cards under it; a card holds at most one vHCU per compute unit)");
  }
  return OkStatus();
}

}  // namespace hcudp
