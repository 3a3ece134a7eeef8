// Which cards a container's HAMi request becomes, and the vHCU size (§5.4).
#include "hcudp/hami/size_rule.h"

#include <algorithm>

#include "hami/text_util.h"

namespace hcudp::hami {

int VhcuComputeUnits(int cores_percent, int card_compute_units) {
  int64_t product =
      static_cast<int64_t>(std::max(0, cores_percent)) * std::max(0, card_compute_units);
  int64_t cus = (product + 99) / 100;
  return static_cast<int>(std::max<int64_t>(1, cus));
}

namespace {

StatusOr<const Card*> FindCardByUuid(std::string_view uuid, const NodeInventory& inventory) {
  if (uuid.substr(0, kCardIdPrefix.size()) != kCardIdPrefix ||
      uuid.size() == kCardIdPrefix.size()) {
    return InvalidArgumentError("device UUID " + internal::Quote(uuid) + " is not HCU-<serial>");
  }
  std::string_view serial = uuid.substr(kCardIdPrefix.size());
  const Card* found = nullptr;
  for (const Card& card : inventory.cards) {
    if (card.serial != serial) continue;
    if (found != nullptr) {
      return FailedPreconditionError("cards " + std::to_string(found->index) + " and " +
                                     std::to_string(card.index) + " share serial " +
                                     std::string(serial));
    }
    found = &card;
  }
  if (found == nullptr) {
    return NotFoundError("no card with serial " + std::string(serial) + " on this node (UUID " +
                         std::string(uuid) + ")");
  }
  return found;
}

}  // namespace

StatusOr<std::vector<DevicePlan>> PlanContainerDevices(const ContainerDevices& request,
                                                       const NodeInventory& inventory) {
  if (request.empty()) return InvalidArgumentError("device request not found: no devices");
  std::vector<DevicePlan> plans;
  for (const ContainerDevice& device : request) {
    HCUDP_ASSIGN_OR_RETURN(const Card* card, FindCardByUuid(device.uuid, inventory));
    for (const DevicePlan& earlier : plans) {
      if (earlier.card == card->index) {
        return InvalidArgumentError("card " + std::to_string(card->index) + " (" + device.uuid +
                                    ") is requested twice");
      }
    }
    DevicePlan plan;
    plan.card = card->index;
    plan.card_bdf = card->bdf;
    plans.push_back(plan);
  }
  const ContainerDevice& only = request.front();
  DevicePlan& first = plans.front();
  const Card* card = inventory.FindCard(first.card);
  if (request.size() == 1 && only.used_mem_mib >= 0 &&
      static_cast<uint64_t>(only.used_mem_mib) < card->memory_mib()) {
    first.create_vhcu = true;
    first.vhcu_compute_units = VhcuComputeUnits(only.used_cores_percent, card->compute_units);
    first.vhcu_memory_mib = static_cast<uint64_t>(only.used_mem_mib);
  }
  return plans;
}

}  // namespace hcudp::hami
