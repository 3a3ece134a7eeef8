#include "watch/inventory_diff.h"

namespace hcudp::watch {
namespace {

bool SameDevices(const Resource& a, const Resource& b) {
  if (a.devices.size() != b.devices.size()) return false;
  for (size_t i = 0; i < a.devices.size(); ++i) {
    const auto& x = a.devices[i];
    const auto& y = b.devices[i];
    if (x.id != y.id || x.health != y.health || x.numa_node != y.numa_node || x.card != y.card ||
        x.vhcu_id != y.vhcu_id || x.mig_index != y.mig_index) {
      return false;
    }
  }
  return true;
}

}  // namespace

bool AllocationInputsDiffer(const NodeInventory& a, const NodeInventory& b) {
  if (a.has_kfd != b.has_kfd || a.has_mkfd != b.has_mkfd || a.cards.size() != b.cards.size() ||
      a.vhcus.size() != b.vhcus.size() || a.mig_instances.size() != b.mig_instances.size()) {
    return true;
  }
  for (size_t i = 0; i < a.cards.size(); ++i) {
    if (a.cards[i].index != b.cards[i].index || a.cards[i].dri_nodes != b.cards[i].dri_nodes) {
      return true;
    }
  }
  for (size_t i = 0; i < a.vhcus.size(); ++i) {
    if (a.vhcus[i].conf_path != b.vhcus[i].conf_path) return true;
  }
  for (size_t i = 0; i < a.mig_instances.size(); ++i) {
    if (a.mig_instances[i].conf_path != b.mig_instances[i].conf_path) return true;
  }
  return false;
}

bool DraInventoryDiffers(const NodeInventory& a, const NodeInventory& b) {
  if (a.cards.size() != b.cards.size() || a.vhcus.size() != b.vhcus.size() ||
      a.mig_instances.size() != b.mig_instances.size() || a.mig_enabled != b.mig_enabled ||
      a.driver_version != b.driver_version || CertaintyDiffers(a, b)) {
    return true;
  }
  for (size_t i = 0; i < a.cards.size(); ++i) {
    const Card& x = a.cards[i];
    const Card& y = b.cards[i];
    if (x.index != y.index || x.bdf != y.bdf || x.health != y.health ||
        x.numa_node != y.numa_node || x.compute_units != y.compute_units ||
        x.memory_bytes != y.memory_bytes || x.model != y.model || x.serial != y.serial) {
      return true;
    }
  }
  for (size_t i = 0; i < a.vhcus.size(); ++i) {
    const Vhcu& x = a.vhcus[i];
    const Vhcu& y = b.vhcus[i];
    if (x.id != y.id || x.card != y.card || x.compute_units != y.compute_units ||
        x.memory_mib != y.memory_mib) {
      return true;
    }
  }
  for (size_t i = 0; i < a.mig_instances.size(); ++i) {
    const MigInstance& x = a.mig_instances[i];
    const MigInstance& y = b.mig_instances[i];
    if (x.card != y.card || x.gpu_instance != y.gpu_instance ||
        x.compute_instance != y.compute_instance || x.profile != y.profile) {
      return true;
    }
  }
  return false;
}

bool ResourcesDiffer(const std::vector<Resource>& a, const std::vector<Resource>& b) {
  if (a.size() != b.size()) return true;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].name != b[i].name || !SameDevices(a[i], b[i])) return true;
  }
  return false;
}

bool CertaintyDiffers(const NodeInventory& a, const NodeInventory& b) {
  if (a.unknown_cards.size() != b.unknown_cards.size() ||
      a.vhcu_gaps.size() != b.vhcu_gaps.size()) {
    return true;
  }
  for (size_t i = 0; i < a.unknown_cards.size(); ++i) {
    const UnknownCard& x = a.unknown_cards[i];
    const UnknownCard& y = b.unknown_cards[i];
    if (x.last_known.index != y.last_known.index || x.last_known.bdf != y.last_known.bdf ||
        x.reason != y.reason) {
      return true;
    }
  }
  for (size_t i = 0; i < a.vhcu_gaps.size(); ++i) {
    if (a.vhcu_gaps[i].path != b.vhcu_gaps[i].path || a.vhcu_gaps[i].card != b.vhcu_gaps[i].card) {
      return true;
    }
  }
  return false;
}

}  // namespace hcudp::watch
