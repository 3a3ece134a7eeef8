// SimVendorLib: the VendorLib answered from a SimNode file. The file is
// re-read (and the host-root re-rendered) when its identity changes; an
// invalid edit is logged and the last good node stays.
#include <sys/stat.h>

#include <filesystem>
#include <memory>

#include "hcudp/sim_node.h"
#include "hcudp_internal/log.h"
#include "hcudp_internal/thread_annotations.h"
#include "sim/sim_layout.h"
#include "sim/sim_vhcu_store.h"

namespace hcudp {
namespace {

// What identifies one version of the file cheaply.
struct FileStamp {
  dev_t dev = 0;
  ino_t ino = 0;
  off_t size = -1;
  int64_t mtime_ns = -1;
  bool operator==(const FileStamp& o) const {
    return dev == o.dev && ino == o.ino && size == o.size && mtime_ns == o.mtime_ns;
  }
};

std::optional<FileStamp> Stamp(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return std::nullopt;
  return FileStamp{st.st_dev, st.st_ino, st.st_size,
                   static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec};
}

class SimVendorLib final : public VendorLib {
 public:
  SimVendorLib(std::string path, const internal::HostFs& host, SimNode node, FileStamp stamp)
      : path_(std::move(path)),
        host_(host),
        node_(std::make_shared<const SimNode>(std::move(node))),
        stamp_(stamp),
        vhcus_(host) {}

  Status Init() override { return OkStatus(); }
  void Shutdown() override {}

  StatusOr<std::string> DriverVersion() override { return Current()->driver_version; }
  StatusOr<bool> DriverLive() override { return true; }

  StatusOr<int> CardCount() override { return static_cast<int>(Current()->cards.size()); }
  StatusOr<std::string> PciBdf(int card) override {
    HCUDP_ASSIGN_OR_RETURN(SimCard c, CardOf(card));
    return c.bdf;
  }
  StatusOr<std::string> Serial(int card) override {
    HCUDP_ASSIGN_OR_RETURN(SimCard c, CardOf(card));
    return c.serial;
  }
  StatusOr<uint64_t> UniqueId(int card) override {
    HCUDP_ASSIGN_OR_RETURN(SimCard c, CardOf(card));
    return sim::UniqueIdOf(c);
  }
  StatusOr<uint16_t> PciDeviceId(int card) override {
    HCUDP_ASSIGN_OR_RETURN(SimCard c, CardOf(card));
    return c.pci_device_id;
  }
  StatusOr<uint64_t> MemoryTotalBytes(int card) override {
    HCUDP_ASSIGN_OR_RETURN(SimCard c, CardOf(card));
    return c.memory_mib * kMiB;
  }
  StatusOr<int> NumaNode(int card) override {
    HCUDP_ASSIGN_OR_RETURN(SimCard c, CardOf(card));
    return c.numa_node;
  }
  StatusOr<RsmiLink> LinkBetween(int src, int dst) override {
    std::shared_ptr<const SimNode> node = Current();
    HCUDP_RETURN_IF_ERROR(CardOf(*node, src).status());
    HCUDP_RETURN_IF_ERROR(CardOf(*node, dst).status());
    if (src == dst)
      return InvalidArgumentError("no link from card " + std::to_string(src) + " to itself");
    SimLinkSpec spec = node->LinkBetween(src, dst);
    RsmiLink link;
    link.type = spec.type;
    link.hops = spec.hops;
    link.weight = spec.weight;
    link.up_links = spec.type == LinkType::kHsl ? 1 : 0;
    return link;
  }

  StatusOr<DmiDeviceInfo> DeviceInfo(int card) override {
    HCUDP_ASSIGN_OR_RETURN(SimCard c, CardOf(card));
    DmiDeviceInfo info;
    info.name = c.model;
    info.compute_units = c.compute_units;
    info.global_memory_bytes = c.memory_mib * kMiB;
    info.parent_card = c.index;
    info.parent_bdf = c.bdf;
    return info;
  }
  StatusOr<int> MaxVhcusPerCard() override { return Current()->max_vhcus_per_card; }
  StatusOr<DmiDeviceInfo> VhcuInfo(int vhcu_id) override {
    std::shared_ptr<const SimNode> node = Current();
    HCUDP_ASSIGN_OR_RETURN(VdevConf conf, vhcus_.Read(vhcu_id));
    DmiDeviceInfo info;
    const SimCard* parent = node->FindCard(conf.device_id);
    info.name = parent != nullptr ? parent->model : "";
    info.compute_units = conf.cu_count;
    info.global_memory_bytes = conf.mem_mib * kMiB;
    // The driver's device_id is the DMI index, which in the sim is the
    // SimNode index (the probe order).
    info.parent_card = conf.device_id;
    info.parent_bdf = parent != nullptr ? parent->bdf : "";
    return info;
  }
  StatusOr<DmiRemaining> Remaining(int card) override {
    HCUDP_ASSIGN_OR_RETURN(SimCard c, CardOf(card));
    return vhcus_.Remaining(c);
  }
  using VendorLib::CreateVhcu;
  Status CreateVhcu(int card, int compute_units, uint64_t memory_mib, int* created_id) override {
    std::shared_ptr<const SimNode> node = Current();
    StatusOr<int> id = vhcus_.Create(*node, card, compute_units, memory_mib);
    if (!id.ok()) return id.status();
    if (created_id != nullptr) *created_id = *id;
    LOG(INFO) << "sim: created vHCU " << *id << " on card " << card << " (" << compute_units
              << " CU, " << memory_mib << " MiB)";
    return OkStatus();
  }
  Status StopVhcu(int vhcu_id) override {
    Current();
    return vhcus_.Read(vhcu_id).status();
  }
  Status DestroyVhcu(int vhcu_id) override {
    Current();
    return vhcus_.Destroy(vhcu_id);
  }

  StatusOr<bool> MigEnabled() override { return Current()->mig_enabled; }

  StatusOr<std::vector<CardHealthReport>> QueryHealth() override {
    std::vector<CardHealthReport> reports;
    for (const SimCard& c : Current()->cards) {
      CardHealthReport r;
      r.bdf = c.bdf;
      r.health = c.health;
      if (c.health != Health::kHealthy) r.reason = "SimNode health: Unhealthy";
      reports.push_back(r);
    }
    return reports;
  }

  std::vector<std::string> WatchPaths() const override { return {path_}; }

 private:
  // The node as of now: reloads and re-renders when the file changed.
  std::shared_ptr<const SimNode> Current() {
    MutexLock guard(mu_);
    std::optional<FileStamp> stamp = Stamp(path_);
    if (!stamp) {
      if (!missing_logged_)
        LOG(WARNING) << "sim: cannot stat " << path_ << "; keeping the last good node";
      missing_logged_ = true;
      return node_;
    }
    missing_logged_ = false;
    if (*stamp == stamp_) return node_;
    stamp_ = *stamp;  // an invalid version is reported once, not on every call
    StatusOr<SimNode> node = LoadSimNode(path_);
    if (!node.ok()) {
      LOG(WARNING) << "sim: ignoring invalid edit, keeping the last good node: "
                   << node.status().ToString();
      return node_;
    }
    Status rendered = RenderSimNode(*node, host_.root());
    if (!rendered.ok()) {
      LOG(WARNING) << "sim: cannot render " << host_.root() << ": " << rendered.ToString();
      return node_;
    }
    LOG(INFO) << "sim: reloaded " << path_;
    node_ = std::make_shared<const SimNode>(std::move(node).value());
    return node_;
  }

  static StatusOr<SimCard> CardOf(const SimNode& node, int card) {
    const SimCard* c = node.FindCard(card);
    if (c == nullptr) return NotFoundError("card " + std::to_string(card) + " does not exist");
    return *c;
  }
  StatusOr<SimCard> CardOf(int card) { return CardOf(*Current(), card); }

  const std::string path_;
  const internal::HostFs host_;  // the canonical host-root
  Mutex mu_;  // a leaf
  std::shared_ptr<const SimNode> node_ HCUDP_GUARDED_BY(mu_);
  FileStamp stamp_ HCUDP_GUARDED_BY(mu_);
  bool missing_logged_ HCUDP_GUARDED_BY(mu_) = false;
  sim::VhcuStore vhcus_;
};

}  // namespace

StatusOr<std::unique_ptr<VendorLib>> NewSimVendorLib(const std::string& path,
                                                     const std::string& host_root) {
  std::error_code ec;
  std::string abs = std::filesystem::absolute(path, ec).lexically_normal().string();
  if (ec) return InvalidArgumentError("sim: bad SimNode path " + path + ": " + ec.message());
  std::string root = host_root.empty() ? DefaultSimHostRoot(abs) : host_root;
  // Stamp before loading: an edit racing with the load is picked up next call.
  std::optional<FileStamp> stamp = Stamp(abs);
  HCUDP_ASSIGN_OR_RETURN(SimNode node, LoadSimNode(abs));
  HCUDP_RETURN_IF_ERROR(RenderSimNode(node, root));
  std::error_code canon_ec;
  std::string canonical_root = std::filesystem::weakly_canonical(root, canon_ec).string();
  if (canon_ec) canonical_root = root;
  return std::unique_ptr<VendorLib>(
      new SimVendorLib(abs, internal::HostFs(canonical_root), std::move(node),
                       stamp.value_or(FileStamp{})));
}

}  // namespace hcudp
