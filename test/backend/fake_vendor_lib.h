// FakeVendorLib: a VendorLib with fixed, editable answers, for tests of code
// above the vendor seam (HostBackend, health, vHCU lifecycle). Set the public
// fields before handing it over; calls are recorded in `calls`.
//
// Thread-safety: calls are recorded under `mu`; the answers are read without
// locking, so set them before calling in from several threads.
#ifndef HCUDP_TEST_BACKEND_FAKE_VENDOR_LIB_H_
#define HCUDP_TEST_BACKEND_FAKE_VENDOR_LIB_H_

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "hcudp/vendor_lib.h"

namespace hcudp::testing {

struct FakeCard {
  std::string bdf = "0000:09:00.0";
  std::string dmi_name = "K100_AI";  // raw DMI name, may carry ",suffix"
  std::string serial = "T6T8290019020401";
  uint16_t pci_device_id = 0x6210;
  int compute_units = 120;
  uint64_t memory_bytes = 65520 * kMiB;
  int numa_node = 0;
  uint64_t unique_id = 0;
};

class FakeVendorLib : public VendorLib {
 public:
  // --- answers ---
  std::vector<FakeCard> cards;
  std::set<int> failing_cards;  // every per-card query fails for these
  Status card_count_error;      // non-OK: CardCount fails
  std::string driver_version = "6.3.27-V1.2.5";
  bool mig_enabled = false;
  bool mig_mode_fails = false;                    // MigEnabled() answers Unavailable
  std::map<std::pair<int, int>, RsmiLink> links;  // unlisted pairs: PCIE, hops 2, weight 40
  std::map<int, DmiDeviceInfo> vhcus;             // VhcuInfo answers; others NotFound
  bool vhcu_info_unavailable = false;             // VhcuInfo fails with Unavailable
  Status health_error;                            // non-OK: QueryHealth fails
  std::vector<CardHealthReport> health;           // when empty: every card Healthy
  // vHCU lifecycle results and side effects.
  std::function<Status(int card, int cus, uint64_t mib)> on_create;
  int created_id = -1;  // what CreateVhcu reports as the vHCU it made (-1: none)
  Status stop_result;
  Status destroy_result;
  std::vector<std::string> watch_paths;

  // --- record ---
  std::vector<std::string> calls;  // "Init", "CreateVhcu 2 15 8188", "StopVhcu 3", ...
  int shutdowns = 0;
  mutable std::mutex mu;

  Status Init() override {
    Record("Init");
    return OkStatus();
  }
  void Shutdown() override {
    std::lock_guard<std::mutex> lock(mu);
    ++shutdowns;
  }
  StatusOr<std::string> DriverVersion() override { return driver_version; }
  StatusOr<bool> DriverLive() override { return true; }

  StatusOr<int> CardCount() override {
    if (!card_count_error.ok()) return card_count_error;
    return static_cast<int>(cards.size());
  }
  StatusOr<std::string> PciBdf(int card) override {
    HCUDP_ASSIGN_OR_RETURN(const FakeCard* c, Find(card));
    return c->bdf;
  }
  StatusOr<std::string> Serial(int card) override {
    HCUDP_ASSIGN_OR_RETURN(const FakeCard* c, Find(card));
    return c->serial;
  }
  StatusOr<uint64_t> UniqueId(int card) override {
    HCUDP_ASSIGN_OR_RETURN(const FakeCard* c, Find(card));
    return c->unique_id;
  }
  StatusOr<uint16_t> PciDeviceId(int card) override {
    HCUDP_ASSIGN_OR_RETURN(const FakeCard* c, Find(card));
    return c->pci_device_id;
  }
  StatusOr<uint64_t> MemoryTotalBytes(int card) override {
    HCUDP_ASSIGN_OR_RETURN(const FakeCard* c, Find(card));
    return c->memory_bytes;
  }
  StatusOr<int> NumaNode(int card) override {
    HCUDP_ASSIGN_OR_RETURN(const FakeCard* c, Find(card));
    return c->numa_node;
  }
  StatusOr<RsmiLink> LinkBetween(int src, int dst) override {
    HCUDP_RETURN_IF_ERROR(Find(src).status());
    HCUDP_RETURN_IF_ERROR(Find(dst).status());
    auto it = links.find({src, dst});
    if (it != links.end()) return it->second;
    RsmiLink pcie;
    pcie.type = LinkType::kPcie;
    pcie.hops = 2;
    pcie.weight = 40;
    return pcie;
  }

  StatusOr<DmiDeviceInfo> DeviceInfo(int card) override {
    HCUDP_ASSIGN_OR_RETURN(const FakeCard* c, Find(card));
    DmiDeviceInfo info;
    info.name = c->dmi_name;
    info.compute_units = c->compute_units;
    info.global_memory_bytes = c->memory_bytes;
    return info;
  }
  StatusOr<int> MaxVhcusPerCard() override { return 4; }
  StatusOr<DmiDeviceInfo> VhcuInfo(int vhcu_id) override {
    if (vhcu_info_unavailable) return UnavailableError("fake: DMI busy");
    auto it = vhcus.find(vhcu_id);
    if (it == vhcus.end()) return NotFoundError("fake: no vHCU " + std::to_string(vhcu_id));
    return it->second;
  }
  StatusOr<DmiRemaining> Remaining(int card) override {
    HCUDP_RETURN_IF_ERROR(Find(card).status());
    return DmiRemaining{};
  }
  using VendorLib::CreateVhcu;
  Status CreateVhcu(int card, int compute_units, uint64_t memory_mib, int* id) override {
    Record("CreateVhcu " + std::to_string(card) + " " + std::to_string(compute_units) + " " +
           std::to_string(memory_mib));
    Status st = on_create ? on_create(card, compute_units, memory_mib) : OkStatus();
    if (st.ok() && id != nullptr) *id = created_id;
    return st;
  }
  Status StopVhcu(int vhcu_id) override {
    Record("StopVhcu " + std::to_string(vhcu_id));
    return stop_result;
  }
  Status DestroyVhcu(int vhcu_id) override {
    Record("DestroyVhcu " + std::to_string(vhcu_id));
    return destroy_result;
  }

  StatusOr<bool> MigEnabled() override {
    if (mig_mode_fails) return UnavailableError("nvmlGetSystemMigMode: UNKNOWN");
    return mig_enabled;
  }

  StatusOr<std::vector<CardHealthReport>> QueryHealth() override {
    if (!health_error.ok()) return health_error;
    if (!health.empty()) return health;
    std::vector<CardHealthReport> all;
    for (const FakeCard& c : cards) all.push_back({c.bdf, Health::kHealthy, ""});
    return all;
  }

  std::vector<std::string> WatchPaths() const override { return watch_paths; }

 private:
  StatusOr<const FakeCard*> Find(int card) const {
    if (failing_cards.count(card) != 0) {
      return InternalError("fake: card " + std::to_string(card) + " does not answer");
    }
    if (card < 0 || card >= static_cast<int>(cards.size())) {
      return InvalidArgumentError("fake: no card " + std::to_string(card));
    }
    return &cards[card];
  }
  void Record(std::string call) {
    std::lock_guard<std::mutex> lock(mu);
    calls.push_back(std::move(call));
  }
};

}  // namespace hcudp::testing

#endif  // HCUDP_TEST_BACKEND_FAKE_VENDOR_LIB_H_
