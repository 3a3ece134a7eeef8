// DlopenVendorLib: loading, start-up (wait for the driver, init, count
// agreement, index map) and shutdown. Queries live in
// dlopen_vendor_lib_queries.cc, health in dlopen_vendor_lib_health.cc.
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <thread>

#include "hcudp_internal/log.h"
#include "vendor/dlopen_vendor_lib_impl.h"
#include "vendor/kfd_topology.h"
#include "vendor/node_files.h"
#include "vendor/subprocess.h"
#include "vendor/vendor_status.h"

namespace hcudp {

StatusOr<std::unique_ptr<VendorLib>> NewDlopenVendorLib(const DlopenVendorLibOptions& options) {
  const std::string lib_dir = internal::JoinUnder(options.hyhal_path, "lib");
  StatusOr<std::unique_ptr<vendor::VendorApi>> api = vendor::LoadVendorApi(lib_dir);
  // Callers add the flag context (OpenBackend: "--hyhal-path <dir>").
  if (!api.ok()) return api.status();
  return std::unique_ptr<VendorLib>(new vendor::DlopenVendorLib(options, std::move(api).value()));
}

void CancelVendorTools() { vendor::CancelCommands(); }

namespace vendor {

DlopenVendorLib::DlopenVendorLib(DlopenVendorLibOptions options, std::unique_ptr<VendorApi> api)
    : options_(std::move(options)), api_(std::move(api)) {}

DlopenVendorLib::~DlopenVendorLib() { Shutdown(); }

void DlopenVendorLib::Sleep(int ms) const {
  const std::chrono::milliseconds d(std::max(ms, 0));
  if (options_.sleep) {
    options_.sleep(d);
  } else {
    std::this_thread::sleep_for(d);
  }
}

Status DlopenVendorLib::Rsmi(rsmi_status_t code, const char* call) const {
  return FromRsmi(code, call, api_->rsmi.status_string);
}

Status DlopenVendorLib::Dmi(dmiStatus code, const char* call) const {
  return FromDmi(code, call, api_->dmi.get_status_string);
}

Status DlopenVendorLib::CheckInitializedLocked() const {
  if (!initialized_)
    return FailedPreconditionError("vendor library is not initialised (rsmi_init)");
  return OkStatus();
}

Status DlopenVendorLib::Init() {
  WriterLock lock(mu_);
  if (initialized_) return OkStatus();
  HCUDP_RETURN_IF_ERROR(WaitForDriverLiveLocked());
  HCUDP_RETURN_IF_ERROR(RsmiInitWithRetriesLocked());
  initialized_ = true;
  Status st = AwaitCountAgreementLocked();
  if (st.ok()) st = RebuildCardMapLocked();
  if (!st.ok()) {
    // A failed re-initialisation inside AwaitCountAgreementLocked already
    // left RSMI shut down: shut down only what is still up.
    if (initialized_) api_->rsmi.shut_down();
    initialized_ = false;
    return st;
  }
  bool agree = false;
  const std::string counts = CountSignatureLocked(&agree);
  unresolved_mismatch_ = agree ? std::string() : counts;
  started_ = true;
  LOG(INFO) << "vendor libraries ready: " << card_map_.bdfs.size() << " card(s) via "
            << api_->rsmi_library->path();
  return OkStatus();
}

void DlopenVendorLib::Shutdown() {
  WriterLock lock(mu_);
  reinit_failed_ = false;
  if (!initialized_) return;
  const rsmi_status_t st = api_->rsmi.shut_down();
  if (st != RSMI_STATUS_SUCCESS) LOG(WARNING) << Rsmi(st, "rsmi_shut_down").message();
  initialized_ = false;
}

Status DlopenVendorLib::WaitForDriverLiveLocked() {
  const int attempts = std::max(options_.driver_wait_attempts, 1);
  std::string state;
  for (int attempt = 1; attempt <= attempts; ++attempt) {
    if (DriverModuleLive(fs_, &state)) return OkStatus();
    LOG(WARNING) << "HCU driver not live yet (initstate: " << state << "), attempt " << attempt
                 << "/" << attempts;
    if (attempt < attempts) Sleep(options_.driver_poll_interval_ms);
  }
  return FailedPreconditionError(
      "HCU driver is not live: " + fs_.DriverModuleFile("hycu", "initstate") +
      " (or hydcu) says \"" + state + "\" after " + std::to_string(attempts) + " checks " +
      std::to_string(options_.driver_poll_interval_ms) + " ms apart; is the hycu module loaded?");
}

Status DlopenVendorLib::RsmiInitWithRetriesLocked() {
  const int attempts = std::max(options_.init_retries, 1);
  Status last;
  for (int attempt = 1; attempt <= attempts; ++attempt) {
    last = Rsmi(api_->rsmi.init(0), "rsmi_init");
    if (last.ok()) return OkStatus();
    LOG(WARNING) << last.message() << " (attempt " << attempt << "/" << attempts << ")";
    if (attempt < attempts) Sleep(options_.init_retry_interval_ms);
  }
  return Status(last.code() == StatusCode::kInternal ? StatusCode::kUnavailable : last.code(),
                last.message() + " (gave up after " + std::to_string(attempts) + " attempts)");
}

StatusOr<int> DlopenVendorLib::RsmiCountLocked() const {
  uint32_t n = 0;
  HCUDP_RETURN_IF_ERROR(Rsmi(api_->rsmi.num_monitor_devices(&n), "rsmi_num_monitor_devices"));
  return static_cast<int>(n);
}

StatusOr<int> DlopenVendorLib::DmiCountLocked() const {
  int n = 0;
  HCUDP_RETURN_IF_ERROR(DmiLocked(api_->dmi.get_device_count(&n), "dmiGetDeviceCount"));
  return n;
}

namespace {

// False when the node has no PCI device directory to compare with (a test
// tree that does not render one); the PCI checks are then skipped.
bool HasPciTree(const internal::HostFs& fs) {
  return access(fs.PciDevicesDir().c_str(), F_OK) == 0;
}

// The number of HCU PCI functions, or -1 without a PCI tree.
int PciCount(const internal::HostFs& fs) {
  if (!HasPciTree(fs)) return -1;
  return static_cast<int>(ScanPciHcus(fs).size());
}

}  // namespace

Status DlopenVendorLib::AwaitCountAgreementLocked() {
  const int attempts = std::max(options_.count_mismatch_retries, 0);
  for (int attempt = 0;; ++attempt) {
    HCUDP_ASSIGN_OR_RETURN(const int rsmi, RsmiCountLocked());
    HCUDP_ASSIGN_OR_RETURN(const int dmi, DmiCountLocked());
    const int pci = PciCount(fs_);
    if (rsmi == dmi && (pci < 0 || pci == rsmi)) return OkStatus();
    const std::string counts = "rsmi=" + std::to_string(rsmi) + " dmi=" + std::to_string(dmi) +
                               " pci=" + (pci < 0 ? std::string("n/a") : std::to_string(pci));
    if (attempt >= attempts) {
      LOG(WARNING) << "card counts still disagree (" << counts << ") after " << attempts
                   << " re-initialisations; continuing with what the library reports";
      return OkStatus();
    }
    LOG(WARNING) << "card counts disagree (" << counts << "), re-initialising (" << attempt + 1
                 << "/" << attempts << ")";
    api_->rsmi.shut_down();
    initialized_ = false;
    Sleep(options_.count_retry_interval_ms);
    HCUDP_RETURN_IF_ERROR(RsmiInitWithRetriesLocked());
    initialized_ = true;
  }
}

Status DlopenVendorLib::RebuildCardMapLocked() {
  HCUDP_ASSIGN_OR_RETURN(const int rsmi_count, RsmiCountLocked());
  std::vector<CardFacts> cards;
  for (int i = 0; i < rsmi_count; ++i) {
    CardFacts facts;
    HCUDP_ASSIGN_OR_RETURN(facts.bdf, BdfLocked(i));
    uint16_t id = 0;
    if (api_->rsmi.dev_id_get(static_cast<uint32_t>(i), &id) == RSMI_STATUS_SUCCESS) {
      facts.rsmi_device_id = id;
    }
    cards.push_back(std::move(facts));
  }
  std::vector<std::string> dmi_names;
  StatusOr<int> dmi_count = DmiCountLocked();
  for (int d = 0; dmi_count.ok() && d < *dmi_count; ++d) {
    dmiDeviceInfo info{};
    dmi_names.push_back(api_->dmi.get_device_info(d, &info) == DMI_STATUS_SUCCESS
                            ? std::string(info.name, strnlen(info.name, sizeof(info.name)))
                            : std::string());
  }
  std::vector<PciHcu> pci;
  const bool have_pci = HasPciTree(fs_);
  if (have_pci) pci = ScanPciHcus(fs_);
  std::string problems;
  card_map_ = BuildCardMap(cards, ReadKfdGpuBdfs(fs_), dmi_names,
                           have_pci ? &pci : nullptr, &problems);
  if (!card_map_.verified) LOG(WARNING) << "RSMI/DMI card map: " << problems;
  for (size_t i = 0; i < card_map_.bdfs.size(); ++i) {
    VLOG(1) << "card " << card_map_.bdfs[i] << ": rsmi index " << i << ", dmi index "
            << card_map_.dmi_index[i];
  }
  for (const std::string& bdf : card_map_.bdfs) {
    if (std::find(known_bdfs_.begin(), known_bdfs_.end(), bdf) == known_bdfs_.end()) {
      known_bdfs_.push_back(bdf);
    }
  }
  return OkStatus();
}

Status DlopenVendorLib::ReinitLocked(const std::string& why) {
  LOG(WARNING) << "re-initialising the vendor library: " << why;
  if (initialized_) api_->rsmi.shut_down();
  initialized_ = false;
  HCUDP_RETURN_IF_ERROR(Rsmi(api_->rsmi.init(0), "rsmi_init"));
  initialized_ = true;
  return RebuildCardMapLocked();
}

std::string DlopenVendorLib::CountSignatureLocked(bool* agree) const {
  StatusOr<int> rsmi = RsmiCountLocked();
  const int pci = PciCount(fs_);
  const int known = static_cast<int>(card_map_.bdfs.size());
  *agree = rsmi.ok() && (pci < 0 || *rsmi == pci) && *rsmi == known;
  return "rsmi=" + (rsmi.ok() ? std::to_string(*rsmi) : std::string("error")) +
         " pci=" + (pci < 0 ? std::string("n/a") : std::to_string(pci)) +
         " known=" + std::to_string(known);
}

void DlopenVendorLib::ResyncIfCountsDisagree() {
  {
    ReaderLock lock(mu_);
    if (!initialized_ && !reinit_failed_) return;
    bool agree = false;
    const std::string signature = CountSignatureLocked(&agree);
    // A mismatch that re-initialising did not cure (a card the driver lost
    // but PCI still lists) is not retried until the counts change again.
    if (agree || signature == unresolved_mismatch_) return;
  }
  WriterLock lock(mu_);
  bool agree = false;
  std::string why;
  if (reinit_failed_) {
    why = "the previous re-initialisation failed";
  } else {
    if (!initialized_) return;
    const std::string before = CountSignatureLocked(&agree);
    if (agree || before == unresolved_mismatch_) return;
    why = "card count out of sync (" + before + ")";
  }
  const Status st = ReinitLocked(why);
  // A failed re-init leaves the library down; the next poll tries again
  // (until Shutdown), instead of staying down for good.
  reinit_failed_ = !st.ok();
  if (!st.ok()) {
    LOG(ERROR) << "re-initialisation failed: " << st.message();
    return;
  }
  const std::string after = CountSignatureLocked(&agree);
  unresolved_mismatch_ = agree ? std::string() : after;
  if (!agree) LOG(WARNING) << "card counts still disagree after re-initialising (" << after << ")";
}

CardMap DlopenVendorLib::card_map() const {
  ReaderLock lock(mu_);
  return card_map_;
}

StatusOr<std::string> DlopenVendorLib::DriverVersion() {
  StatusOr<std::string> from_module = DriverModuleVersion(fs_);
  if (from_module.ok()) return from_module;
  ReaderLock lock(mu_);
  if (initialized_ && api_->rsmi.version_str_get != nullptr) {
    char buf[256] = {};
    if (api_->rsmi.version_str_get(0 /* RSMI_SW_COMP_DRIVER */, buf, sizeof(buf)) ==
            RSMI_STATUS_SUCCESS &&
        buf[0] != '\0') {
      return std::string(buf, strnlen(buf, sizeof(buf)));
    }
  }
  return from_module.status();
}

StatusOr<bool> DlopenVendorLib::DriverLive() { return DriverModuleLive(fs_); }

}  // namespace vendor
}  // namespace hcudp
