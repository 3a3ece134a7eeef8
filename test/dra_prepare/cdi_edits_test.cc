// What DRA mode's CDI specs give a container (DESIGN §4.5, §9): the
// toolkit's rule (testing/hcu_toolkit_model.h) applied to the whole-card and
// claim specs the preparer writes, and the edits kept in parity with Hygon's
// driver (the card's sysfs directory, the by-path hook), on a SimNode whose
// sysfs the real code reads.
#include <sys/stat.h>
#include <yaml-cpp/yaml.h>

#include <boost/test/unit_test.hpp>

#include "dra_prepare/prepare_fixture.h"
#include "testing/hcu_toolkit_model.h"

namespace hcudp::testing {
namespace {

constexpr char kHook[] = "/var/lib/hcu-device-plugin/bin/hcu-cdi-hook";

// The runtime's view of CDI device `name` of `spec`: its env edits (the
// spec's, then the device's), mounts' host paths and hook paths.
struct DeviceView {
  std::vector<std::pair<std::string, std::string>> env;
  std::set<std::string> mounts;
  std::set<std::string> hooks;
  bool found = false;
};

void AddEdits(const YAML::Node& edits, DeviceView* v) {
  if (!edits) return;
  for (const YAML::Node& e : edits["env"]) {
    const std::string kv = e.as<std::string>();
    v->env.emplace_back(kv.substr(0, kv.find('=')), kv.substr(kv.find('=') + 1));
  }
  for (const YAML::Node& m : edits["mounts"]) v->mounts.insert(m["hostPath"].as<std::string>());
  for (const YAML::Node& h : edits["hooks"]) v->hooks.insert(h["path"].as<std::string>());
}

DeviceView View(const std::string& spec, const std::string& name) {
  DeviceView v;
  YAML::Node root = YAML::LoadFile(spec);
  AddEdits(root["containerEdits"], &v);
  for (const YAML::Node& d : root["devices"]) {
    if (d["name"].as<std::string>() != name) continue;
    v.found = true;
    AddEdits(d["containerEdits"], &v);
  }
  return v;
}

struct HookedNode {
  SimDraNode node{"z100l-mixed.yaml"};
  HookedNode() {
    WriteFile(node.Path(kHook), "#!/bin/sh\n");
    ::chmod(node.Path(kHook).c_str(), 0755);
    dra::PreparerOptions o;
    o.cdi_hook_path = kHook;
    node.Restart(o);
    BOOST_REQUIRE(node.preparer->Recover().ok());
  }
};

BOOST_AUTO_TEST_SUITE(dra_cdi_edits)

// A whole card and a pre-split vHCU, each in its own spec: the toolkit
// injects nothing else into a DTK image, and the device brings its card's
// sysfs directory and by-path hook.
BOOST_AUTO_TEST_CASE(whole_card_and_claim_specs_leave_the_toolkit_nothing_to_inject) {
  HookedNode n;
  const NodeInventory inv = n.node.Inventory();
  BOOST_REQUIRE(n.node.preparer->WriteWholeCardSpec(inv).ok());
  const Card* card0 = inv.FindCard(0);
  BOOST_REQUIRE(card0 != nullptr);
  BOOST_TEST(card0->pcie_root == "pci0000:00");
  BOOST_TEST(card0->sysfs_dir.rfind("/sys/devices/pci0000:00/", 0) == 0u, card0->sysfs_dir);

  const std::string whole = n.node.Path("/var/run/cdi/dra.hygon.com-hcu.json");
  DeviceView w = View(whole, dra::CardDeviceName(*card0));
  BOOST_REQUIRE(w.found);
  BOOST_TEST(HcuToolkitDecision(DtkContainerEnv(w.env)) == ToolkitInjects::kNothing);
  BOOST_TEST(w.mounts.count(card0->sysfs_dir) == 1u);
  BOOST_TEST(w.hooks.count(kHook) == 1u);
  BOOST_TEST(CdiSchemaErrors(whole) == "");

  // vdev4 of card 3 (pre-split): the allocator picks it for a 30-CU request.
  auto ref = n.node.AllocateAndStore(ClaimJson("uid-9", "c9", "[" + ExactRequest("v", "", 6) + "]"),
                                     "pod-9");
  auto answer = n.node.preparer->Prepare(ref);
  BOOST_REQUIRE_MESSAGE(answer.ok() && answer->error.empty(),
                        (answer.ok() ? answer->error : answer.status().ToString()));
  const std::string claim = n.node.Path("/var/run/cdi/dra.hygon.com-vhcu_uid-9.json");
  YAML::Node doc = YAML::LoadFile(claim);
  BOOST_REQUIRE(doc["devices"].size() > 0u);
  for (const YAML::Node& d : doc["devices"]) {
    const std::string name = d["name"].as<std::string>();
    DeviceView v = View(claim, name);
    BOOST_TEST_CONTEXT(name) {
      BOOST_TEST(HcuToolkitDecision(DtkContainerEnv(v.env)) == ToolkitInjects::kNothing);
      BOOST_TEST(v.hooks.count(kHook) == 1u);
      bool sysfs = false;
      for (const std::string& m : v.mounts) sysfs = sysfs || m.rfind("/sys/devices/pci", 0) == 0;
      BOOST_TEST(sysfs);
    }
  }
  BOOST_TEST(CdiSchemaErrors(claim) == "");
  BOOST_REQUIRE(n.node.preparer->Unprepare(ref).ok());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp::testing
