// PreparedDeviceHealth: the one verdict on a prepared device (issue 28, item
// 5). The health stream, Recover and the tick all read it, so that an
// unreadable vHCU is Unknown everywhere, never Healthy in one place and
// Unknown in another.
#include <algorithm>
#include <string>

#include "hcudp/dra/agent.h"

namespace hcudp::dra {
namespace {

DeviceHealth PreparedVerdict(const PreparedDevice& d, DeviceHealthStatus health,
                             std::string message) {
  DeviceHealth h;
  h.pool_name = d.pool;
  h.device_name = d.device;
  h.health = health;
  h.message = std::move(message);
  return h;
}

}  // namespace

DeviceHealth PreparedDeviceHealth(const PreparedDevice& d, const NodeInventory& inventory) {
  Lookup<Card> card = inventory.LookupCardByBdf(d.card_bdf);
  switch (card.certainty()) {
    case Certainty::kUnknown:
      return PreparedVerdict(d, DeviceHealthStatus::kUnknown, card.why());
    case Certainty::kAbsent:
      return PreparedVerdict(d, DeviceHealthStatus::kUnhealthy,
                             "card " + d.card_bdf + " is no longer on the node");
    case Certainty::kFound:
      break;
  }
  if (d.kind == PreparedKind::kVhcu || d.kind == PreparedKind::kDynamicVhcu) {
    Lookup<Vhcu> v = inventory.LookupVhcu(d.vhcu_id);
    switch (v.certainty()) {
      case Certainty::kUnknown:
        return PreparedVerdict(d, DeviceHealthStatus::kUnknown, v.why());
      case Certainty::kFound: {
        const Vhcu& now = v.value();
        // The id names another vHCU now (another card; for one we made,
        // another size): ours is gone.
        const bool same =
            now.card_bdf == d.card_bdf &&
            (d.kind != PreparedKind::kDynamicVhcu ||
             (now.compute_units == d.compute_units && now.memory_mib == d.memory_mib));
        if (same) break;
        [[fallthrough]];
      }
      case Certainty::kAbsent:
        return PreparedVerdict(
            d, DeviceHealthStatus::kUnhealthy,
            "vHCU " + std::to_string(d.vhcu_id) + " of " + d.device + " is no longer on the node");
    }
  }
  if (d.kind == PreparedKind::kMig &&
      std::none_of(inventory.mig_instances.begin(), inventory.mig_instances.end(),
                   [&](const MigInstance& m) { return m.uuid == d.mig_uuid; })) {
    return PreparedVerdict(
        d, DeviceHealthStatus::kUnhealthy,
        "MIG instance " + d.mig_uuid + " of " + d.device + " is no longer on the node");
  }
  const Health health = card.value().health;
  if (health != Health::kHealthy) {
    return PreparedVerdict(d, DeviceHealthStatus::kUnhealthy,
                           "card " + d.card_bdf + " is " + std::string(HealthName(health)));
  }
  return PreparedVerdict(d, DeviceHealthStatus::kHealthy, "");
}

}  // namespace hcudp::dra
