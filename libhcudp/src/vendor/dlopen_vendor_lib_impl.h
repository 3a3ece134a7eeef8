// DlopenVendorLib's class, internal so that tests can reach the start-up and
// index-mapping pieces. The public entry point is NewDlopenVendorLib.
//
// Locking: `mu_` is a writer-preferring reader/writer lock (RwMutex). Every call into the vendor
// libraries holds it shared; Init, Shutdown and the re-initialisation after a count mismatch hold
// it exclusive, so no query ever runs against a library that is being shut down or re-initialised.
#ifndef HCUDP_VENDOR_DLOPEN_VENDOR_LIB_IMPL_H_
#define HCUDP_VENDOR_DLOPEN_VENDOR_LIB_IMPL_H_

#include <memory>
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
  std::vector<int> dmi_index;     // by RSMI index
  bool verified = false;          // false: identity assumed, see log
};

// Builds the RSMI→DMI index map. DMI has no BDF query, so the mapping rests
// on what can be checked: (1) the counts agree; (2) every RSMI BDF is
// distinct and, when the PCI scan is available, is an HCU function there with
// the PCI device id RSMI reports; (3) DMI enumerates cards in PCI (BDF)
// order, as the driver's KFD topology does, so DMI index = rank of the
// card's BDF; (4) where the vendor's device-id table knows the model, the DMI
// name of that index must name the same model. A failed check is a warning
// and leaves `verified` false.
struct CardFacts {
  std::string bdf;
  uint16_t rsmi_device_id = 0;
};
CardMap BuildCardMap(const std::vector<CardFacts>& rsmi_cards,
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
  StatusOr<uint64_t> UncorrectableEccCount(int card) override;

  StatusOr<int> DmiCardCount() override;
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

  // The current RSMI→DMI map (for tests and hcuctl doctor).
  CardMap card_map() const;

 private:
  // All Locked* helpers expect mu_ held (shared suffices unless noted).
  Status CheckInitializedLocked() const;
  Status Rsmi(rsmi_status_t code, const char* call) const;
  Status Dmi(dmiStatus code, const char* call) const;
  StatusOr<int> RsmiCountLocked() const;
  StatusOr<int> DmiCountLocked() const;
  StatusOr<std::string> BdfLocked(int card) const;
  StatusOr<uint64_t> EccLocked(int card) const;
  // Up XHCL links of `src` whose remote BDF is `dst`; 0 when unknown.
  int UpXhclLinksLocked(int src, int dst) const;
  int DmiIndexLocked(int card) const;
  int RsmiIndexForDmiLocked(int dmi_index) const;
  StatusOr<DmiDeviceInfo> DmiInfoLocked(int dmi_index, bool vhcu) const;
  Status DestroyOnceShared(int vhcu_id);

  // Exclusive. Start-up steps.
  Status WaitForDriverLiveLocked();
  Status RsmiInitWithRetriesLocked();
  Status AwaitCountAgreementLocked();
  Status RebuildCardMapLocked();
  // Exclusive: shut down and init again (count mismatch while running).
  Status ReinitLocked(const std::string& why);
  // Takes mu_ exclusive when the library's count disagrees with the PCI scan
  // or with the cards known from the last map.
  void ResyncIfCountsDisagree();
  // "rsmi=N pci=N known=N"; *agree when all three match (pci when scanned).
  std::string CountSignatureLocked(bool* agree) const;

  void Sleep(int ms) const;

  const DlopenVendorLibOptions options_;
  const std::unique_ptr<VendorApi> api_;

  mutable RwMutex mu_;
  bool initialized_ = false;             // guarded by mu_
  CardMap card_map_;                     // guarded by mu_
  std::vector<std::string> known_bdfs_;  // every BDF ever listed; guarded by mu_
  std::string unresolved_mismatch_;      // signature a re-init did not cure; guarded by mu_
  bool reinit_failed_ = false;           // the last re-init left the library down; guarded by mu_
};

}  // namespace hcudp::vendor

#endif  // HCUDP_VENDOR_DLOPEN_VENDOR_LIB_IMPL_H_
