#include "backend/vhcu_scan.h"

#include "backend/node_files.h"
#include "hcudp/backend.h"
#include "hcudp/vdev_conf.h"
#include "hcudp_internal/file_util.h"
#include "hcudp_internal/log.h"

namespace hcudp {
namespace {

// The driver's view of vHCU `id` against its conf. The conf is what the
// container runtime reads, so it wins; disagreements are logged. Cards are
// compared by BDF: the conf's device_id is a DMI index and the library's
// parent_card an RSMI index, two index spaces that need not agree.
Status CrossCheck(const std::string& file, const VdevConf& conf, Vhcu* vhcu, VendorLib& vendor) {
  StatusOr<DmiDeviceInfo> info = vendor.VhcuInfo(vhcu->id);
  if (!info.ok()) {
    if (info.status().code() == StatusCode::kNotFound) {
      return NotFoundError(file + ": the driver has no vHCU " + std::to_string(vhcu->id) +
                           " (stale conf): " + info.status().message());
    }
    LOG(WARNING) << file << ": cannot ask the driver about vHCU " << vhcu->id << ": "
                 << info.status().ToString() << "; using the conf alone";
    return OkStatus();
  }
  vhcu->container_id = info->container_id;
  uint64_t driver_mib = info->global_memory_bytes / kMiB;
  // Without a BDF from the library, its RSMI index against the card the
  // conf's BDF resolved to (same index space).
  const bool same_card = !info->parent_bdf.empty() ? info->parent_bdf == conf.pci_bus_id
                                                   : info->parent_card == vhcu->card;
  if (!same_card || info->compute_units != conf.cu_count || driver_mib != conf.mem_mib) {
    LOG(WARNING) << file << ": the driver reports card "
                 << (info->parent_bdf.empty() ? std::to_string(info->parent_card)
                                              : info->parent_bdf)
                 << ", " << info->compute_units << " CU, " << driver_mib
                 << " MiB but the conf says card " << conf.pci_bus_id << ", " << conf.cu_count
                 << " CU, " << conf.mem_mib << " MiB; using the conf";
  }
  return OkStatus();
}

}  // namespace

StatusOr<std::set<int>> ReadVdevConfIds(const internal::HostFs& fs) {
  std::set<int> ids;
  const std::string dir = fs.VdevDir();
  HCUDP_ASSIGN_OR_RETURN(std::vector<std::string> names, node_files::ListDir(dir));
  for (const std::string& name : names) {
    StatusOr<int> id = ParseVdevConfFileName(name);
    // Whatever its type: one that is not a regular file is not read, but
    // is not absent either (ReadVhcu says so).
    if (id.ok()) ids.insert(*id);
  }
  return ids;
}

StatusOr<Vhcu> ReadVhcu(const internal::HostFs& fs, int id, const std::vector<Card>& cards,
                        VendorLib& vendor) {
  const std::string file = fs.VdevConf(id);
  // Only a regular file is read: a FIFO there would block the look. NotFound
  // (gone since the listing) lets the caller skip it; the rest are gaps.
  StatusOr<std::string> read = fs.ReadRegularFile(internal::host_path::VdevConf(id));
  if (!read.ok() && read.status().code() == StatusCode::kFailedPrecondition) {
    return FailedPreconditionError(read.status().message() +
                                   " (a vHCU conf; the vHCU it names is unknown)");
  }
  HCUDP_ASSIGN_OR_RETURN(std::string text, std::move(read));
  StatusOr<VdevConf> conf = ParseVdevConf(text);
  if (!conf.ok()) return conf.status().WithContext(file);
  HCUDP_RETURN_IF_ERROR(CheckVdevConfName(*conf, id).WithContext(file));

  Vhcu vhcu;
  vhcu.id = id;
  vhcu.card = -1;  // set below from the BDF
  vhcu.card_bdf = conf->pci_bus_id;
  vhcu.compute_units = conf->cu_count;
  vhcu.memory_mib = conf->mem_mib;
  vhcu.pipe_id = conf->pipe_id;
  vhcu.cu_mask_lo = conf->cu_mask_lo;
  vhcu.cu_mask_hi = conf->cu_mask_hi;
  vhcu.conf_path = internal::host_path::VdevConf(id);
  // The card is the one at PciBusId. device_id is the card's DMI index,
  // not an index of `cards`: when no card has that BDF (it was not
  // discovered), the parent is unknown (-1), never another card.
  for (const Card& card : cards) {
    if (card.bdf == conf->pci_bus_id) vhcu.card = card.index;
  }
  HCUDP_RETURN_IF_ERROR(CrossCheck(file, *conf, &vhcu, vendor));
  return vhcu;
}

VhcuScan ScanVhcus(const internal::HostFs& fs, const std::vector<Card>& cards,
                   VendorLib& vendor) {
  VhcuScan scan;
  const std::string dir = fs.VdevDir();
  StatusOr<std::set<int>> ids = ReadVdevConfIds(fs);
  if (!ids.ok()) {
    VhcuStateGap gap;
    gap.path = dir;
    gap.reason = ids.status().message();
    if (!node_files::IsDirectory(fs.root())) gap.reason = "the host-root " + fs.root() + " is gone";
    VLOG(1) << "vHCU state unknown: " << gap.path << ": " << gap.reason;
    scan.gaps.push_back(std::move(gap));
    return scan;
  }
  for (int id : *ids) {
    StatusOr<Vhcu> vhcu = ReadVhcu(fs, id, cards, vendor);
    if (vhcu.ok()) {
      scan.vhcus.push_back(std::move(*vhcu));
    } else if (vhcu.status().code() == StatusCode::kNotFound) {
      // Removed since the listing, or a conf the driver does not know.
      LOG(WARNING) << "skipping vHCU " << id << ": " << vhcu.status().message();
    } else {
      VhcuStateGap gap;
      gap.vhcu_id = id;
      gap.kind = UnknownReason::kConfTorn;
      gap.path = fs.VdevConf(id);
      gap.reason = vhcu.status().message();
      VLOG(1) << "vHCU state unknown: " << gap.path << ": " << gap.reason;
      scan.gaps.push_back(std::move(gap));
    }
  }
  return scan;  // std::set iteration: already sorted by id
}

}  // namespace hcudp
