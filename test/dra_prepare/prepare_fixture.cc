#include "dra_prepare/prepare_fixture.h"

#include <rapidjson/document.h>

#include <boost/test/unit_test.hpp>
#include <cstdlib>

#include "hcudp_internal/file_util.h"

namespace hcudp::testing {

void FakeClaims::Put(const std::string& json) {
  rapidjson::Document doc;
  doc.Parse(json.c_str());
  std::string key = std::string(doc["metadata"]["namespace"].GetString()) + "/" +
                    doc["metadata"]["name"].GetString();
  std::lock_guard<std::mutex> lock(mu_);
  by_name_[key] = json;
}

void FakeClaims::Delete(const std::string& uid) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = by_name_.begin(); it != by_name_.end(); ++it) {
    if (it->second.find("\"uid\":\"" + uid + "\"") != std::string::npos) {
      by_name_.erase(it);
      return;
    }
  }
}

dra::ClaimFetcher FakeClaims::Fetcher() {
  return
      [this](const dra::ClaimRef& ref, std::optional<Clock::TimePoint>) -> StatusOr<std::string> {
        ++gets;
        if (down) return UnavailableError("connection refused");
        std::lock_guard<std::mutex> lock(mu_);
        auto it = by_name_.find(ref.namespace_name + "/" + ref.name);
        if (it == by_name_.end()) {
          return NotFoundError("resourceclaims.resource.k8s.io \"" + ref.name + "\" not found");
        }
        return it->second;
      };
}

std::string ExactRequest(const std::string& name, const std::string& capacity, int count) {
  std::string r =
      "{\"name\":\"" + name +
      "\",\"exactly\":{\"deviceClassName\":\"dra.hygon.com\",\"count\":" + std::to_string(count);
  if (!capacity.empty()) r += ",\"capacity\":{\"requests\":" + capacity + "}";
  return r + "}}";
}

std::string ClaimJson(const std::string& uid, const std::string& name,
                      const std::string& requests_json, const std::string& constraints) {
  std::string c = constraints.empty() ? "" : ",\"constraints\":" + constraints;
  return "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\",\"metadata\":{"
         "\"namespace\":\"ns1\",\"name\":\"" +
         name + "\",\"uid\":\"" + uid + "\"},\"spec\":{\"devices\":{\"requests\":" + requests_json +
         c + "}}}";
}

SimDraNode::SimDraNode(const std::string& node_yaml, std::string root) : node_yaml_(node_yaml) {
  if (root.empty()) {
    owned_ = std::make_unique<testing::TempDir>();
    dir = owned_.get();
    root = owned_->path();
  }
  root_ = root;
  testing::WriteFile(root_ + "/proc/sys/kernel/random/boot_id",
                     "0c7e0000-0000-4000-8000-000000000001\n");
  Restart();
  std::vector<AllocatorDevice> devices = AllocatorDevices();
  allocator = std::make_unique<DraAllocator>("dra.hygon.com", "node-a", devices);
}

void SimDraNode::Restart(dra::PreparerOptions options,
                         std::function<bool(VhcuCreateStep)> vhcu_crash_after) {
  preparer.reset();
  manager.reset();
  backend.reset();
  // The sim behind the per-card query-failure switch (testing/hostile_node.h).
  backend = NewFaultySimBackend(SourcePath("demo/nodes/" + node_yaml_), root_, faults);
  VhcuManagerOptions mo;
  mo.host_root = root_;
  mo.fresh_mark_grace = std::chrono::milliseconds(0);
  mo.crash_after = std::move(vhcu_crash_after);
  manager = std::make_unique<VhcuManager>(backend.get(), mo, clock);
  options.host_root = root_;
  options.pool_name = "node-a";
  preparer = std::make_unique<dra::Preparer>(backend.get(), manager.get(), claims.Fetcher(),
                                             options, clock);
}

void SimDraNode::UseFetcher(dra::ClaimFetcher fetch) {
  preparer.reset();
  dra::PreparerOptions options;
  options.host_root = root_;
  options.pool_name = "node-a";
  preparer = std::make_unique<dra::Preparer>(backend.get(), manager.get(), std::move(fetch),
                                             options, clock);
}

NodeInventory SimDraNode::Inventory() {
  auto inv = backend->Discover();
  BOOST_REQUIRE_MESSAGE(inv.ok(), inv.status().ToString());
  return *inv;
}

std::vector<AllocatorDevice> SimDraNode::AllocatorDevices() {
  NodeInventory inv = Inventory();
  std::vector<AllocatorDevice> out;
  for (const Card& c : inv.cards) {
    if (inv.VhcuCount(c.index) > 0) continue;  // a card carrying vHCUs is not offered whole
    bool has_mig = false;
    for (const auto& m : inv.mig_instances) has_mig |= m.card == c.index;
    if (has_mig) continue;
    out.push_back({dra::CardDeviceName(c),
                   {{"type", "hcu"}, {"island", std::to_string(c.index / 2)}},
                   c.compute_units,
                   static_cast<int64_t>(c.memory_bytes),
                   true,
                   4});  // slices: maxVhcusPerCard of the shipped nodes
  }
  for (const Vhcu& v : inv.vhcus) {
    out.push_back({dra::VhcuDeviceName(v),
                   {{"type", "vhcu"}},
                   v.compute_units,
                   static_cast<int64_t>(v.memory_bytes()),
                   false});
  }
  for (const MigInstance& m : inv.mig_instances) {
    out.push_back({dra::MigDeviceName(m),
                   {{"type", "mig"}},
                   m.compute_units,
                   static_cast<int64_t>(m.memory_mib * kMiB),
                   false});
  }
  return out;
}

dra::ClaimRef SimDraNode::AllocateAndStore(const std::string& claim_json,
                                           const std::string& pod_uid) {
  auto allocated = allocator->Allocate(claim_json, pod_uid);
  BOOST_REQUIRE_MESSAGE(allocated.ok(), allocated.status().ToString());
  claims.Put(*allocated);
  auto parsed = dra::ParseResourceClaim(*allocated, "dra.hygon.com");
  BOOST_REQUIRE(parsed.ok());
  return {parsed->namespace_name, parsed->name, parsed->uid};
}

std::vector<std::string> SimDraNode::Files(const std::string& host_dir) {
  auto names = file_util::ListFileNames(root_ + host_dir);
  BOOST_REQUIRE(names.ok());
  return *names;
}

dra::PreparedClaim SamplePreparedClaim() {
  dra::PreparedClaim c;
  c.uid = "9a1e-01";
  c.namespace_name = "ns1";
  c.name = "small";
  c.owner = "pod-1";
  c.state = dra::ClaimState::kPrepared;
  dra::PreparedDevice d;
  d.request = "hcu";
  d.pool = "node-a";
  d.device = "hcu-0000-09-00-0";
  d.kind = dra::PreparedKind::kDynamicVhcu;
  d.card = 0;
  d.card_bdf = "0000:09:00.0";
  d.vhcu_id = 4;
  d.compute_units = 30;
  d.memory_mib = 8192;
  d.cdi_ids = {"dra.hygon.com/vhcu=9a1e-01-vdev4"};
  c.devices = {d};
  return c;
}

std::string CdiSchemaErrors(const std::string& file) {
  const std::string out = file + ".validate.txt";
  std::string cmd =
      "python3 " + SourcePath("test/cdi/validate_cdi.py") + " " + file + " >" + out + " 2>&1";
  int rc = std::system(cmd.c_str());
  std::string text = ReadFile(out);
  std::remove(out.c_str());
  return rc == 0 ? "" : text;
}

}  // namespace hcudp::testing
