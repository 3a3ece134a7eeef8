// The pool plan: which devices a node offers, with what attributes, in which
// slice (DESIGN.md §9; field names as resource.k8s.io/v1, dra.md §3.2).
#include <algorithm>
#include <map>
#include <numeric>
#include <string>
#include <vector>

#include "dra/slice_names.h"
#include "dra/slice_writer.h"
#include "hcudp/dra/slices.h"

namespace hcudp::dra {
namespace {

using Writer = internal::SliceWriter;
using internal::WriteString;

// The API's limit on a string attribute's value, in bytes.
constexpr size_t kMaxAttributeString = 64;

// The driver's strings (the model is up to 255 bytes) are cut to the limit,
// at a UTF-8 character boundary: one too long makes the API server refuse
// the whole slice.
void Str(Writer& w, std::string_view key, std::string_view value) {
  if (value.size() > kMaxAttributeString) {
    size_t cut = kMaxAttributeString;
    while (cut > 0 && (static_cast<unsigned char>(value[cut]) & 0xC0) == 0x80) --cut;
    value = value.substr(0, cut);
  }
  w.Key(key.data(), static_cast<rapidjson::SizeType>(key.size()));
  w.StartObject();
  w.Key("string");
  w.String(value.data(), static_cast<rapidjson::SizeType>(value.size()));
  w.EndObject();
}

void Int(Writer& w, std::string_view key, int64_t value) {
  w.Key(key.data(), static_cast<rapidjson::SizeType>(key.size()));
  w.StartObject();
  w.Key("int");
  w.Int64(value);
  w.EndObject();
}

void Version(Writer& w, std::string_view key, std::string_view value) {
  w.Key(key.data(), static_cast<rapidjson::SizeType>(key.size()));
  w.StartObject();
  w.Key("version");
  w.String(value.data(), static_cast<rapidjson::SizeType>(value.size()));
  w.EndObject();
}

// A capacity with a fixed total and no request policy (exclusive devices).
void FixedCapacity(Writer& w, const char* key, const std::string& value) {
  w.Key(key);
  w.StartObject();
  w.Key("value");
  WriteString(w, value);
  w.EndObject();
}

// A consumable capacity: a default and a valid range (min, max = total, step).
void RangeCapacity(Writer& w, const char* key, const std::string& total, const std::string& def,
                   const std::string& min, const std::string& step) {
  w.Key(key);
  w.StartObject();
  w.Key("value");
  WriteString(w, total);
  w.Key("requestPolicy");
  w.StartObject();
  w.Key("default");
  WriteString(w, def);
  w.Key("validRange");
  w.StartObject();
  w.Key("min");
  WriteString(w, min);
  w.Key("max");
  WriteString(w, total);
  w.Key("step");
  WriteString(w, step);
  w.EndObject();
  w.EndObject();
  w.EndObject();
}

// What every device of a card shares: the card's place on the node.
void CardPlacement(Writer& w, const Card& card, int island, const std::string& driver_version) {
  if (card.numa_node != kNoNumaNode) Int(w, "resource.kubernetes.io/numaNode", card.numa_node);
  // For matchAttribute across drivers (an HCU and a NIC on one root complex).
  if (!card.pcie_root.empty()) Str(w, "resource.kubernetes.io/pcieRoot", card.pcie_root);
  Int(w, "cardIndex", card.index);
  Int(w, "hslIsland", island);
  Str(w, "productName", card.model);
  Str(w, "architecture", "");
  Str(w, "brand", "Hygon");
  if (!driver_version.empty()) {
    if (IsSemver(driver_version)) {
      Version(w, "driverVersion", driver_version);
    } else {
      Str(w, "driverVersionString", driver_version);
    }
  }
}

void Taints(Writer& w, bool tainted) {
  if (!tainted) return;
  w.Key("taints");
  w.StartArray();
  w.StartObject();
  w.Key("key");
  WriteString(w, kUnhealthyTaintKey);
  w.Key("value");
  w.String("Unhealthy");
  w.Key("effect");
  w.String("NoSchedule");
  w.EndObject();
  w.EndArray();
}

std::string CardJson(const PoolDevice& d, const Card& card, int island, const NodeInventory& inv,
                     const SliceParams& p) {
  rapidjson::StringBuffer b;
  Writer w(b);
  w.StartObject();
  w.Key("name");
  WriteString(w, d.name);
  w.Key("attributes");
  w.StartObject();
  Str(w, "type", "hcu");
  Str(w, "uuid", card.serial);
  Str(w, "resource.kubernetes.io/pciBusID", card.bdf);
  CardPlacement(w, card, island, inv.driver_version);
  Int(w, "computeUnits", card.compute_units);
  Int(w, "memoryMiB", static_cast<int64_t>(card.memory_mib()));
  w.EndObject();
  w.Key("capacity");
  w.StartObject();
  RangeCapacity(w, "cores", DecimalQuantity(card.compute_units),
                DecimalQuantity(card.compute_units), "0", "1");
  // Whole MiB, so that the default and the maximum lie on the 1Mi step.
  const std::string memory = BinaryQuantity(card.memory_bytes / kMiB * kMiB);
  RangeCapacity(w, "memory", memory, memory, "0", "1Mi");
  RangeCapacity(w, "slices", DecimalQuantity(p.max_vhcus_per_card), "1", "1", "1");
  w.EndObject();
  w.Key("allowMultipleAllocations");
  w.Bool(true);
  Taints(w, d.tainted);
  w.EndObject();
  return std::string(b.GetString(), b.GetSize());
}

// A pre-split vHCU or a MIG instance: exclusive, naming its parent.
std::string ChildJson(const PoolDevice& d, const Card& parent, int island, const NodeInventory& inv,
                      int compute_units, uint64_t memory_mib, const std::string& uuid,
                      const std::string& profile) {
  rapidjson::StringBuffer b;
  Writer w(b);
  w.StartObject();
  w.Key("name");
  WriteString(w, d.name);
  w.Key("attributes");
  w.StartObject();
  Str(w, "type", PoolDeviceTypeName(d.type));
  if (!uuid.empty()) Str(w, "uuid", uuid);
  Str(w, "parentPciBusID", parent.bdf);
  Str(w, "parentDevice", CardDeviceName(parent.bdf));
  CardPlacement(w, parent, island, inv.driver_version);
  Int(w, "computeUnits", compute_units);
  Int(w, "memoryMiB", static_cast<int64_t>(memory_mib));
  if (d.type == PoolDeviceType::kVhcu) Int(w, "vdevIndex", d.vhcu_id);
  if (!profile.empty()) Str(w, "migProfile", profile);
  w.EndObject();
  w.Key("capacity");
  w.StartObject();
  FixedCapacity(w, "cores", DecimalQuantity(static_cast<uint64_t>(compute_units)));
  FixedCapacity(w, "memory", BinaryQuantity(memory_mib * kMiB));
  w.EndObject();
  Taints(w, d.tainted);
  w.EndObject();
  return std::string(b.GetString(), b.GetSize());
}

// Greedy split in publication order: a slice takes devices while it stays
// within 128, or 64 once it holds a tainted device.
int AssignSlices(std::vector<PoolDevice>& devices) {
  int slice = 0;
  int count = 0;
  bool tainted = false;
  for (PoolDevice& d : devices) {
    bool would_taint = tainted || d.tainted;
    int limit = would_taint ? kMaxDevicesPerSliceWithTaints : kMaxDevicesPerSlice;
    if (count + 1 > limit) {
      ++slice;
      count = 0;
      would_taint = d.tainted;
    }
    d.slice = slice;
    ++count;
    tainted = would_taint;
  }
  return slice + 1;
}

}  // namespace

std::string_view PoolDeviceTypeName(PoolDeviceType type) {
  switch (type) {
    case PoolDeviceType::kCard:
      return "hcu";
    case PoolDeviceType::kVhcu:
      return "vhcu";
    case PoolDeviceType::kMig:
      return "mig";
  }
  return "hcu";
}

std::string CardDeviceName(std::string_view bdf) {
  std::string name = "hcu-";
  for (char c : bdf) name.push_back(c == ':' || c == '.' ? '-' : c);
  return name;
}

std::string VhcuDeviceName(std::string_view card_bdf, int vhcu_id) {
  return CardDeviceName(card_bdf) + "-vdev" + std::to_string(vhcu_id);
}

std::string MigDeviceName(std::string_view card_bdf, int gpu_instance, int compute_instance) {
  return CardDeviceName(card_bdf) + "-mig-" + std::to_string(gpu_instance) + "-" +
         std::to_string(compute_instance);
}

StatusOr<PoolPlan> BuildPoolPlan(const SliceOffer& offer, const SliceParams& p) {
  const NodeInventory& inv = offer.inventory;
  HCUDP_RETURN_IF_ERROR(CheckDnsSubdomain(p.node_name, "node name"));
  HCUDP_RETURN_IF_ERROR(CheckDnsSubdomain(p.driver_name, "driver name", 63));
  if (p.max_vhcus_per_card < 1) {
    return InvalidArgumentError("max vHCUs per card " + std::to_string(p.max_vhcus_per_card) +
                                " is below 1");
  }
  PoolPlan plan;
  plan.pool_name = p.node_name;
  plan.node_name = p.node_name;
  plan.node_uid = p.node_uid;
  plan.driver_name = p.driver_name;
  plan.left_out = offer.left_out;

  std::vector<int> islands = HslIslands(inv);
  std::vector<size_t> order(inv.cards.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return inv.cards[a].bdf < inv.cards[b].bdf; });

  for (size_t ci : order) {
    const Card& card = inv.cards[ci];
    const int island = islands[ci];
    const std::string card_name = CardDeviceName(card.bdf);
    HCUDP_RETURN_IF_ERROR(CheckDnsLabel(card_name, "device name of card " + card.bdf));
    const std::string what = "card " + std::to_string(card.index) + " (" + card.bdf + ")";
    const bool unhealthy = card.health != Health::kHealthy;
    if (unhealthy && !p.taints_supported) {
      plan.left_out.push_back({what + " and its vHCUs/MIG instances",
                               "unhealthy, and the API server drops device taints"});
      continue;
    }
    bool has_children = false;
    // MIG instances of this card.
    for (size_t mi = 0; mi < inv.mig_instances.size(); ++mi) {
      const MigInstance& mig = inv.mig_instances[mi];
      if (mig.card != card.index) continue;
      has_children = true;
      PoolDevice d;
      d.type = PoolDeviceType::kMig;
      d.name = MigDeviceName(card.bdf, mig.gpu_instance, mig.compute_instance);
      d.card = card.index;
      d.card_bdf = card.bdf;
      d.mig_index = static_cast<int>(mi);
      d.tainted = unhealthy;
      HCUDP_RETURN_IF_ERROR(CheckDnsLabel(d.name, "device name of MIG instance"));
      d.json =
          ChildJson(d, card, island, inv, mig.compute_units, mig.memory_mib, mig.uuid, mig.profile);
      plan.devices.push_back(std::move(d));
    }
    // Pre-split vHCUs (unusable on a MIG node, as in device-plugin mode).
    for (const Vhcu& v : inv.vhcus) {
      if (v.card != card.index) continue;
      has_children = true;
      if (inv.mig_enabled) {
        plan.left_out.push_back({"vdev" + std::to_string(v.id), "the node is in MIG mode"});
        continue;
      }
      PoolDevice d;
      d.type = PoolDeviceType::kVhcu;
      d.name = VhcuDeviceName(card.bdf, v.id);
      d.card = card.index;
      d.card_bdf = card.bdf;
      d.vhcu_id = v.id;
      d.tainted = unhealthy;
      d.json = ChildJson(d, card, island, inv, v.compute_units, v.memory_mib, "", "");
      plan.devices.push_back(std::move(d));
    }
    if (has_children) {
      plan.left_out.push_back({what, "carries vHCUs or MIG instances (offered as such)"});
      continue;
    }
    if (offer.not_whole.count(card.bdf) != 0) {
      plan.left_out.push_back({what, "carries vHCUs or MIG instances held or unreadable"});
      continue;
    }
    if (inv.mig_enabled) {
      plan.left_out.push_back({what, "the node is in MIG mode and the card has no instance"});
      continue;
    }
    if (!inv.VhcuStateKnown(card.index)) {
      plan.left_out.push_back({what, "its vHCU state could not be read"});
      continue;
    }
    PoolDevice d;
    d.type = PoolDeviceType::kCard;
    d.name = card_name;
    d.card = card.index;
    d.card_bdf = card.bdf;
    d.tainted = unhealthy;
    d.json = CardJson(d, card, island, inv, p);
    plan.devices.push_back(std::move(d));
  }
  // Children were added before their parent's own entry; publication order
  // is by card BDF then name, stable for diffs.
  std::stable_sort(plan.devices.begin(), plan.devices.end(),
                   [](const PoolDevice& a, const PoolDevice& b) {
                     if (a.card_bdf != b.card_bdf) return a.card_bdf < b.card_bdf;
                     return a.name < b.name;
                   });
  for (const PoolDevice& d : plan.devices) plan.uses_taints = plan.uses_taints || d.tainted;
  plan.slice_count = AssignSlices(plan.devices);
  return plan;
}

std::vector<int> HslIslands(const NodeInventory& inv) {
  const size_t n = inv.cards.size();
  std::vector<size_t> parent(n);
  std::iota(parent.begin(), parent.end(), size_t{0});
  std::map<int, size_t> by_index;
  for (size_t i = 0; i < n; ++i) by_index[inv.cards[i].index] = i;
  auto find = [&](size_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  };
  for (const Link& l : inv.links) {
    if (l.type != LinkType::kHsl && l.type != LinkType::kHyswitch) continue;
    auto a = by_index.find(l.src);
    auto b = by_index.find(l.dst);
    if (a == by_index.end() || b == by_index.end()) continue;
    parent[find(a->second)] = find(b->second);
  }
  // Number islands by their lowest BDF, so the numbers follow PCI order and
  // not the driver's probe order.
  std::map<size_t, std::string> lowest;
  for (size_t i = 0; i < n; ++i) {
    size_t r = find(i);
    auto it = lowest.find(r);
    if (it == lowest.end() || inv.cards[i].bdf < it->second) lowest[r] = inv.cards[i].bdf;
  }
  std::vector<std::pair<std::string, size_t>> roots;
  for (const auto& [r, bdf] : lowest) roots.emplace_back(bdf, r);
  std::sort(roots.begin(), roots.end());
  std::map<size_t, int> number;
  for (size_t k = 0; k < roots.size(); ++k) number[roots[k].second] = static_cast<int>(k);
  std::vector<int> out(n);
  for (size_t i = 0; i < n; ++i) out[i] = number[find(i)];
  return out;
}

}  // namespace hcudp::dra
