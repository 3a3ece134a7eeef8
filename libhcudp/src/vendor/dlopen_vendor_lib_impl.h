// DlopenVendorLib's class, internal so that tests can reach the start-up and
// index-mapping pieces. The public entry point is NewDlopenVendorLib.
//
// Locking: `mu_` is a writer-preferring reader/writer lock (RwMutex). Every call into the vendor
// libraries holds it shared; Init, Shutdown and the re-initialisation after a count mismatch hold
// it exclusive, so no query ever runs against a library that is being shut down or re-initialised.
#ifndef HCUDP_VENDOR_DLOPEN_VENDOR_LIB_IMPL_H_
#define HCUDP_VENDOR_DLOPEN_VENDOR_LIB_IMPL_H_

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <shared_mutex>
#include <string>
#include <vector>

#include "hcudp/dlopen_vendor_lib.h"
#include "hcudp/vendor_lib.h"
#include "vendor/node_files.h"
#include "vendor/rw_mutex.h"
#include "vendor/vendor_api.h"

namespace hcudp::vendor {

// What Init learned about the cards: RSMI order, BDFs and where each card
// sits in DMI's index space.
struct CardMap {
  std::vector<std::string> bdfs;  // by RSMI index
  std::vector<int> dmi_index;     // by RSMI index; -1: the card has no DMI index
  bool verified = false;          // false: see the logged problems
};

// Builds the RSMI→DMI index map. DMI has no BDF query; libhydmi numbers the
// cards in KFD topology order (reference/hcu-hardware.md §1.9), so a card's
// DMI index is the position of its BDF among `kfd_bdfs` (ReadKfdGpuBdfs).
// Only when the topology cannot be read is identity assumed. Also checked,
// as warnings that leave `verified` false: the counts agree; every RSMI BDF
// is distinct and, when the PCI scan is available, an HCU function there
// with the PCI device id RSMI reports; where the vendor's device-id table
// knows the model, the DMI name at the mapped index names the same model.
// A card whose BDF the topology does not list gets -1 (no DMI calls).
struct CardFacts {
  std::string bdf;
  uint16_t rsmi_device_id = 0;
};
CardMap BuildCardMap(const std::vector<CardFacts>& rsmi_cards,
                     const StatusOr<std::vector<std::string>>& kfd_bdfs,
                     const std::vector<std::string>& dmi_names_in_dmi_order,
                     const std::vector<PciHcu>* pci_scan, std::string* problems);

class DlopenVendorLib final : public VendorLib {
 public:
  DlopenVendorLib(DlopenVendorLibOptions options, std::unique_ptr<VendorApi> api);
  ~DlopenVendorLib() override;

  Status Init() override;
  void Shutdown() override;
  StatusOr<std::string> DriverVersion() override;
  StatusOr<bool> DriverLive() override;

  StatusOr<int> CardCount() override;
  StatusOr<std::string> PciBdf(int card) override;
  StatusOr<std::string> Serial(int card) override;
  StatusOr<uint64_t> UniqueId(int card) override;
  StatusOr<uint16_t> PciDeviceId(int card) override;
  StatusOr<uint64_t> MemoryTotalBytes(int card) override;
  StatusOr<int> NumaNode(int card) override;
  StatusOr<RsmiLink> LinkBetween(int src, int dst) override;

  StatusOr<DmiDeviceInfo> DeviceInfo(int card) override;
  StatusOr<int> MaxVhcusPerCard() override;
  StatusOr<DmiDeviceInfo> VhcuInfo(int vhcu_id) override;
  StatusOr<DmiRemaining> Remaining(int card) override;
  using VendorLib::CreateVhcu;
  Status CreateVhcu(int card, int compute_units, uint64_t memory_mib, int* created_id) override;
  Status StopVhcu(int vhcu_id) override;
  Status DestroyVhcu(int vhcu_id) override;

  StatusOr<bool> MigEnabled() override;
  StatusOr<std::vector<CardHealthReport>> QueryHealth() override;
  // rsmi_event_notification_* (dlopen_vendor_lib_events.cc).
  Status OpenEvents(uint64_t mask) override;
  StatusOr<std::vector<VendorEvent>> WaitEvents(std::chrono::milliseconds timeout) override;
  void CloseEvents() override;

  // The current RSMI→DMI map (for tests and hcuctl doctor).
  CardMap card_map() const;
  // Not on VendorLib (nothing but tests asks): the sum of uncorrectable ECC
  // errors over all blocks (QueryHealth reads it), and dmiGetDeviceCount.
  StatusOr<uint64_t> UncorrectableEccCount(int card);
  StatusOr<int> DmiCardCount();

  // Not OK once DMI answered "not initialised" after a successful start:
  // libhydmi initialises once per process, so only a restart recovers.
  Status RestartRequired() const override;

 private:
  // All Locked* helpers expect mu_ held (shared suffices unless noted).
  Status CheckInitializedLocked() const HCUDP_REQUIRES_SHARED(mu_);
  Status Rsmi(rsmi_status_t code, const char* call) const;
  Status Dmi(dmiStatus code, const char* call) const;
  StatusOr<int> RsmiCountLocked() const HCUDP_REQUIRES_SHARED(mu_);
  StatusOr<int> DmiCountLocked() const HCUDP_REQUIRES_SHARED(mu_);
  StatusOr<std::string> BdfLocked(int card) const HCUDP_REQUIRES_SHARED(mu_);
  StatusOr<uint64_t> EccLocked(int card) const HCUDP_REQUIRES_SHARED(mu_);
  // Up XHCL links of `src` whose remote BDF is `dst`; 0 when unknown.
  int UpXhclLinksLocked(int src, int dst) const HCUDP_REQUIRES_SHARED(mu_);
  // The card's DMI index; an error when the map gives it none.
  StatusOr<int> DmiIndexLocked(int card) const HCUDP_REQUIRES_SHARED(mu_);
  // -1 when no card has that DMI index.
  int RsmiIndexForDmiLocked(int dmi_index) const HCUDP_REQUIRES_SHARED(mu_);
  // Dmi() that also notes "DMI is down for this process" (13 after start).
  Status DmiLocked(dmiStatus code, const char* call) const HCUDP_REQUIRES_SHARED(mu_);
  // Remembers that `card` needs a reset when `st` says so (RESET_REQUIRED).
  void NoteResetRequired(const Status& st, int card);
  // Calls `call` (which locks mu_ itself) again while it fails transiently
  // (Unavailable: busy, hymgr unreachable), backing off with mu_ released.
  // Locks the caller holds stay held while it sleeps.
  template <typename Result, typename Call>
  Result RetryTransient(const std::string& what, Call call) const;
  static const Status& StatusOf(const Status& s) { return s; }
  template <typename T>
  static const Status& StatusOf(const StatusOr<T>& s) {
    return s.status();
  }
  StatusOr<DmiDeviceInfo> DmiInfoLocked(int dmi_index, bool vhcu) const HCUDP_REQUIRES_SHARED(mu_);
  // True when dmiGetVDeviceInfo says the driver has no vHCU `vhcu_id`.
  bool VhcuUnknownLocked(int vhcu_id) const HCUDP_REQUIRES_SHARED(mu_);
  Status DestroyOnceShared(int vhcu_id);

  // Exclusive. Start-up steps.
  Status WaitForDriverLiveLocked() HCUDP_REQUIRES(mu_);
  Status RsmiInitWithRetriesLocked() HCUDP_REQUIRES(mu_);
  Status AwaitCountAgreementLocked() HCUDP_REQUIRES(mu_);
  Status RebuildCardMapLocked() HCUDP_REQUIRES(mu_);
  // Exclusive: shut down and init again (count mismatch while running).
  Status ReinitLocked(const std::string& why) HCUDP_REQUIRES(mu_);
  // Takes mu_ exclusive when the library's count disagrees with the PCI scan
  // or with the cards known from the last map.
  void ResyncIfCountsDisagree();
  // "rsmi=N pci=N known=N"; *agree when all three match (pci when scanned).
  std::string CountSignatureLocked(bool* agree) const HCUDP_REQUIRES_SHARED(mu_);

  void Sleep(int ms) const;
  // init + mask_set on every card; the cards opened go to events_open_.
  Status OpenEventsLocked(uint64_t mask) HCUDP_REQUIRES_SHARED(mu_);

  // Health: a card missing from this many hy-smi readings in a row is
  // reported missing; until then it keeps its last verdict.
  static constexpr int kMissingReadings = 3;
  // Odd hy-smi lines are logged at most this often.
  static constexpr std::chrono::seconds kSkippedLogInterval{600};
  void LogSkippedLines(const std::vector<std::string>& skipped);
  // Asks DMI about every card; RESET_REQUIRED marks it, an answer clears it.
  void ProbeResetRequired();

  const DlopenVendorLibOptions options_;
  // The node's files, under options_.host_root.
  const internal::HostFs fs_{options_.host_root};
  const std::unique_ptr<VendorApi> api_;

  // Lock order: mu_ before dmi_down_mu_ and health_mu_ (both leaves).
  mutable RwMutex mu_ HCUDP_ACQUIRED_BEFORE(dmi_down_mu_, health_mu_, events_mu_);
  bool initialized_ HCUDP_GUARDED_BY(mu_) = false;
  CardMap card_map_ HCUDP_GUARDED_BY(mu_);
  std::vector<std::string> known_bdfs_ HCUDP_GUARDED_BY(mu_);  // every BDF ever listed
  std::string unresolved_mismatch_ HCUDP_GUARDED_BY(mu_);      // a re-init did not cure it
  bool reinit_failed_ HCUDP_GUARDED_BY(mu_) = false;           // the last re-init left it down
  bool started_ HCUDP_GUARDED_BY(mu_) = false;                 // Init succeeded once

  // DMI's process-wide state, written under a shared mu_ too.
  mutable Mutex dmi_down_mu_;
  mutable std::string dmi_down_ HCUDP_GUARDED_BY(dmi_down_mu_);          // why DMI is gone for good
  std::set<std::string> reset_required_ HCUDP_GUARDED_BY(dmi_down_mu_);  // BDFs

  // Event notification: the mask asked for and the cards opened. Written
  // under a shared mu_ too (one event thread), hence a leaf lock of its own.
  Mutex events_mu_;
  uint64_t events_mask_ HCUDP_GUARDED_BY(events_mu_) = 0;
  std::vector<uint32_t> events_open_ HCUDP_GUARDED_BY(events_mu_);

  // What hy-smi said last about each card, by BDF.
  struct HySmiVerdict {
    std::string word;  // empty: never listed
    Health health = Health::kHealthy;
    int missing = 0;  // consecutive readings without the card
  };
  Mutex health_mu_;
  std::map<std::string, HySmiVerdict> hysmi_verdicts_ HCUDP_GUARDED_BY(health_mu_);
  std::chrono::steady_clock::time_point skipped_logged_at_ HCUDP_GUARDED_BY(health_mu_);
  size_t skipped_suppressed_ HCUDP_GUARDED_BY(health_mu_) = 0;
};

}  // namespace hcudp::vendor

#endif  // HCUDP_VENDOR_DLOPEN_VENDOR_LIB_IMPL_H_
