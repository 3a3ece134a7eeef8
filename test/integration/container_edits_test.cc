// What the toolkit on the node makes of our container edits, and where the
// CDI spec lands (DESIGN §4.4, §4.5): the real daemon per strategy, the
// toolkit's rule (testing/hcu_toolkit_model.h) applied to its Allocate
// responses and CDI specs; and the CDI-only edits (sysfs, by-path hook).
#include <yaml-cpp/yaml.h>

#include <boost/test/unit_test.hpp>
#include <filesystem>

#include "integration/daemon_harness.h"
#include "testing/hcu_toolkit_model.h"

namespace hcudp::testing {
namespace {

namespace fs = std::filesystem;

struct StrategyCase {
  std::string strategy;
  std::string node;
  std::string resource;
  std::function<std::string()> id;  // a device ID of `resource`
};

const std::vector<StrategyCase>& StrategyCases() {
  static const std::vector<StrategyCase> kCases = {
      {"hcu", "demo/nodes/k100ai-8.yaml", "hygon.com/hcu", [] { return K100Bdfs()[0]; }},
      {"vhcu", "demo/nodes/z100l-mixed.yaml", "hygon.com/hcu-share-30c-16g",
       [] { return std::string("vdev4"); }},
      {"mixed", "demo/nodes/z100l-mixed.yaml", "hygon.com/hcu",
       [] { return std::string("0000:0b:00.0"); }},
      {"mig", "demo/nodes/bw-mig.yaml", "hygon.com/hcu-mig-2g-15gb",
       [] { return MigIds("2g.15gb")[0]; }}};
  return kCases;
}

// "K=V" strings of a containerEdits node, as pairs.
void AddEnv(const YAML::Node& edits, std::vector<std::pair<std::string, std::string>>* out) {
  if (!edits || !edits["env"]) return;
  for (const YAML::Node& e : edits["env"]) {
    const std::string kv = e.as<std::string>();
    const size_t eq = kv.find('=');
    out->emplace_back(kv.substr(0, eq), eq == std::string::npos ? "" : kv.substr(eq + 1));
  }
}

// The env edits a runtime applies for CDI device `name` of `spec`: the
// spec's own, then the device's.
std::vector<std::pair<std::string, std::string>> CdiEnv(const std::string& spec,
                                                        const std::string& name) {
  std::vector<std::pair<std::string, std::string>> env;
  YAML::Node root = YAML::LoadFile(spec);
  AddEnv(root["containerEdits"], &env);
  bool found = false;
  for (const YAML::Node& device : root["devices"]) {
    if (device["name"].as<std::string>() != name) continue;
    found = true;
    AddEnv(device["containerEdits"], &env);
  }
  BOOST_TEST(found, "CDI device " << name << " is in " << spec);
  return env;
}

BOOST_AUTO_TEST_SUITE(container_edits)

// The oracle itself, so a passing test below means something.
BOOST_AUTO_TEST_CASE(the_toolkit_model_injects_every_card_into_a_dtk_image_left_alone) {
  BOOST_TEST(HcuToolkitDecision(DtkContainerEnv({})) == ToolkitInjects::kAllCards);
  BOOST_TEST(HcuToolkitDecision({}) == ToolkitInjects::kNothing);
  BOOST_TEST(HcuToolkitDecision(DtkContainerEnv({{"HCU_VISIBLE_DEVICES", "void"}})) ==
             ToolkitInjects::kNothing);
  BOOST_TEST(HcuToolkitDecision(DtkContainerEnv({{"NVIDIA_VISIBLE_DEVICES", "all"}})) ==
             ToolkitInjects::kAllCards);
  BOOST_TEST(HcuToolkitDecision(DtkContainerEnv({{"HCU_VISIBLE_DEVICES", ""}})) ==
             ToolkitInjects::kAllCards);
}

// Allocate's envs (device specs) and the CDI spec's env (cdi) of every
// device-plugin strategy leave the toolkit injecting nothing into a DTK
// image: the container holds only the HCU it was granted.
BOOST_AUTO_TEST_CASE(no_strategy_lets_the_toolkit_inject_the_other_cards) {
  for (const StrategyCase& c : StrategyCases()) {
    for (const std::string list : {"devices", "cdi"}) {
      BOOST_TEST_CONTEXT("--strategy=" << c.strategy << " --device-list-strategy=" << list) {
        DaemonHarness h(c.node, {"--strategy=" + c.strategy, "--device-list-strategy=" + list});
        h.Start();
        h.RequireRegistered(c.resource);
        auto r = AllocateOne(h, c.resource, {c.id()});
        std::vector<std::pair<std::string, std::string>> edits(r.envs().begin(), r.envs().end());
        for (const auto& cdi : r.cdi_devices()) {
          const std::string name = cdi.name().substr(cdi.name().find('=') + 1);
          for (auto& kv : CdiEnv(h.cdi_dir() + "/hygon.com-hcu.json", name)) edits.push_back(kv);
        }
        ToolkitInjects got = HcuToolkitDecision(DtkContainerEnv(edits));
        BOOST_TEST(got == ToolkitInjects::kNothing,
                   "the toolkit injects " << ToolkitInjectsName(got));
      }
    }
  }
}

// --cdi-spec-dir is a host path in the device-plugin mode as in DRA mode
// (DESIGN §4.4): with a host root other than /, the spec is written under it.
BOOST_AUTO_TEST_CASE(the_cdi_spec_dir_is_a_host_path_written_under_the_host_root) {
  DaemonHarness h("demo/nodes/k100ai-8.yaml",
                  {"--device-list-strategy=cdi", "--cdi-spec-dir=/run/cdi-elsewhere"});
  h.Start();
  h.RequireRegistered("hygon.com/hcu");
  BOOST_TEST(PathExists(h.host_root() + "/run/cdi-elsewhere/hygon.com-hcu.json"));
  BOOST_TEST(!PathExists("/run/cdi-elsewhere/hygon.com-hcu.json"));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp::testing
