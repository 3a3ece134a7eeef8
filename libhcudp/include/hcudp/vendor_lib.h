// VendorLib: the questions the plugin asks the vendor's management libraries
// (librocm_smi64 "RSMI" and libhydmi "DMI"; reference/hcu-hardware.md §1.7),
// as one narrow interface. Two implementations ship: DlopenVendorLib (the real
// libraries, loaded at run time) and SimVendorLib (answers from a SimNode).
//
// Indices: `card` is the RSMI index; implementations must keep RSMI and DMI
// indices in agreement (DlopenVendorLib verifies by PCI BDF).
//
// Thread-safety: implementations are safe to call from several threads; the
// real libraries are serialised inside the implementation.
#ifndef HCUDP_VENDOR_LIB_H_
#define HCUDP_VENDOR_LIB_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "hcudp/device.h"
#include "hcudp/export.h"
#include "hcudp/status.h"

namespace hcudp {

// dmiGetDeviceInfo / dmiGetVDeviceInfo.
struct DmiDeviceInfo {
  std::string name;  // raw DMI name (may carry ",suffix")
  int compute_units = 0;
  uint64_t global_memory_bytes = 0;
  uint64_t used_memory_bytes = 0;
  uint64_t container_id = 0;  // vHCU only
  int parent_card = 0;        // the card's RSMI index (-1: unknown)
  std::string parent_bdf;     // the card's PCI BDF when the library knows it
};

// dmiGetDeviceRemainingInfo.
struct DmiRemaining {
  int compute_units = 0;
  uint64_t memory_bytes = 0;
};

// rsmi_topo_get_link_type (+ weight, is_hylink and XHCL links).
struct RsmiLink {
  LinkType type = LinkType::kPcie;
  int hops = 0;
  int weight = 0;
  int up_links = 0;  // HSL: up XHCL links of src whose remote BDF is dst
};

// One card's health verdict from the health source (hy-smi, ECC, presence).
struct CardHealthReport {
  std::string bdf;
  Health health = Health::kHealthy;
  std::string reason;  // why unhealthy; empty when healthy
};

// One RSMI event notification (rsmi_evt_notification_data_t).
struct VendorEvent {
  int card = -1;      // RSMI index
  uint32_t type = 0;  // rsmi_evt_notification_type_t: 1 VM fault, 2 thermal throttle, 3/4 reset
  std::string message;
};

class HCUDP_EXPORT VendorLib {
 public:
  virtual ~VendorLib();

  // rsmi_init(0). Must succeed before other calls. Balanced by Shutdown().
  virtual Status Init() = 0;
  virtual void Shutdown() = 0;

  // Driver version string, e.g. "6.3.27-V1.2.5".
  virtual StatusOr<std::string> DriverVersion() = 0;
  // True when the kernel module reports "live".
  virtual StatusOr<bool> DriverLive() = 0;

  // --- RSMI ---
  virtual StatusOr<int> CardCount() = 0;                      // rsmi_num_monitor_devices
  virtual StatusOr<std::string> PciBdf(int card) = 0;         // rsmi_dev_pci_id_get, formatted
  virtual StatusOr<std::string> Serial(int card) = 0;         // rsmi_dev_serial_number_get
  virtual StatusOr<uint64_t> UniqueId(int card) = 0;          // rsmi_dev_unique_id_get
  virtual StatusOr<uint16_t> PciDeviceId(int card) = 0;       // rsmi_dev_id_get
  virtual StatusOr<uint64_t> MemoryTotalBytes(int card) = 0;  // rsmi_dev_memory_total_get(VRAM)
  // rsmi_topo_get_numa_node_number; kNoNumaNode when the node has none.
  virtual StatusOr<int> NumaNode(int card) = 0;
  virtual StatusOr<RsmiLink> LinkBetween(int src, int dst) = 0;

  // --- DMI ---
  virtual StatusOr<DmiDeviceInfo> DeviceInfo(int card) = 0;  // dmiGetDeviceInfo
  virtual StatusOr<int> MaxVhcusPerCard() = 0;               // dmiGetMaxVDeviceCount
  // dmiGetVDeviceInfo; NotFound for a free id (VDEV_NOT_EXIST).
  virtual StatusOr<DmiDeviceInfo> VhcuInfo(int vhcu_id) = 0;
  virtual StatusOr<DmiRemaining> Remaining(int card) = 0;  // dmiGetDeviceRemainingInfo
  // dmiCreateVDevices(card, 1, &cus, &mem_mib): the new vHCU shows up as
  // /etc/vdev/vdev<N>.conf. On success `*created_id` (when non-null) is the
  // N of the vHCU this call made — never merely "a new conf that appeared":
  // the driver returns no id, so an implementation that must look at the
  // confs accepts only a new one of this card (by PciBusId) and exactly this
  // size, and fails (Aborted) when several could be it.
  virtual Status CreateVhcu(int card, int compute_units, uint64_t memory_mib, int* created_id) = 0;
  Status CreateVhcu(int card, int compute_units, uint64_t memory_mib) {
    return CreateVhcu(card, compute_units, memory_mib, nullptr);
  }
  virtual Status StopVhcu(int vhcu_id) = 0;  // dmiStopVDevice
  // dmiDestroySingleVDevice; Unavailable for DEVICE_BUSY (retry later).
  virtual Status DestroyVhcu(int vhcu_id) = 0;

  // --- MIG ---
  virtual StatusOr<bool> MigEnabled() = 0;  // nvmlGetSystemMigMode

  // --- Health ---
  // A verdict per card the health source knows about. An error means the
  // query itself failed: callers keep the previous health.
  virtual StatusOr<std::vector<CardHealthReport>> QueryHealth() = 0;

  // Absolute paths whose change means this library's answers may have
  // changed (the sim's SimNode file). Default: none.
  virtual std::vector<std::string> WatchPaths() const { return {}; }

  // Not OK once only a restart of the process recovers the library (see
  // Backend::RestartRequired). Default: never.
  virtual Status RestartRequired() const { return OkStatus(); }

  // --- Events (rsmi_event_notification_*) ---
  // init + mask_set on every card for the event types in `mask` (bit
  // 1 << (type - 1)). Unimplemented when the library has no event
  // notification. Default: Unimplemented.
  virtual Status OpenEvents(uint64_t mask);
  // Waits up to `timeout` for events (rsmi_event_notification_get); an empty
  // list when none came. Only after OpenEvents succeeded.
  virtual StatusOr<std::vector<VendorEvent>> WaitEvents(std::chrono::milliseconds timeout);
  // rsmi_event_notification_stop on every card opened. Idempotent.
  virtual void CloseEvents() {}
};

}  // namespace hcudp

#endif  // HCUDP_VENDOR_LIB_H_
