#include "backend/host_backend.h"

#include <algorithm>
#include <cctype>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "backend/dri.h"
#include "backend/mig_scan.h"
#include "backend/node_files.h"
#include "backend/pci_place.h"
#include "backend/vhcu_scan.h"
#include "hcudp/vhcu_lock.h"
#include "hcudp_internal/log.h"
#include "vendor/node_files.h"

namespace hcudp {
namespace {

// The DMI name as the vendor reads it: cut at NUL, bytes > 127 dropped, then
// cut at the first ',' ("K100_AI,xxx" -> "K100_AI").
std::string NormaliseModel(const std::string& raw) {
  std::string model;
  for (char c : raw) {
    if (c == '\0') break;
    if (static_cast<unsigned char>(c) > 127) continue;
    model.push_back(c);
  }
  return model.substr(0, model.find(','));
}

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

}  // namespace

HostBackend::HostBackend(HostBackendOptions options, std::unique_ptr<VendorLib> vendor)
    : options_(std::move(options)),
      vendor_(std::move(vendor)),
      cards_(fs_, options_.clock != nullptr ? *options_.clock : Clock::Real()) {}

HostBackend::~HostBackend() {
  events_.Stop();
  vendor_->Shutdown();
}

Status HostBackend::StartEvents(std::function<void(const BackendEvent&)> on_event) {
  return events_.Start(std::move(on_event));
}

void HostBackend::StopEvents() { events_.Stop(); }

StatusOr<Card> HostBackend::DiscoverCard(int index) {
  Card card;
  card.index = index;
  HCUDP_ASSIGN_OR_RETURN(std::string bdf, vendor_->PciBdf(index));
  card.bdf = Lower(bdf);
  HCUDP_ASSIGN_OR_RETURN(card.serial, vendor_->Serial(index));
  HCUDP_ASSIGN_OR_RETURN(card.pci_device_id, vendor_->PciDeviceId(index));
  HCUDP_ASSIGN_OR_RETURN(card.memory_bytes, vendor_->MemoryTotalBytes(index));
  StatusOr<DmiDeviceInfo> info = vendor_->DeviceInfo(index);
  if (info.ok()) {
    card.model = NormaliseModel(info->name);
    card.compute_units = info->compute_units;
  } else if (info.status().code() == StatusCode::kAborted) {
    // RESET_REQUIRED: the card is there but needs a reset. It stays listed
    // (its health says why) instead of vanishing from the node.
    card.model = vendor::ModelForPciDeviceId(card.pci_device_id);
    LOG(WARNING) << "card " << index << " (" << card.bdf << "): " << info.status().message();
  } else {
    return info.status();
  }
  // Without NUMA the card is still usable; kubelet just gets no topology hint.
  StatusOr<int> numa = vendor_->NumaNode(index);
  if (numa.ok()) {
    card.numa_node = *numa < 0 ? kNoNumaNode : *numa;
  } else {
    LOG(WARNING) << "card " << index << " (" << card.bdf
                 << "): NUMA node unknown: " << numa.status().ToString();
  }
  DriLookup dri = FindDriNodes(fs_, card.bdf);
  card.dri_nodes = std::move(dri.nodes);
  card.dri_error = std::move(dri.error);
  if (!card.dri_error.empty()) LOG(WARNING) << "card " << index << ": " << card.dri_error;
  // Without it the card is still usable: its devices carry no pcieRoot
  // attribute and its CDI edits no sysfs mount.
  PciPlace place = FindPciPlace(fs_, card.bdf);
  card.sysfs_dir = std::move(place.sysfs_dir);
  card.pcie_root = std::move(place.pcie_root);
  if (!place.error.empty()) LOG(WARNING) << "card " << index << ": " << place.error;
  return card;
}

StatusOr<CardLook> HostBackend::DiscoverCards() {
  StatusOr<int> count = vendor_->CardCount();
  if (!count.ok()) return count.status().WithContext("counting cards");
  CardLook look;
  for (int i = 0; i < *count; ++i) {
    StatusOr<Card> card = DiscoverCard(i);
    if (card.ok()) {
      look.cards.push_back(std::move(*card));
      continue;
    }
    // The card is there (the vendor counts it) but unreadable: unknown,
    // never absent. Its BDF, when that query still answers, names it.
    UnknownCard unknown;
    unknown.last_known.index = i;
    StatusOr<std::string> bdf = vendor_->PciBdf(i);
    if (bdf.ok()) unknown.last_known.bdf = Lower(*bdf);
    unknown.reason = UnknownReason::kQueryFailed;
    unknown.path = unknown.last_known.bdf;
    unknown.detail = card.status().ToString();
    LOG(WARNING) << "card " << i << (bdf.ok() ? " (" + unknown.last_known.bdf + ")" : "")
                 << " is unknown: " << unknown.detail;
    look.failed.push_back(std::move(unknown));
  }
  look.driver_bound = DriverBoundBdfs(fs_);
  return look;
}

void HostBackend::ApplyLastHealth(std::vector<Card>* cards) {
  MutexLock lock(health_mutex_);
  if (!have_health_) return;  // no verdict yet: cards stay as discovered
  for (Card& card : *cards) {
    auto it = last_health_.find(card.bdf);
    // As the vendor: a card the health source does not list is unhealthy.
    card.health = it != last_health_.end() ? it->second.health : Health::kUnhealthy;
  }
}

std::vector<Link> HostBackend::DiscoverLinks(const std::vector<Card>& cards) {
  std::vector<Link> links;
  for (const Card& src : cards) {
    for (const Card& dst : cards) {
      if (src.index == dst.index) continue;
      StatusOr<RsmiLink> rsmi = vendor_->LinkBetween(src.index, dst.index);
      if (!rsmi.ok()) {
        LOG(WARNING) << "link " << src.index << "->" << dst.index
                     << " unknown: " << rsmi.status().ToString();
        continue;
      }
      Link link;
      link.src = src.index;
      link.dst = dst.index;
      link.type = rsmi->type;
      link.hops = rsmi->hops;
      link.weight = rsmi->weight;
      link.up_links = rsmi->up_links;
      links.push_back(link);
    }
  }
  return links;
}

StatusOr<NodeInventory> HostBackend::DiscoverAs(CardKeeper::LookKind kind) {
  NodeInventory inv;
  StatusOr<std::string> version = vendor_->DriverVersion();
  if (version.ok()) {
    inv.driver_version = *version;
  } else {
    LOG(WARNING) << "driver version unknown: " << version.status().ToString();
  }
  {
    HCUDP_ASSIGN_OR_RETURN(CardLook look, DiscoverCards());
    inv.unknown_cards = cards_.Merge(look, kind);
    for (UnknownCard& u : inv.unknown_cards) {
      // Never read: its DRI nodes from sysfs, what a running pod's CDI
      // entry still needs.
      if (u.last_known.dri_nodes.empty() && !u.last_known.bdf.empty()) {
        u.last_known.dri_nodes = FindDriNodes(fs_, u.last_known.bdf).nodes;
      }
    }
    inv.cards = std::move(look.cards);
  }
  ApplyLastHealth(&inv.cards);
  inv.links = DiscoverLinks(inv.cards);
  inv.has_kfd = node_files::Exists(fs_.DevKfd());
  inv.has_mkfd = node_files::Exists(fs_.DevMkfd());
  {
    VhcuScan scan = ScanVhcus(fs_, inv.cards, *vendor_);
    inv.vhcus = std::move(scan.vhcus);
    inv.vhcu_gaps = std::move(scan.gaps);
  }
  StatusOr<bool> mig = vendor_->MigEnabled();
  if (!mig.ok()) {
    // Unknown, never "off": whether any card is split is not known.
    LOG(WARNING) << "MIG mode unknown: " << mig.status().ToString();
    inv.mig_gaps.push_back({"MIG mode", mig.status().ToString(), UnknownReason::kMigModeUnknown});
  }
  inv.mig_enabled = mig.ok() && *mig;
  // With the mode unknown, the instances the node records are still read:
  // what they are and who holds them is then known.
  if (inv.mig_enabled || !mig.ok()) {
    inv.mig_instances = ScanMigInstances(fs_, &inv.mig_gaps);
    // A conf's devN is the MIG library's (DMI) index; its `pci` names the
    // card, so the BDF decides which discovered card it is on. Not
    // discovered: on no card (-1), never the card whose index is N.
    for (MigInstance& mig : inv.mig_instances) {
      const Card* card = inv.FindCardByBdf(Lower(mig.card_bdf));
      mig.card = card != nullptr ? card->index : -1;
    }
    // The scan sorted by devN (the driver's probe order); the inventory's
    // order is by the discovered card (device.h).
    std::sort(inv.mig_instances.begin(), inv.mig_instances.end(),
              [](const MigInstance& a, const MigInstance& b) {
                return std::tie(a.card, a.gpu_instance, a.compute_instance) <
                       std::tie(b.card, b.gpu_instance, b.compute_instance);
              });
  }
  return inv;
}

StatusOr<std::vector<CardHealthReport>> HostBackend::QueryHealth() {
  StatusOr<std::vector<CardHealthReport>> reports = vendor_->QueryHealth();
  if (!reports.ok()) return reports;
  MutexLock lock(health_mutex_);
  last_health_.clear();
  for (const CardHealthReport& r : *reports) last_health_[Lower(r.bdf)] = r;
  have_health_ = true;
  return reports;
}

std::vector<Card> HostBackend::CardBdfs() {
  std::vector<Card> cards;
  StatusOr<int> count = vendor_->CardCount();
  for (int i = 0; count.ok() && i < *count; ++i) {
    StatusOr<std::string> bdf = vendor_->PciBdf(i);
    if (!bdf.ok()) continue;
    Card card;
    card.index = i;
    card.bdf = Lower(*bdf);
    cards.push_back(std::move(card));
  }
  return cards;
}

StatusOr<Vhcu> HostBackend::CreateVhcu(int card, int compute_units, uint64_t memory_mib) {
  std::vector<Card> cards = CardBdfs();
  auto target =
      std::find_if(cards.begin(), cards.end(), [&](const Card& c) { return c.index == card; });
  if (target == cards.end()) {
    return NotFoundError("card " + std::to_string(card) + " does not exist (" +
                         std::to_string(cards.size()) + " cards)");
  }
  const std::string want_bdf = target->bdf;
  const std::string want = "card " + std::to_string(card) + " (" + want_bdf + ")";
  HCUDP_ASSIGN_OR_RETURN(VhcuHostLock lock,
                         VhcuHostLock::Acquire(fs_.root(), options_.vhcu_lock_timeout));
  // The vHCU is the one the driver made for this call, as the vendor
  // library reports it — not whichever new conf appeared meanwhile.
  int id = -1;
  HCUDP_RETURN_IF_ERROR(vendor_->CreateVhcu(card, compute_units, memory_mib, &id));
  if (id < 0) {
    return InternalError("the driver accepted a vHCU on " + want + " (" +
                         std::to_string(compute_units) + " CU, " + std::to_string(memory_mib) +
                         " MiB) but did not say which vHCU it made");
  }
  StatusOr<Vhcu> made = ReadVhcu(fs_, id, cards, *vendor_);
  if (!made.ok()) return made.status().WithContext("the new vHCU's conf is unusable");
  // The driver's card index is not the plugin's (DMI vs RSMI order): a wrong
  // map creates the vHCU on another physical card. The conf's PciBusId is
  // the truth. What was just made is ours, so it is removed again.
  if (made->card_bdf != want_bdf) {
    const std::string wrong = "vHCU " + std::to_string(made->id) + " was created on " +
                              made->card_bdf + " instead of the requested " + want;
    Status destroyed = DestroyVhcuLocked(made->id);
    if (destroyed.ok()) {
      LOG(ERROR) << wrong << "; destroyed it";
      return InternalError(wrong + "; destroyed it");
    }
    LOG(ERROR) << wrong << "; destroying it failed: " << destroyed.ToString();
    return InternalError(wrong + "; destroying it failed: " + destroyed.message());
  }
  return made;
}

Status HostBackend::DestroyVhcu(int id) {
  HCUDP_ASSIGN_OR_RETURN(VhcuHostLock lock,
                         VhcuHostLock::Acquire(fs_.root(), options_.vhcu_lock_timeout));
  return DestroyVhcuLocked(id);
}

Status HostBackend::DestroyVhcuLocked(int id) {
  const std::string conf = fs_.VdevConf(id);
  Status stopped = vendor_->StopVhcu(id);
  if (stopped.code() == StatusCode::kNotFound) {
    // Gone already (a destroy killed before its unlink, a vendor tool): a
    // conf left behind would stay until the driver reuses the id. Removed
    // only when the driver confirms it does not know the vHCU.
    if (node_files::Exists(conf) &&
        vendor_->VhcuInfo(id).status().code() == StatusCode::kNotFound) {
      Status removed = node_files::RemoveFile(conf);
      LOG(WARNING) << "vHCU " << id << " is unknown to the driver; its leftover conf "
                   << (removed.ok() ? "was removed" : "stays: " + removed.message());
    }
    return stopped;
  }
  if (!stopped.ok()) {
    // A vHCU that was never started cannot be stopped; destroy decides.
    LOG(INFO) << "stopping vHCU " << id << ": " << stopped.ToString() << "; destroying anyway";
  }
  HCUDP_RETURN_IF_ERROR(vendor_->DestroyVhcu(id));
  Status removed = node_files::RemoveFile(conf);
  if (!removed.ok()) {
    // The vHCU is gone; a leftover conf is skipped by discovery as stale.
    LOG(WARNING) << "vHCU " << id << " destroyed but " << removed.message();
  }
  return OkStatus();
}

std::vector<std::string> HostBackend::WatchPaths() const {
  std::vector<std::string> paths = {fs_.VdevDir(), fs_.MigCiDir()};
  for (std::string& p : vendor_->WatchPaths()) paths.push_back(std::move(p));
  return paths;
}

std::unique_ptr<Backend> NewHostBackend(HostBackendOptions options,
                                        std::unique_ptr<VendorLib> vendor) {
  return std::make_unique<HostBackend>(std::move(options), std::move(vendor));
}

}  // namespace hcudp
