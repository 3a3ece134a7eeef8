// hcuctl devices: cards, vHCUs and MIG instances of the node. A card whose
// state cannot be read is listed as unknown, with why; what cannot be read
// (a torn conf, the MIG mode) is said, never left out.
#include <string>

#include "command.h"
#include "hcudp/device.h"
#include "reports.h"

namespace hcuctl {
namespace {

std::string Join(const std::vector<std::string>& items, std::string_view sep) {
  std::string out;
  for (const std::string& s : items) {
    if (!out.empty()) out += sep;
    out += s;
  }
  return out;
}

std::string NumaText(int numa) { return numa == hcudp::kNoNumaNode ? "-" : std::to_string(numa); }

std::string HexId(uint16_t id) {
  char buf[8];
  snprintf(buf, sizeof buf, "0x%04x", id);
  return buf;
}

}  // namespace

Report DevicesReport(const hcudp::NodeInventory& inv) {
  Report r;
  Value cards = Value::MakeArray();
  Table card_table({"INDEX", "BDF", "MODEL", "CU", "MEMORY", "NUMA", "HEALTH", "DRI"});
  for (const hcudp::Card& c : inv.cards) {
    Value dri = Value::MakeArray();
    for (const std::string& d : c.dri_nodes) dri.Push(d);
    Value card = Value::MakeObject();
    card.Set("index", c.index)
        .Set("bdf", c.bdf)
        .Set("model", c.model)
        .Set("pciDeviceId", HexId(c.pci_device_id))
        .Set("serial", c.serial)
        .Set("computeUnits", c.compute_units)
        .Set("memoryMiB", c.memory_mib())
        .Set("numaNode", c.numa_node)
        .Set("health", hcudp::HealthName(c.health))
        .Set("driNodes", std::move(dri))
        .Set("vhcus", inv.VhcuCount(c.index));
    if (!c.dri_error.empty()) card.Set("driError", c.dri_error);
    cards.Push(std::move(card));
    card_table.AddRow({std::to_string(c.index), c.bdf, c.model, std::to_string(c.compute_units),
                       std::to_string(c.memory_mib()) + " MiB", NumaText(c.numa_node),
                       std::string(hcudp::HealthName(c.health)),
                       c.dri_nodes.empty() ? "none: " + c.dri_error : Join(c.dri_nodes, ",")});
  }

  // Unknown is not absent: a card seen but unreadable, or missed by this
  // look, is listed with its last known identity and why.
  Value unknown_cards = Value::MakeArray();
  for (const hcudp::UnknownCard& u : inv.unknown_cards) {
    const hcudp::Card& c = u.last_known;
    const std::string why =
        std::string(hcudp::UnknownReasonName(u.reason)) + (u.detail.empty() ? "" : ": " + u.detail);
    unknown_cards.Push(Value::MakeObject()
                           .Set("index", c.index)
                           .Set("bdf", c.bdf)
                           .Set("model", c.model)
                           .Set("serial", c.serial)
                           .Set("reason", std::string(hcudp::UnknownReasonName(u.reason)))
                           .Set("detail", u.detail)
                           .Set("missed", u.missed));
    card_table.AddRow({c.index >= 0 ? std::to_string(c.index) : "?", c.bdf.empty() ? "?" : c.bdf,
                       c.model.empty() ? "?" : c.model,
                       c.compute_units > 0 ? std::to_string(c.compute_units) : "?",
                       c.memory_bytes > 0 ? std::to_string(c.memory_mib()) + " MiB" : "?",
                       NumaText(c.numa_node), "Unknown", "unknown: " + why});
    r.notes.push_back("card " + (c.bdf.empty() ? std::to_string(c.index) : c.bdf) +
                      " is unknown (" + why +
                      "): nothing on it is offered or destroyed until "
                      "it reads again");
  }
  for (const hcudp::VhcuStateGap& g : inv.vhcu_gaps) {
    r.notes.push_back("cannot read vHCU state " + g.path + ": " + g.reason +
                      (g.card >= 0 ? " (card " + std::to_string(g.card) + ")" : ""));
  }
  for (const hcudp::MigStateGap& g : inv.mig_gaps) {
    r.notes.push_back("cannot read MIG state " + g.path + ": " + g.reason);
  }

  Value vhcus = Value::MakeArray();
  Table vhcu_table(VhcuHeaders());
  for (const hcudp::Vhcu& v : inv.vhcus) {
    vhcus.Push(VhcuValue(v));
    vhcu_table.AddRow(VhcuRow(v));
  }

  Value migs = Value::MakeArray();
  Table mig_table({"ID", "CARD", "GI", "CI", "PROFILE", "CU", "MEMORY"});
  for (const hcudp::MigInstance& m : inv.mig_instances) {
    migs.Push(Value::MakeObject()
                  .Set("deviceId", m.device_id())
                  .Set("card", m.card)
                  .Set("bdf", m.card_bdf)
                  .Set("gpuInstance", m.gpu_instance)
                  .Set("computeInstance", m.compute_instance)
                  .Set("profile", m.profile)
                  .Set("computeUnits", m.compute_units)
                  .Set("memoryMiB", m.memory_mib)
                  .Set("conf", m.conf_path));
    mig_table.AddRow({m.device_id(), std::to_string(m.card), std::to_string(m.gpu_instance),
                      std::to_string(m.compute_instance), m.profile,
                      std::to_string(m.compute_units), std::to_string(m.memory_mib) + " MiB"});
  }

  r.value = Value::MakeObject();
  r.value.Set("driverVersion", inv.driver_version)
      .Set("kfd", inv.has_kfd)
      .Set("mkfd", inv.has_mkfd)
      .Set("cards", std::move(cards))
      .Set("unknownCards", std::move(unknown_cards))
      .Set("vhcus", std::move(vhcus))
      .Set("mig", Value::MakeObject()
                      .Set("enabled", inv.mig_enabled)
                      .Set("modeKnown", inv.LookupMigMode().certainty() == hcudp::Certainty::kFound)
                      .Set("instances", std::move(migs)));

  r.tables.emplace_back("", std::move(card_table));
  if (!vhcu_table.empty()) r.tables.emplace_back("vHCUs:", std::move(vhcu_table));
  if (inv.mig_enabled || !inv.mig_instances.empty()) {
    r.tables.emplace_back("MIG instances:", std::move(mig_table));
  }
  return r;
}

namespace {

int RunDevices(Context& ctx, const std::vector<std::string>& args) {
  return RunInventoryReport(ctx, kDevicesCommand, args, DevicesReport);
}

}  // namespace

const Command kDevicesCommand = {
    "devices", "cards, vHCUs and MIG instances: BDF, model, CU, memory, NUMA, health",
    "hcuctl [global flags] devices", RunDevices};

}  // namespace hcuctl
