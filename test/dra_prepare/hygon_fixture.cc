#include "dra_prepare/hygon_fixture.h"

#include <boost/test/unit_test.hpp>
#include <map>

#include "hcudp/dra/claim.h"
#include "hcudp/dra/preparer.h"
#include "testing/testutil.h"

namespace hcudp::testing {
namespace {

// Hygon's per-device edits, in its YAML layout (only what a reader of the
// file looks at: the names; the content is never parsed by the daemon).
std::string SpecYaml(const std::string& kind, const std::vector<std::string>& names) {
  std::string out = "---\ncdiVersion: 0.5.0\nkind: " + kind + "\ndevices:\n";
  for (const std::string& n : names) {
    out += "- name: " + n +
           "\n  containerEdits:\n    env:\n    - HCU_VISIBLE_DEVICES=void\n"
           "    deviceNodes:\n    - path: /dev/kfd\n    - path: /dev/mem\n";
  }
  return out;
}

}  // namespace

HygonDriverNode::HygonDriverNode(std::string host_root, std::string cdi_dir)
    : root_(std::move(host_root)), cdi_dir_(std::move(cdi_dir)) {}

std::string HygonDriverNode::CdiPath(const std::string& file) const {
  return root_ + cdi_dir_ + "/" + file;
}

std::string HygonDriverNode::StatePath() const {
  return CdiPath("hcu-dra-driver-prepared-state.state");
}

std::string HygonDriverNode::VhcuSpecFile(int vhcu_id) const {
  return "hcu-dra-driver-vdevice-vdev" + std::to_string(vhcu_id) + ".yaml";
}

std::vector<HygonDriverNode::Device> HygonDriverNode::Prepare(Backend& backend,
                                                              const std::string& claim_json) {
  auto claim = dra::ParseResourceClaim(claim_json, "dra.hygon.com");
  BOOST_REQUIRE_MESSAGE(claim.ok(), claim.status().ToString());
  auto inventory = backend.Discover();
  BOOST_REQUIRE(inventory.ok());
  std::vector<Device> made;
  for (const dra::AllocatedDevice& r : claim->results) {
    auto target = dra::ResolveDevice(*inventory, r.device);
    BOOST_REQUIRE_MESSAGE(target.ok(), target.status().ToString());
    const Card* card = inventory->FindCard(target->card);
    BOOST_REQUIRE(card != nullptr);
    const dra::CapacityAmounts& amounts = r.requested;  // Hygon's: the claim spec's
    Device d;
    d.claim_uid = claim->uid;
    d.request = r.request;
    d.device = r.device;
    d.card = card->index;
    d.whole_card = amounts.empty();
    const std::string pod = claim->pod_uid.empty() ? claim->uid : claim->pod_uid;
    const std::string container = claim->pod_uid.empty() ? "dra" : "main";
    if (d.whole_card) {
      d.cdi_id = "dra.hygon.com/hcu=HCU-" + card->serial;
    } else {
      const int cores = static_cast<int>(amounts.cores.value_or(card->compute_units));
      const uint64_t mib = amounts.memory_bytes
                               ? static_cast<uint64_t>(*amounts.memory_bytes) / hcudp::kMiB
                               : card->memory_mib();
      auto vhcu = backend.CreateVhcu(card->index, cores, mib);
      BOOST_REQUIRE_MESSAGE(vhcu.ok(), vhcu.status().ToString());
      d.vhcu_id = vhcu->id;
      d.cdi_id = "dra.hygon.com/vhcu=vdev" + std::to_string(vhcu->id);
    }
    d.mark = pod + "_" + container + "_" + std::to_string(d.card) + "_" +
             std::to_string(d.whole_card ? -1 : d.vhcu_id);
    WriteFile(root_ + "/etc/vdev/dynamic/" + d.mark, "2026-12-04 10:00:00");
    devices_.push_back(d);
    made.push_back(d);
  }
  auto now = backend.Discover();
  BOOST_REQUIRE(now.ok());
  Write(*now);
  return made;
}

void HygonDriverNode::Write(const NodeInventory& inventory) {
  std::vector<std::string> cards;
  for (const Card& c : inventory.cards) cards.push_back("HCU-" + c.serial);
  WriteFile(CdiPath(kCardSpecFile), SpecYaml("dra.hygon.com/hcu", cards));
  std::map<std::string, std::vector<const Device*>> by_claim;
  for (const Device& d : devices_) {
    by_claim[d.claim_uid].push_back(&d);
    if (!d.whole_card) {
      WriteFile(CdiPath(VhcuSpecFile(d.vhcu_id)),
                SpecYaml("dra.hygon.com/vhcu", {"vdev" + std::to_string(d.vhcu_id)}));
    }
  }
  // Go's json.MarshalIndent of {"prepared": map[UID][]PreparedDevice}.
  std::string out = "{\n  \"prepared\": {";
  bool first_claim = true;
  for (const auto& [uid, devices] : by_claim) {
    out += std::string(first_claim ? "" : ",") + "\n    \"" + uid + "\": [";
    first_claim = false;
    for (size_t i = 0; i < devices.size(); ++i) {
      const Device& d = *devices[i];
      const std::string pod = d.mark.substr(0, d.mark.find('_'));
      const std::string cdi_name = d.cdi_id.substr(d.cdi_id.find('=') + 1);
      out += std::string(i == 0 ? "" : ",") + "\n      {\n        \"claimUID\": \"" + uid +
             "\",\n        \"parentDevice\": \"" + d.device + "\",\n        \"requestName\": \"" +
             d.request + "\",\n        \"poolName\": \"node-a\",\n        \"wholeCard\": " +
             (d.whole_card ? "true" : "false") +
             ",\n        \"vdvInd\": " + std::to_string(d.whole_card ? 0 : d.vhcu_id) +
             ",\n        \"pciBusNumber\": \"\",\n        \"cdiName\": \"" + cdi_name +
             "\",\n        \"cdiDeviceID\": \"" + d.cdi_id +
             "\",\n        \"dynamicMarkFile\": \"" + d.mark + "\",\n        \"podUID\": \"" + pod +
             "\",\n        \"containerName\": \"main\",\n        \"dvInd\": " +
             std::to_string(d.card) + "\n      }";
    }
    out += "\n    ]";
  }
  out += first_claim ? "}\n}" : "\n  }\n}";
  WriteFile(StatePath(), out);
}

}  // namespace hcudp::testing
