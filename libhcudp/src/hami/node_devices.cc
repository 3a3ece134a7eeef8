// hami.io/node-hcu-register and hygon.com/node-hcu-register (§5.2).
#include "hcudp/hami/node_devices.h"

#include <algorithm>
#include <map>

#include "hami/text_util.h"

namespace hcudp::hami {
namespace {

using internal::ContainsAny;
using internal::ParseInt;
using internal::Quote;
using internal::Split;

constexpr std::string_view kSeparators = ",:;";
using internal::kInt32Max;
constexpr int64_t kInt32Min = -kInt32Max - 1;
constexpr int64_t kUint32Max = 4294967295;

Status CheckTextField(std::string_view name, std::string_view value) {
  if (value.empty()) return InvalidArgumentError(std::string(name) + " is empty");
  if (ContainsAny(value, kSeparators)) {
    return InvalidArgumentError(std::string(name) + " " + Quote(value) +
                                " contains one of the separators , : ;");
  }
  return OkStatus();
}

Status NodeFieldError(size_t record, std::string_view field, std::string_view value,
                      std::string_view want) {
  return InvalidArgumentError("node device record " + std::to_string(record) + ": field " +
                              std::string(field) + " " + Quote(value) + " is not " +
                              std::string(want));
}

StatusOr<NodeDevice> DecodeNodeRecord(size_t n, std::string_view record) {
  std::vector<std::string_view> f = Split(record, ',');
  if (f.size() != 9 && f.size() != 7) {
    return InvalidArgumentError("node device record " + std::to_string(n) + " " + Quote(record) +
                                " has " + std::to_string(f.size()) +
                                " fields, want 9 (Id,Count,Devmem,Devcore,Type,Numa,Health,"
                                "Index,Mode) or 7");
  }
  NodeDevice d;
  if (f[0].empty() || ContainsAny(f[0], ";"))
    return NodeFieldError(n, "Id", f[0], "a non-empty id without ';'");
  d.id = std::string(f[0]);
  auto count = ParseInt(f[1], kInt32Min, kInt32Max);
  if (!count) return NodeFieldError(n, "Count", f[1], "an int32");
  d.count = static_cast<int32_t>(*count);
  auto devmem = ParseInt(f[2], 0, kInt32Max);
  if (!devmem) return NodeFieldError(n, "Devmem", f[2], "a MiB count >= 0");
  d.devmem_mib = static_cast<int32_t>(*devmem);
  auto devcore = ParseInt(f[3], 0, 100);
  if (!devcore) return NodeFieldError(n, "Devcore", f[3], "a percentage 0..100");
  d.devcore_percent = static_cast<int32_t>(*devcore);
  if (f[4].empty() || ContainsAny(f[4], ";"))
    return NodeFieldError(n, "Type", f[4], "a non-empty type without ';'");
  d.type = std::string(f[4]);
  auto numa = ParseInt(f[5], -1, kUint32Max);
  if (!numa) return NodeFieldError(n, "Numa", f[5], "a NUMA node (-1 or >= 0)");
  d.numa = *numa;
  auto health = text::ParseGoBool(f[6]);
  if (!health) return NodeFieldError(n, "Health", f[6], "a bool (true/false)");
  d.healthy = *health;
  if (f.size() == 7) {
    d.index = 0;
    d.mode = std::string(kNodeDeviceModeSevenField);
    return d;
  }
  auto index = ParseInt(f[7], 0, kInt32Max);
  if (!index) return NodeFieldError(n, "Index", f[7], "a card index >= 0");
  d.index = static_cast<int>(*index);
  if (f[8].empty() || ContainsAny(f[8], ";"))
    return NodeFieldError(n, "Mode", f[8], "a non-empty mode without ';'");
  d.mode = std::string(f[8]);
  return d;
}

}  // namespace

bool NodeDevice::operator==(const NodeDevice& o) const {
  return id == o.id && count == o.count && devmem_mib == o.devmem_mib &&
         devcore_percent == o.devcore_percent && type == o.type && numa == o.numa &&
         healthy == o.healthy && index == o.index && mode == o.mode;
}

StatusOr<std::string> EncodeNodeDevices(const std::vector<NodeDevice>& devices) {
  std::string out;
  for (size_t i = 0; i < devices.size(); ++i) {
    const NodeDevice& d = devices[i];
    for (auto [name, value] : {std::pair<std::string_view, std::string_view>{"Id", d.id},
                               {"Type", d.type},
                               {"Mode", d.mode}}) {
      Status st = CheckTextField(name, value);
      if (!st.ok()) return st.WithContext("node device " + std::to_string(i));
    }
    out += d.id + "," + std::to_string(d.count) + "," + std::to_string(d.devmem_mib) + "," +
           std::to_string(d.devcore_percent) + "," + d.type + "," + std::to_string(d.numa) + "," +
           (d.healthy ? "true" : "false") + "," + std::to_string(d.index) + "," + d.mode + ":";
  }
  return out;
}

StatusOr<std::vector<NodeDevice>> DecodeNodeDevices(std::string_view value) {
  return internal::DecodeColonTerminated<NodeDevice>(value, "node devices", DecodeNodeRecord);
}

namespace {

// Why `card` cannot be registered, or "" when it can.
std::string SkipReason(const Card& card, const std::map<std::string, int>& serial_counts) {
  if (card.memory_mib() == 0) return "no memory";
  if (card.compute_units <= 0) return "no compute units";
  if (card.model.empty()) return "no model name";
  if (card.serial.empty()) return "no serial number";
  if (ContainsAny(card.serial, kSeparators) || ContainsAny(card.model, kSeparators)) {
    return "serial or model contains one of , : ;";
  }
  if (serial_counts.at(card.serial) > 1) return "serial " + card.serial + " is not unique";
  if (card.memory_mib() > static_cast<uint64_t>(kInt32Max)) return "memory beyond int32 MiB";
  return "";
}

int64_t VhcuMemoryMib(const NodeInventory& inventory, int card) {
  int64_t sum = 0;
  for (const Vhcu& v : inventory.vhcus) {
    if (v.card == card) sum += static_cast<int64_t>(v.memory_mib);
  }
  return sum;
}

int VhcuComputeUnitsOn(const NodeInventory& inventory, int card) {
  int sum = 0;
  for (const Vhcu& v : inventory.vhcus) {
    if (v.card == card) sum += v.compute_units;
  }
  return sum;
}

}  // namespace

NodeRegistration BuildNodeRegistration(const NodeInventory& inventory, const OfferPlan& plan,
                                       int split_count) {
  NodeRegistration reg = BuildNodeRegistration(inventory, split_count);
  auto verdict = [&](int index) -> const DeviceOffer* {
    const Card* card = inventory.FindCard(index);
    return card != nullptr ? plan.Find(DeviceRef::OfCard(*card)) : nullptr;
  };
  for (size_t i = 0; i < reg.full.size(); ++i) {
    NodeDevice& full = reg.full[i];
    NodeDevice& remaining = reg.remaining[i];
    const DeviceOffer* offer = verdict(full.index);
    const Card* card = inventory.FindCard(full.index);
    if (offer == nullptr || card == nullptr || !offer->free) {
      // Unknown, or not HAMi's to share: nothing of it is free.
      for (NodeDevice* d : {&full, &remaining}) {
        d->count = 0;
        d->devmem_mib = 0;
        d->devcore_percent = 0;
      }
      continue;
    }
    full.count = std::max(0, full.count - offer->foreign_vhcus);
    full.devmem_mib = static_cast<int32_t>(std::max<int64_t>(
        0,
        static_cast<int64_t>(full.devmem_mib) - static_cast<int64_t>(offer->foreign_memory_mib)));
    const int free_cu = std::max(0, card->compute_units - offer->foreign_compute_units);
    full.devcore_percent =
        static_cast<int32_t>(static_cast<int64_t>(free_cu) * 100 / card->compute_units);
  }
  return reg;
}

NodeRegistration BuildNodeRegistration(const NodeInventory& inventory, int split_count) {
  std::vector<const Card*> cards;
  std::map<std::string, int> serial_counts;
  for (const Card& c : inventory.cards) {
    cards.push_back(&c);
    ++serial_counts[c.serial];
  }
  std::sort(cards.begin(), cards.end(),
            [](const Card* a, const Card* b) { return a->index < b->index; });

  NodeRegistration reg;
  for (const Card* card : cards) {
    std::string reason = SkipReason(*card, serial_counts);
    if (!reason.empty()) {
      reg.skipped.push_back("card " + std::to_string(card->index) + " (" + card->bdf +
                            "): " + reason);
      continue;
    }
    NodeDevice full;
    full.id = std::string(kCardIdPrefix) + card->serial;
    full.count = split_count;
    full.devmem_mib = static_cast<int32_t>(card->memory_mib());
    full.devcore_percent = 100;
    full.type = std::string(kCardIdPrefix) + card->model;
    full.numa = card->numa_node;
    full.healthy = card->health == Health::kHealthy;
    full.index = card->index;
    reg.full.push_back(full);

    NodeDevice remaining = full;
    remaining.count = std::max(0, split_count - inventory.VhcuCount(card->index));
    int64_t free_mib =
        static_cast<int64_t>(card->memory_mib()) - VhcuMemoryMib(inventory, card->index);
    remaining.devmem_mib = static_cast<int32_t>(std::max<int64_t>(0, free_mib));
    int free_cu = std::max(0, card->compute_units - VhcuComputeUnitsOn(inventory, card->index));
    remaining.devcore_percent =
        static_cast<int32_t>(static_cast<int64_t>(free_cu) * 100 / card->compute_units);
    reg.remaining.push_back(remaining);
  }
  return reg;
}

}  // namespace hcudp::hami
