// A simulated node (HostBackend + SimVendorLib over a temp host root) with a
// VhcuManager, a claim store standing in for the API server, a test
// allocator, and a Preparer over all of it. The fake API server
// (test/fake_apiserver) has no resource.k8s.io yet, so claims are served by
// FakeClaims: a test double of the GET (ClaimFetcher) that answers like the
// API (the object, 404 NotFound once deleted, Unavailable when "down").
#ifndef HCUDP_TEST_DRA_PREPARE_PREPARE_FIXTURE_H_
#define HCUDP_TEST_DRA_PREPARE_PREPARE_FIXTURE_H_

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "dra_prepare/dra_allocator.h"
#include "hcudp/backend.h"
#include "hcudp/dra/preparer.h"
#include "hcudp/options.h"
#include "hcudp/vhcu_manager.h"
#include "testing/hostile_node.h"
#include "testing/sim_clock.h"
#include "testing/testutil.h"

namespace hcudp::testing {

class FakeClaims {
 public:
  void Put(const std::string& json);  // by metadata.uid; replaces
  void Delete(const std::string& uid);
  std::atomic<bool> down{false};
  std::atomic<int> gets{0};
  dra::ClaimFetcher Fetcher();

 private:
  std::mutex mu_;
  std::map<std::string, std::string> by_name_;  // ns/name → json
};

// A claim request: one request named `request` with optional capacity.
std::string ClaimJson(const std::string& uid, const std::string& name,
                      const std::string& requests_json, const std::string& constraints = "");
std::string ExactRequest(const std::string& name, const std::string& capacity = "", int count = 1);

class SimDraNode {
 public:
  explicit SimDraNode(const std::string& node_yaml, std::string root = "");

  // A fresh backend, manager and preparer over the same host root: what a
  // restarted daemon sees.
  // `vhcu_crash_after`: VhcuManagerOptions::crash_after of the new manager.
  void Restart(dra::PreparerOptions options = {},
               std::function<bool(VhcuCreateStep)> vhcu_crash_after = nullptr);

  // A new preparer (same backend and manager) whose GETs go to `fetch`.
  void UseFetcher(dra::ClaimFetcher fetch);

  std::string Root() const { return root_; }
  std::string Path(const std::string& host_path) const { return root_ + host_path; }
  // The devices of the node as the allocator sees them (cards, pre-split
  // vHCUs, MIG instances) with attributes "island" and "type".
  std::vector<AllocatorDevice> AllocatorDevices();
  // Allocates `claim_json` for `pod_uid`, stores it, returns the ref.
  dra::ClaimRef AllocateAndStore(const std::string& claim_json, const std::string& pod_uid);
  NodeInventory Inventory();
  std::vector<std::string> Files(const std::string& host_dir);

  testing::TempDir* dir = nullptr;
  SimClock clock;
  FakeClaims claims;
  // Cards whose vendor queries fail, for every backend Restart makes.
  std::shared_ptr<CardFaults> faults = std::make_shared<CardFaults>();
  std::unique_ptr<Backend> backend;
  std::unique_ptr<VhcuManager> manager;
  std::unique_ptr<dra::Preparer> preparer;
  std::unique_ptr<DraAllocator> allocator;

 private:
  std::unique_ptr<testing::TempDir> owned_;
  std::string root_;
  std::string node_yaml_;
};

// A prepared claim as the checkpoint records it: ns1/small (UID 9a1e-01,
// pod-1), one 30-CU/8 GiB vHCU (vdev4) on card 0 (0000:09:00.0), request
// "hcu". For tests of the checkpoint and of what shows it.
dra::PreparedClaim SamplePreparedClaim();

// Validates a CDI spec file with test/cdi/validate_cdi.py; "" when valid.
std::string CdiSchemaErrors(const std::string& file);

}  // namespace hcudp::testing

#endif  // HCUDP_TEST_DRA_PREPARE_PREPARE_FIXTURE_H_
