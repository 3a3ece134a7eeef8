#include "sim/sim_vhcu_store.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <set>

#include "hcudp_internal/file_util.h"
#include "hcudp_internal/log.h"
#include "sim/sim_files.h"
#include "sim/sim_layout.h"

namespace hcudp::sim {

StatusOr<VdevConf> VhcuStore::Read(int id) const {
  std::string path = fs_.VdevConf(id);
  StatusOr<std::string> text = file_util::ReadFile(path);
  if (!text.ok()) return NotFoundError("vHCU " + std::to_string(id) + " does not exist");
  StatusOr<VdevConf> conf = ParseVdevConf(*text);
  if (!conf.ok()) return conf.status().WithContext(path);
  HCUDP_RETURN_IF_ERROR(CheckVdevConfName(*conf, id));
  return conf;
}

std::vector<int> VhcuStore::TakenIds() const {
  std::vector<int> ids;
  for (const std::string& name : ListDir(fs_.VdevDir())) {
    StatusOr<int> id = ParseVdevConfFileName(name);
    if (id.ok()) ids.push_back(*id);
  }
  return ids;
}

std::map<int, VdevConf> VhcuStore::ReadAll() const {
  std::map<int, VdevConf> out;
  for (int id : TakenIds()) {
    StatusOr<VdevConf> conf = Read(id);
    if (conf.ok()) {
      out[id] = *conf;
    } else {
      LOG(WARNING) << "sim: ignoring vHCU " << id << ": " << conf.status().ToString();
    }
  }
  return out;
}

DmiRemaining VhcuStore::Remaining(const SimCard& card) const {
  int cus = card.compute_units;
  uint64_t mib = card.memory_mib;
  for (const auto& [id, conf] : ReadAll()) {
    if (conf.pci_bus_id != card.bdf) continue;
    cus -= std::min(cus, conf.cu_count);
    mib -= std::min(mib, conf.mem_mib);
  }
  return {cus, mib * kMiB};
}

StatusOr<int> VhcuStore::Create(const SimNode& node, int card_index, int compute_units,
                                uint64_t memory_mib) {
  const SimCard* card = node.FindCard(card_index);
  if (card == nullptr) {
    return InvalidArgumentError("card " + std::to_string(card_index) + " does not exist");
  }
  if (compute_units < 1 || memory_mib < 1) {
    return InvalidArgumentError("a vHCU needs at least 1 CU and 1 MiB");
  }
  if (node.mig_enabled) {
    return FailedPreconditionError("MIG mode is on: vHCUs cannot be created");
  }
  MutexLock guard(mu_);
  HostRootLock lock(fs_);
  HCUDP_RETURN_IF_ERROR(lock.status());

  std::string on_card = "card " + std::to_string(card_index);
  int count = 0;
  CuMask used;
  std::set<int> pipes;
  for (const auto& [id, conf] : ReadAll()) {
    if (conf.pci_bus_id != card->bdf) continue;
    ++count;
    used = used | CuMask{conf.cu_mask_lo, conf.cu_mask_hi};
    pipes.insert(conf.pipe_id);
  }
  if (count >= node.max_vhcus_per_card) {
    return ResourceExhaustedError(on_card + " already has " + std::to_string(count) +
                                  " vHCUs (the maximum)");
  }
  DmiRemaining left = Remaining(*card);
  if (compute_units > left.compute_units) {
    return ResourceExhaustedError(on_card + " has " + std::to_string(left.compute_units) +
                                  " free CUs, " + std::to_string(compute_units) + " requested");
  }
  if (memory_mib > left.memory_bytes / kMiB) {
    return ResourceExhaustedError(on_card + " has " + std::to_string(left.memory_bytes / kMiB) +
                                  " MiB free memory, " + std::to_string(memory_mib) +
                                  " MiB requested");
  }
  std::optional<CuMask> mask = LowestFreeCus(used, card->compute_units, compute_units);
  if (!mask) return ResourceExhaustedError(on_card + " has too few free CUs for the mask");
  int pipe = 0;
  while (pipes.count(pipe) != 0) ++pipe;
  if (pipe > kMaxPipeId) return ResourceExhaustedError(on_card + " has no free pipe id");
  std::vector<int> taken = TakenIds();
  std::set<int> taken_set(taken.begin(), taken.end());
  int id = 0;
  while (taken_set.count(id) != 0) ++id;

  VdevConf conf;
  conf.pci_bus_id = card->bdf;
  conf.cu_mask_lo = mask->lo;
  conf.cu_mask_hi = mask->hi;
  conf.cu_count = compute_units;
  conf.mem_mib = memory_mib;
  conf.device_id = card_index;
  conf.vdev_id = id;
  conf.pipe_id = pipe;
  conf.enable = 1;
  HCUDP_RETURN_IF_ERROR(WriteFileIfChanged(fs_.VdevConf(id), FormatVdevConf(conf)));
  return id;
}

Status VhcuStore::Destroy(int id) {
  MutexLock guard(mu_);
  HostRootLock lock(fs_);
  HCUDP_RETURN_IF_ERROR(lock.status());
  std::string path = fs_.VdevConf(id);
  if (std::remove(path.c_str()) == 0) return OkStatus();
  if (errno == ENOENT) return NotFoundError("vHCU " + std::to_string(id) + " does not exist");
  return InternalError("cannot remove " + path + ": " + std::strerror(errno));
}

}  // namespace hcudp::sim
