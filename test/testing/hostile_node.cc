#include "testing/hostile_node.h"

#include <boost/test/unit_test.hpp>
#include <utility>
#include <vector>

#include "hcudp/sim_node.h"
#include "testing/testutil.h"

namespace hcudp::testing {
namespace {

class FaultyVendorLib final : public VendorLib {
 public:
  FaultyVendorLib(std::unique_ptr<VendorLib> inner, std::shared_ptr<CardFaults> faults)
      : inner_(std::move(inner)), faults_(std::move(faults)) {}

  Status Init() override { return inner_->Init(); }
  void Shutdown() override { inner_->Shutdown(); }
  StatusOr<std::string> DriverVersion() override { return inner_->DriverVersion(); }
  StatusOr<bool> DriverLive() override { return inner_->DriverLive(); }
  StatusOr<int> CardCount() override { return inner_->CardCount(); }
  StatusOr<std::string> PciBdf(int card) override {
    if (faults_->Failing(card)) return Injected(card);
    return inner_->PciBdf(card);
  }
  StatusOr<std::string> Serial(int card) override {
    if (faults_->Failing(card)) return Injected(card);
    return inner_->Serial(card);
  }
  StatusOr<uint64_t> UniqueId(int card) override {
    if (faults_->Failing(card)) return Injected(card);
    return inner_->UniqueId(card);
  }
  StatusOr<uint16_t> PciDeviceId(int card) override {
    if (faults_->Failing(card)) return Injected(card);
    return inner_->PciDeviceId(card);
  }
  StatusOr<uint64_t> MemoryTotalBytes(int card) override {
    if (faults_->Failing(card)) return Injected(card);
    return inner_->MemoryTotalBytes(card);
  }
  StatusOr<int> NumaNode(int card) override {
    if (faults_->Failing(card)) return Injected(card);
    return inner_->NumaNode(card);
  }
  StatusOr<RsmiLink> LinkBetween(int src, int dst) override {
    if (faults_->Failing(src)) return Injected(src);
    if (faults_->Failing(dst)) return Injected(dst);
    return inner_->LinkBetween(src, dst);
  }
  StatusOr<DmiDeviceInfo> DeviceInfo(int card) override {
    if (faults_->Failing(card)) return Injected(card);
    return inner_->DeviceInfo(card);
  }
  StatusOr<int> MaxVhcusPerCard() override { return inner_->MaxVhcusPerCard(); }
  StatusOr<DmiDeviceInfo> VhcuInfo(int vhcu_id) override { return inner_->VhcuInfo(vhcu_id); }
  StatusOr<DmiRemaining> Remaining(int card) override {
    if (faults_->Failing(card)) return Injected(card);
    return inner_->Remaining(card);
  }
  Status CreateVhcu(int card, int compute_units, uint64_t memory_mib, int* created_id) override {
    if (faults_->Failing(card)) return Injected(card);
    return inner_->CreateVhcu(card, compute_units, memory_mib, created_id);
  }
  Status StopVhcu(int vhcu_id) override { return inner_->StopVhcu(vhcu_id); }
  Status DestroyVhcu(int vhcu_id) override { return inner_->DestroyVhcu(vhcu_id); }
  StatusOr<bool> MigEnabled() override { return inner_->MigEnabled(); }
  StatusOr<std::vector<CardHealthReport>> QueryHealth() override { return inner_->QueryHealth(); }
  std::vector<std::string> WatchPaths() const override { return inner_->WatchPaths(); }
  Status RestartRequired() const override { return inner_->RestartRequired(); }

 private:
  static Status Injected(int card) {
    return UnavailableError("test: injected query failure on card " + std::to_string(card));
  }
  const std::unique_ptr<VendorLib> inner_;
  const std::shared_ptr<CardFaults> faults_;
};

}  // namespace

void CardFaults::Fail(int card) {
  std::lock_guard<std::mutex> lock(mu_);
  failing_.insert(card);
}

void CardFaults::Heal(int card) {
  std::lock_guard<std::mutex> lock(mu_);
  failing_.erase(card);
}

bool CardFaults::Failing(int card) const {
  std::lock_guard<std::mutex> lock(mu_);
  return failing_.count(card) != 0;
}

std::unique_ptr<VendorLib> WithCardFaults(std::unique_ptr<VendorLib> inner,
                                          std::shared_ptr<CardFaults> faults) {
  return std::make_unique<FaultyVendorLib>(std::move(inner), std::move(faults));
}

std::unique_ptr<Backend> NewFaultySimBackend(const std::string& sim_node_path,
                                             const std::string& host_root,
                                             std::shared_ptr<CardFaults> faults) {
  auto sim = NewSimVendorLib(sim_node_path, host_root);
  BOOST_REQUIRE_MESSAGE(sim.ok(), sim.status().ToString());
  std::unique_ptr<VendorLib> lib = WithCardFaults(std::move(sim).value(), std::move(faults));
  Status init = lib->Init();
  BOOST_REQUIRE_MESSAGE(init.ok(), init.ToString());
  HostBackendOptions options;
  options.host_root = host_root;
  return NewHostBackend(options, std::move(lib));
}

std::string TearVhcuConf(const std::string& host_root, int vhcu_id, Tear how) {
  const std::string path = host_root + "/etc/vdev/vdev" + std::to_string(vhcu_id) + ".conf";
  BOOST_REQUIRE_MESSAGE(PathExists(path), path << " does not exist");
  const std::string text = ReadFile(path);
  WriteFile(path, how == Tear::kEmpty ? std::string() : text.substr(0, text.size() / 2));
  return text;
}

}  // namespace hcudp::testing
