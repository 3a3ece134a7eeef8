#include <sys/stat.h>

#include <algorithm>
#include <map>
#include <set>

#include "hcudp/allocation.h"
#include "hcudp/backend.h"
#include "hcudp/cdi.h"
#include "hcudp_internal/file_util.h"
#include "hcudp_internal/host_fs.h"

namespace hcudp {
namespace {

std::string VhcuConfPath(const Vhcu& vhcu) {
  if (!vhcu.conf_path.empty()) return vhcu.conf_path;
  return internal::host_path::VdevConf(vhcu.id);
}

Status AddCardDri(const NodeInventory& inventory, int card_index, ContainerAllocation& out) {
  const Card* card = inventory.FindCard(card_index);
  if (card == nullptr) {
    return FailedPreconditionError("card " + std::to_string(card_index) + " is not on the node");
  }
  if (card->dri_nodes.empty()) {
    std::string why = card->dri_error.empty() ? "" : " (" + card->dri_error + ")";
    return FailedPreconditionError("card " + card->bdf + " has no DRI device nodes" + why);
  }
  for (const auto& node : card->dri_nodes) out.devices.push_back({node, node, "rw"});
  return OkStatus();
}

const ResourceDevice* FindDevice(const Resource& resource, const std::string& id) {
  for (const auto& d : resource.devices) {
    if (d.id == id) return &d;
  }
  return nullptr;
}

}  // namespace

Status ValidateVhcuConfFile(const std::string& host_root, const std::string& path) {
  const std::string full = internal::HostFs(host_root).Path(path);
  struct stat st {};
  if (::stat(full.c_str(), &st) != 0) {
    return FailedPreconditionError("vHCU conf " + path + " does not exist");
  }
  if (!S_ISREG(st.st_mode)) {
    return FailedPreconditionError("vHCU conf " + path + " is not a regular file");
  }
  if (st.st_size == 0) return FailedPreconditionError("vHCU conf " + path + " is empty");
  StatusOr<std::string> read = file_util::ReadFile(full);
  if (!read.ok()) {
    return FailedPreconditionError("vHCU conf " + path +
                                   " cannot be read: " + read.status().message());
  }
  const std::string& content = *read;
  if (content.find('\0') != std::string::npos) {
    return FailedPreconditionError("vHCU conf " + path + " is not text (contains NUL)");
  }
  if (content.find_first_not_of(" \t\r\n\v\f") == std::string::npos) {
    return FailedPreconditionError("vHCU conf " + path + " has only blanks");
  }
  return OkStatus();
}

AllocationBuilder::AllocationBuilder(AllocationBuilderOptions options)
    : options_(std::move(options)) {}

ContainerAllocation AllocationBuilder::CommonEdits(const NodeInventory& inventory) const {
  ContainerAllocation out;
  const std::string kfd(internal::host_path::kDevKfd);
  const std::string mkfd(internal::host_path::kDevMkfd);
  if (inventory.has_kfd) out.devices.push_back({kfd, kfd, "rw"});
  if (inventory.has_mkfd) out.devices.push_back({mkfd, mkfd, "rw"});
  out.mounts.push_back({options_.hyhal_path, std::string(kHyhalContainerPath), true});
  out.envs.emplace_back(kVisibleDevicesEnv, kVisibleDevicesVoid);
  return out;
}

int AllocationBuilder::DeviceCard(const NodeInventory& inventory, const Resource& resource,
                                  const ResourceDevice& device) const {
  switch (resource.kind) {
    case DeviceKind::kCard:
      return device.card;
    case DeviceKind::kVhcu: {
      // Absent or unknown: no card, so no card-specific CDI extras (the
      // device edits themselves refuse such a vHCU).
      Lookup<Vhcu> vhcu = inventory.LookupVhcu(device.vhcu_id);
      return vhcu.certainty() == Certainty::kFound ? vhcu.value().card : -1;
    }
    case DeviceKind::kMig:
      if (device.mig_index < 0 ||
          static_cast<size_t>(device.mig_index) >= inventory.mig_instances.size()) {
        return -1;
      }
      return inventory.mig_instances[static_cast<size_t>(device.mig_index)].card;
    case DeviceKind::kHamiCount:
    case DeviceKind::kHamiCores:
      return -1;
  }
  return -1;
}

StatusOr<ContainerAllocation> AllocationBuilder::DeviceEdits(const NodeInventory& inventory,
                                                             const Resource& resource,
                                                             const ResourceDevice& device) const {
  ContainerAllocation out;
  switch (resource.kind) {
    case DeviceKind::kCard:
      HCUDP_RETURN_IF_ERROR(AddCardDri(inventory, device.card, out));
      break;
    case DeviceKind::kVhcu: {
      Lookup<Vhcu> found = inventory.LookupVhcu(device.vhcu_id);
      switch (found.certainty()) {
        case Certainty::kFound:
          break;
        case Certainty::kAbsent:
          return FailedPreconditionError("vHCU " + device.id + " is no longer on the node");
        case Certainty::kUnknown:
          return UnavailableError("vHCU " + device.id + ": " + found.why() +
                                  " (try again once it reads)");
      }
      const Vhcu* vhcu = &found.value();
      HCUDP_RETURN_IF_ERROR(AddCardDri(inventory, vhcu->card, out));
      const std::string conf = VhcuConfPath(*vhcu);
      HCUDP_RETURN_IF_ERROR(ValidateVhcuConfFile(options_.host_root, conf));
      out.mounts.push_back(
          {conf, "/etc/vdev/docker/vdev" + std::to_string(vhcu->id) + ".conf", true});
      break;
    }
    case DeviceKind::kMig: {
      if (device.mig_index < 0 ||
          static_cast<size_t>(device.mig_index) >= inventory.mig_instances.size()) {
        return FailedPreconditionError("MIG instance " + device.id + " is no longer on the node");
      }
      const MigInstance& mig = inventory.mig_instances[static_cast<size_t>(device.mig_index)];
      HCUDP_RETURN_IF_ERROR(AddCardDri(inventory, mig.card, out));
      struct stat st {};
      const std::string full = internal::HostFs(options_.host_root).Path(mig.conf_path);
      if (mig.conf_path.empty() || ::stat(full.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
        return FailedPreconditionError("MIG conf " + mig.conf_path + " of " + device.id +
                                       " is missing or not a regular file");
      }
      out.mounts.push_back({mig.conf_path, mig.conf_path, true});
      break;
    }
    case DeviceKind::kHamiCount:
    case DeviceKind::kHamiCores:
      return InvalidArgumentError("resource " + resource.name +
                                  " is a HAMi resource; HAMi allocation is not supported here");
  }
  out.cdi_devices.push_back(CdiQualifiedName(device.id));
  return out;
}

StatusOr<ContainerAllocation> AllocationBuilder::Build(
    const NodeInventory& inventory, const Resource& resource,
    const std::vector<std::string>& device_ids) const {
  if (device_ids.empty()) return InvalidArgumentError("no device IDs requested");
  std::set<std::string> ids(device_ids.begin(), device_ids.end());
  std::vector<const ResourceDevice*> devices;
  std::vector<std::string> unknown;
  for (const auto& id : ids) {
    const ResourceDevice* d = FindDevice(resource, id);
    if (d == nullptr) {
      unknown.push_back(id.empty() ? "\"\"" : id);
    } else {
      devices.push_back(d);
    }
  }
  if (!unknown.empty()) {
    // Name a few, each cut short: the error goes back in a gRPC header, and
    // a request with thousands of IDs (or one huge one) must not come back
    // whole.
    constexpr size_t kNamed = 8;
    constexpr size_t kIdBytes = 64;
    std::string list;
    for (size_t i = 0; i < unknown.size() && i < kNamed; ++i) {
      std::string id = unknown[i];
      if (id.size() > kIdBytes) {
        id = id.substr(0, kIdBytes) + "...(" + std::to_string(id.size()) + " bytes)";
      }
      list += (list.empty() ? "" : ", ") + id;
    }
    if (unknown.size() > kNamed)
      list += " and " + std::to_string(unknown.size() - kNamed) + " more";
    return InvalidArgumentError("unknown device IDs for " + resource.name + ": " + list);
  }
  if (devices.size() > 1 && resource.kind == DeviceKind::kVhcu) {
    return InvalidArgumentError("one vHCU per container: " + std::to_string(devices.size()) +
                                " requested of " + resource.name +
                                " (the runtime honours only one vHCU conf)");
  }
  if (devices.size() > 1 && resource.kind == DeviceKind::kMig) {
    return InvalidArgumentError("one MIG instance per container: " +
                                std::to_string(devices.size()) + " requested of " + resource.name);
  }

  ContainerAllocation out = CommonEdits(inventory);
  // DRI nodes in card order, each once; mounts in device-ID order.
  std::map<int, std::vector<DeviceNode>> dri_by_card;
  for (const ResourceDevice* d : devices) {
    HCUDP_ASSIGN_OR_RETURN(ContainerAllocation edits, DeviceEdits(inventory, resource, *d));
    auto& slot = dri_by_card[d->card];
    for (auto& node : edits.devices) {
      if (std::find(slot.begin(), slot.end(), node) == slot.end()) slot.push_back(node);
    }
    for (auto& m : edits.mounts) out.mounts.push_back(std::move(m));
    for (auto& c : edits.cdi_devices) out.cdi_devices.push_back(std::move(c));
  }
  for (auto& [card, nodes] : dri_by_card) {
    for (auto& n : nodes) out.devices.push_back(std::move(n));
  }
  return out;
}

}  // namespace hcudp
