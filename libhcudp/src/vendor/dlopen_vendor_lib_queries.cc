// DlopenVendorLib: RSMI, DMI and MIG queries and vHCU operations. Each holds
// mu_ shared for the duration of its library calls.

#include <algorithm>
#include <cstring>
#include <mutex>
#include <vector>

#include "hcudp_internal/log.h"
#include "vendor/created_vhcu.h"
#include "vendor/dlopen_vendor_lib_impl.h"
#include "vendor/node_files.h"
#include "vendor/vendor_status.h"

namespace hcudp::vendor {
namespace {

Status CheckCard(int card) {
  if (card < 0) return InvalidArgumentError("card index " + std::to_string(card) + " is negative");
  return OkStatus();
}

// The blocks whose uncorrectable errors make a card unhealthy
// (reference/hcu-hardware.md §5).
constexpr rsmi_gpu_block_t kEccBlocks[] = {
    RSMI_GPU_BLOCK_UMC,   RSMI_GPU_BLOCK_SDMA,     RSMI_GPU_BLOCK_GFX, RSMI_GPU_BLOCK_MMHUB,
    RSMI_GPU_BLOCK_ATHUB, RSMI_GPU_BLOCK_PCIE_BIF, RSMI_GPU_BLOCK_HDP, RSMI_GPU_BLOCK_XGMI_WAFL,
    RSMI_GPU_BLOCK_DF,    RSMI_GPU_BLOCK_SMN,      RSMI_GPU_BLOCK_SEM, RSMI_GPU_BLOCK_MP0,
    RSMI_GPU_BLOCK_MP1,   RSMI_GPU_BLOCK_FUSE,
};

}  // namespace

StatusOr<int> DlopenVendorLib::CardCount() {
  ReaderLock lock(mu_);
  HCUDP_RETURN_IF_ERROR(CheckInitializedLocked());
  return RsmiCountLocked();
}

StatusOr<std::string> DlopenVendorLib::BdfLocked(int card) const {
  uint64_t bdfid = 0;
  HCUDP_RETURN_IF_ERROR(
      Rsmi(api_->rsmi.dev_pci_id_get(static_cast<uint32_t>(card), &bdfid), "rsmi_dev_pci_id_get"));
  return FormatBdfId(bdfid);
}

StatusOr<std::string> DlopenVendorLib::PciBdf(int card) {
  HCUDP_RETURN_IF_ERROR(CheckCard(card));
  ReaderLock lock(mu_);
  HCUDP_RETURN_IF_ERROR(CheckInitializedLocked());
  return BdfLocked(card);
}

StatusOr<std::string> DlopenVendorLib::Serial(int card) {
  HCUDP_RETURN_IF_ERROR(CheckCard(card));
  ReaderLock lock(mu_);
  HCUDP_RETURN_IF_ERROR(CheckInitializedLocked());
  char buf[256] = {};
  HCUDP_RETURN_IF_ERROR(
      Rsmi(api_->rsmi.dev_serial_number_get(static_cast<uint32_t>(card), buf, sizeof(buf)),
           "rsmi_dev_serial_number_get"));
  return std::string(buf, strnlen(buf, sizeof(buf)));
}

StatusOr<uint64_t> DlopenVendorLib::UniqueId(int card) {
  HCUDP_RETURN_IF_ERROR(CheckCard(card));
  ReaderLock lock(mu_);
  HCUDP_RETURN_IF_ERROR(CheckInitializedLocked());
  uint64_t id = 0;
  HCUDP_RETURN_IF_ERROR(Rsmi(api_->rsmi.dev_unique_id_get(static_cast<uint32_t>(card), &id),
                             "rsmi_dev_unique_id_get"));
  return id;
}

StatusOr<uint16_t> DlopenVendorLib::PciDeviceId(int card) {
  HCUDP_RETURN_IF_ERROR(CheckCard(card));
  ReaderLock lock(mu_);
  HCUDP_RETURN_IF_ERROR(CheckInitializedLocked());
  uint16_t id = 0;
  HCUDP_RETURN_IF_ERROR(
      Rsmi(api_->rsmi.dev_id_get(static_cast<uint32_t>(card), &id), "rsmi_dev_id_get"));
  return id;
}

StatusOr<uint64_t> DlopenVendorLib::MemoryTotalBytes(int card) {
  HCUDP_RETURN_IF_ERROR(CheckCard(card));
  ReaderLock lock(mu_);
  HCUDP_RETURN_IF_ERROR(CheckInitializedLocked());
  uint64_t total = 0;
  HCUDP_RETURN_IF_ERROR(
      Rsmi(api_->rsmi.dev_memory_total_get(static_cast<uint32_t>(card), RSMI_MEM_TYPE_VRAM, &total),
           "rsmi_dev_memory_total_get"));
  return total;
}

StatusOr<int> DlopenVendorLib::NumaNode(int card) {
  HCUDP_RETURN_IF_ERROR(CheckCard(card));
  ReaderLock lock(mu_);
  HCUDP_RETURN_IF_ERROR(CheckInitializedLocked());
  uint32_t node = 0;
  HCUDP_RETURN_IF_ERROR(
      Rsmi(api_->rsmi.topo_get_numa_node_number(static_cast<uint32_t>(card), &node),
           "rsmi_topo_get_numa_node_number"));
  // "No NUMA affinity" arrives as (uint32_t)-1; the vendor plugin sent it
  // on as 4294967295 (seed-behaviour.md §3.4), we report kNoNumaNode.
  if (node > 0x7fffffffu) return kNoNumaNode;
  return static_cast<int>(node);
}

StatusOr<RsmiLink> DlopenVendorLib::LinkBetween(int src, int dst) {
  HCUDP_RETURN_IF_ERROR(CheckCard(src));
  HCUDP_RETURN_IF_ERROR(CheckCard(dst));
  ReaderLock lock(mu_);
  HCUDP_RETURN_IF_ERROR(CheckInitializedLocked());
  uint64_t hops = 0;
  RSMI_IO_LINK_TYPE type = RSMI_IOLINK_TYPE_UNDEFINED;
  HCUDP_RETURN_IF_ERROR(
      Rsmi(api_->rsmi.topo_get_link_type(static_cast<uint32_t>(src), static_cast<uint32_t>(dst),
                                         &hops, &type),
           "rsmi_topo_get_link_type"));
  RsmiLink link;
  link.hops = static_cast<int>(hops);
  switch (type) {
    case RSMI_IOLINK_TYPE_PCIEXPRESS:
      link.type = LinkType::kPcie;
      break;
    case RSMI_IOLINK_TYPE_XGMI:
      link.type = LinkType::kHsl;
      break;
    default:
      link.type = LinkType::kUnknown;
      break;
  }
  if (link.type == LinkType::kHsl && api_->rsmi.topo_is_hylink != nullptr) {
    bool via_switch = false;
    if (api_->rsmi.topo_is_hylink(static_cast<uint32_t>(src), static_cast<uint32_t>(dst),
                                  &via_switch) == RSMI_STATUS_SUCCESS &&
        via_switch) {
      link.type = LinkType::kHyswitch;
    }
  }
  if (api_->rsmi.topo_get_link_weight != nullptr) {
    uint64_t weight = 0;
    if (api_->rsmi.topo_get_link_weight(static_cast<uint32_t>(src), static_cast<uint32_t>(dst),
                                        &weight) == RSMI_STATUS_SUCCESS) {
      link.weight = static_cast<int>(weight);
    }
  }
  if (link.type == LinkType::kHsl) link.up_links = UpXhclLinksLocked(src, dst);
  return link;
}

int DlopenVendorLib::UpXhclLinksLocked(int src, int dst) const {
  const RsmiApi& r = api_->rsmi;
  if (r.xhcl_link_number_get == nullptr || r.xhcl_link_state_get == nullptr ||
      r.xhcl_link_remote_bdfid_get == nullptr) {
    return 0;
  }
  StatusOr<std::string> dst_bdf = BdfLocked(dst);
  uint32_t links = 0;
  if (!dst_bdf.ok() ||
      r.xhcl_link_number_get(static_cast<uint32_t>(src), &links) != RSMI_STATUS_SUCCESS) {
    return 0;
  }
  int up = 0;
  for (uint32_t k = 0; k < links && k < 7; ++k) {  // at most 7 XHCL links per card
    uint32_t state = 0;
    uint64_t remote = 0;
    if (r.xhcl_link_state_get(static_cast<uint32_t>(src), k, &state) == RSMI_STATUS_SUCCESS &&
        state == 1 &&
        r.xhcl_link_remote_bdfid_get(static_cast<uint32_t>(src), k, &remote) ==
            RSMI_STATUS_SUCCESS &&
        FormatBdfId(remote) == *dst_bdf) {
      ++up;
    }
  }
  return up;
}

StatusOr<uint64_t> DlopenVendorLib::EccLocked(int card) const {
  uint64_t total = 0;
  bool any_supported = false;
  for (rsmi_gpu_block_t block : kEccBlocks) {
    rsmi_error_count_t counts{};
    const rsmi_status_t st =
        api_->rsmi.dev_ecc_count_get(static_cast<uint32_t>(card), block, &counts);
    if (st == RSMI_STATUS_NOT_SUPPORTED || st == RSMI_STATUS_NOT_YET_IMPLEMENTED) continue;
    HCUDP_RETURN_IF_ERROR(Rsmi(st, "rsmi_dev_ecc_count_get"));
    any_supported = true;
    total += counts.uncorrectable_err;
  }
  if (!any_supported) {
    return UnimplementedError("rsmi_dev_ecc_count_get: ECC counts not supported on card " +
                              std::to_string(card));
  }
  return total;
}

StatusOr<uint64_t> DlopenVendorLib::UncorrectableEccCount(int card) {
  HCUDP_RETURN_IF_ERROR(CheckCard(card));
  ReaderLock lock(mu_);
  HCUDP_RETURN_IF_ERROR(CheckInitializedLocked());
  return EccLocked(card);
}

// ---- DMI ----

StatusOr<int> DlopenVendorLib::DmiIndexLocked(int card) const {
  // Before the first map (not initialised): the caller's index as is.
  if (card_map_.dmi_index.empty()) return card;
  if (card >= static_cast<int>(card_map_.dmi_index.size())) {
    return NotFoundError("card " + std::to_string(card) + " does not exist (" +
                         std::to_string(card_map_.dmi_index.size()) + " cards)");
  }
  const int dmi = card_map_.dmi_index[card];
  if (dmi < 0) {
    return FailedPreconditionError("card " + std::to_string(card) + " (" + card_map_.bdfs[card] +
                                   ") has no DMI index: the KFD topology does not list it");
  }
  return dmi;
}

int DlopenVendorLib::RsmiIndexForDmiLocked(int dmi_index) const {
  for (size_t i = 0; i < card_map_.dmi_index.size(); ++i) {
    if (card_map_.dmi_index[i] == dmi_index) return static_cast<int>(i);
  }
  return card_map_.dmi_index.empty() ? dmi_index : -1;
}

Status DlopenVendorLib::DmiLocked(dmiStatus code, const char* call) const {
  if (code == DMI_STATUS_ERROR_NOT_INITIALIZED && started_) {
    // libhydmi initialises on its first call, once per process: from now on
    // every call fails, and only a restart of the process recovers.
    MutexLock guard(dmi_down_mu_);
    if (dmi_down_.empty()) {
      dmi_down_ = std::string(call) + " says DMI is not initialised; only a restart recovers (" +
                  kDmiInitHint + ")";
      LOG(ERROR) << "vendor library: " << dmi_down_;
    }
  }
  return Dmi(code, call);
}

Status DlopenVendorLib::RestartRequired() const {
  MutexLock guard(dmi_down_mu_);
  if (dmi_down_.empty()) return OkStatus();
  return FailedPreconditionError(dmi_down_);
}

void DlopenVendorLib::NoteResetRequired(const Status& st, int card) {
  if (st.code() != StatusCode::kAborted) return;
  std::string bdf;
  {
    ReaderLock lock(mu_);
    if (card < 0 || card >= static_cast<int>(card_map_.bdfs.size())) return;
    bdf = card_map_.bdfs[card];
  }
  MutexLock guard(dmi_down_mu_);
  if (reset_required_.insert(bdf).second) {
    LOG(ERROR) << "card " << bdf << " needs a reset: " << st.message();
  }
}

template <typename Result, typename Call>
Result DlopenVendorLib::RetryTransient(const std::string& what, Call call) const {
  const int retries = std::max(options_.transient_retries, 0);
  int delay_ms = options_.transient_backoff_initial_ms;
  for (int attempt = 0;; ++attempt) {
    // `call` takes mu_ itself; mu_ is not held while backing off.
    Result result = call();
    const Status& st = StatusOf(result);
    if (st.code() != StatusCode::kUnavailable || attempt >= retries) return result;
    VLOG(1) << what << ": " << st.message() << "; retrying in " << delay_ms << " ms";
    Sleep(delay_ms);
    delay_ms = std::min(delay_ms * 2, options_.transient_backoff_max_ms);
  }
}

StatusOr<int> DlopenVendorLib::DmiCardCount() {
  return RetryTransient<StatusOr<int>>("dmiGetDeviceCount", [this]() -> StatusOr<int> {
    ReaderLock lock(mu_);
    int n = 0;
    HCUDP_RETURN_IF_ERROR(DmiLocked(api_->dmi.get_device_count(&n), "dmiGetDeviceCount"));
    return n;
  });
}

StatusOr<DmiDeviceInfo> DlopenVendorLib::DmiInfoLocked(int id, bool vhcu) const {
  dmiDeviceInfo raw{};
  const dmiStatus st =
      vhcu ? api_->dmi.get_vdevice_info(id, &raw) : api_->dmi.get_device_info(id, &raw);
  if (vhcu && (st == DMI_STATUS_INVALID_ARGUMENTS || st == DMI_STATUS_NOT_SUPPORTED)) {
    // Rejected early (an id out of range, an unsupported mode): the driver
    // does not know this vdev (reference/hcu-hardware.md §1.9).
    return NotFoundError("dmiGetVDeviceInfo: the driver does not know vHCU " + std::to_string(id) +
                         " (" + DmiCodeName(st) + ")");
  }
  HCUDP_RETURN_IF_ERROR(DmiLocked(st, vhcu ? "dmiGetVDeviceInfo" : "dmiGetDeviceInfo"));
  DmiDeviceInfo info;
  info.name.assign(raw.name, strnlen(raw.name, sizeof(raw.name)));
  info.compute_units = raw.compute_unit_count;
  info.global_memory_bytes = raw.global_mem_size;
  info.used_memory_bytes = raw.usage_mem_size;
  info.container_id = raw.container_id;
  info.parent_card = RsmiIndexForDmiLocked(raw.device_id);
  if (info.parent_card >= 0 && info.parent_card < static_cast<int>(card_map_.bdfs.size())) {
    info.parent_bdf = card_map_.bdfs[info.parent_card];
  }
  return info;
}

StatusOr<DmiDeviceInfo> DlopenVendorLib::DeviceInfo(int card) {
  HCUDP_RETURN_IF_ERROR(CheckCard(card));
  StatusOr<DmiDeviceInfo> info =
      RetryTransient<StatusOr<DmiDeviceInfo>>("dmiGetDeviceInfo", [&]() -> StatusOr<DmiDeviceInfo> {
        ReaderLock lock(mu_);
        HCUDP_ASSIGN_OR_RETURN(const int dmi, DmiIndexLocked(card));
        StatusOr<DmiDeviceInfo> got = DmiInfoLocked(dmi, /*vhcu=*/false);
        if (got.ok()) {
          got->parent_card = card;
          if (card < static_cast<int>(card_map_.bdfs.size()))
            got->parent_bdf = card_map_.bdfs[card];
        }
        return got;
      });
  NoteResetRequired(info.status(), card);
  return info;
}

StatusOr<int> DlopenVendorLib::MaxVhcusPerCard() {
  return RetryTransient<StatusOr<int>>("dmiGetMaxVDeviceCount", [this]() -> StatusOr<int> {
    ReaderLock lock(mu_);
    int n = 0;
    HCUDP_RETURN_IF_ERROR(DmiLocked(api_->dmi.get_max_vdevice_count(&n), "dmiGetMaxVDeviceCount"));
    return n;
  });
}

StatusOr<DmiDeviceInfo> DlopenVendorLib::VhcuInfo(int vhcu_id) {
  if (vhcu_id < 0)
    return InvalidArgumentError("vHCU id " + std::to_string(vhcu_id) + " is negative");
  return RetryTransient<StatusOr<DmiDeviceInfo>>("dmiGetVDeviceInfo", [&]() {
    ReaderLock lock(mu_);
    return DmiInfoLocked(vhcu_id, /*vhcu=*/true);
  });
}

StatusOr<DmiRemaining> DlopenVendorLib::Remaining(int card) {
  HCUDP_RETURN_IF_ERROR(CheckCard(card));
  StatusOr<DmiRemaining> left = RetryTransient<StatusOr<DmiRemaining>>(
      "dmiGetDeviceRemainingInfo", [&]() -> StatusOr<DmiRemaining> {
        ReaderLock lock(mu_);
        HCUDP_ASSIGN_OR_RETURN(const int dmi, DmiIndexLocked(card));
        size_t cus = 0, bytes = 0;
        HCUDP_RETURN_IF_ERROR(DmiLocked(api_->dmi.get_device_remaining_info(dmi, &cus, &bytes),
                                        "dmiGetDeviceRemainingInfo"));
        return DmiRemaining{static_cast<int>(cus), static_cast<uint64_t>(bytes)};
      });
  NoteResetRequired(left.status(), card);
  return left;
}

bool DlopenVendorLib::VhcuUnknownLocked(int vhcu_id) const {
  return DmiInfoLocked(vhcu_id, /*vhcu=*/true).status().code() == StatusCode::kNotFound;
}

Status DlopenVendorLib::CreateVhcu(int card, int compute_units, uint64_t memory_mib,
                                   int* created_id) {
  HCUDP_RETURN_IF_ERROR(CheckCard(card));
  if (api_->dmi.create_vdevices == nullptr) {
    return UnimplementedError(
        api_->dmi_library->path() +
        " has no dmiCreateVDevices (driver too old for vHCU, needs >= 6.2.26)");
  }
  if (compute_units <= 0 || memory_mib == 0 || memory_mib > 0x7fffffffu) {
    return InvalidArgumentError("vHCU needs CUs > 0 and 0 < memory MiB < 2^31");
  }
  // Never retried here: after a send/receive error hymgr may have acted, and
  // a second create would make a second vHCU. The caller decides.
  // The driver returns no id: the conf this call made is the new one of this
  // card and size (callers hold the host-wide vHCU lock).
  Status st;
  int id = -1;
  {
    ReaderLock lock(mu_);
    HCUDP_ASSIGN_OR_RETURN(const int dmi, DmiIndexLocked(card));
    HCUDP_ASSIGN_OR_RETURN(const std::string bdf, BdfLocked(card));
    // A conf whose vHCU the driver does not know is stale (a destroy whose
    // unlink never ran, a vendor tool): the driver may give its id out again,
    // on the same card and of the same size, so it is no "before". After the
    // create, one the driver still does not know is still stale, not ours.
    std::map<int, VdevConf> before = ReadVdevConfs(fs_);
    std::vector<int> stale;
    for (auto it = before.begin(); it != before.end();) {
      if (VhcuUnknownLocked(it->first)) {
        stale.push_back(it->first);
        it = before.erase(it);
      } else {
        ++it;
      }
    }
    int cus = compute_units;
    int mib = static_cast<int>(memory_mib);
    st = DmiLocked(api_->dmi.create_vdevices(dmi, 1, &cus, &mib), "dmiCreateVDevices");
    if (st.ok()) {
      std::map<int, VdevConf> after = ReadVdevConfs(fs_);
      for (int stale_id : stale) {
        if (after.count(stale_id) != 0 && VhcuUnknownLocked(stale_id)) after.erase(stale_id);
      }
      StatusOr<int> found = FindCreatedVhcu(before, after, bdf, compute_units, memory_mib, fs_);
      if (found.ok()) {
        id = *found;
      } else {
        st = found.status();
      }
    }
  }
  NoteResetRequired(st, card);
  if (st.ok() && created_id != nullptr) *created_id = id;
  return st;
}

Status DlopenVendorLib::StopVhcu(int vhcu_id) {
  if (api_->dmi.stop_vdevice == nullptr) {
    return UnimplementedError(api_->dmi_library->path() + " has no dmiStopVDevice");
  }
  ReaderLock lock(mu_);
  return DmiLocked(api_->dmi.stop_vdevice(vhcu_id), "dmiStopVDevice");
}

Status DlopenVendorLib::DestroyOnceShared(int vhcu_id) {
  ReaderLock lock(mu_);
  return DmiLocked(api_->dmi.destroy_single_vdevice(vhcu_id), "dmiDestroySingleVDevice");
}

Status DlopenVendorLib::DestroyVhcu(int vhcu_id) {
  if (api_->dmi.destroy_single_vdevice == nullptr) {
    return UnimplementedError(api_->dmi_library->path() + " has no dmiDestroySingleVDevice");
  }
  // One attempt: DEVICE_BUSY (and hymgr unreachable) is Unavailable and the
  // caller's queue (the VhcuManager) owns the retries, so nothing sleeps
  // under a lock here.
  Status st = DestroyOnceShared(vhcu_id);
  if (st.code() == StatusCode::kUnavailable) {
    return UnavailableError("vHCU " + std::to_string(vhcu_id) + " is busy: " + st.message());
  }
  return st;
}

StatusOr<bool> DlopenVendorLib::MigEnabled() {
  if (api_->mig.get_system_mig_mode == nullptr) return false;
  ReaderLock lock(mu_);
  unsigned current = 0, pending = 0;
  HCUDP_RETURN_IF_ERROR(
      FromNvml(api_->mig.get_system_mig_mode(&current, &pending), "nvmlGetSystemMigMode"));
  return current == NVML_DEVICE_MIG_ENABLE;
}

}  // namespace hcudp::vendor
