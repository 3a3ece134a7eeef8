// What hcu-dp-daemon gives a container (Allocate), how it refuses what it
// cannot serve, its topology-aware preferred picks and the CDI mode
// (DESIGN.md §4.3, reference/seed-behaviour.md §4, hcu-hardware.md §6).
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <atomic>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <ostream>
#include <thread>

#include "integration/daemon_harness.h"

namespace hcudp::testing {
namespace {

namespace fs = std::filesystem;

const std::string kKfd = DeviceSpec("/dev/kfd");
const std::string kMkfd = DeviceSpec("/dev/mkfd");
const std::string kHyhal = Mount(HyhalPath(), "/opt/hyhal");

BOOST_AUTO_TEST_SUITE(allocate)

BOOST_AUTO_TEST_CASE(a_physical_card_gets_kfd_mkfd_its_dri_nodes_and_hyhal) {
  DaemonHarness h("demo/nodes/k100ai-8.yaml");
  h.Start();
  h.RequireRegistered("hygon.com/hcu");
  auto r = AllocateOne(h, "hygon.com/hcu", {"0000:09:00.0"});
  BOOST_TEST(DeviceSpecs(r) ==
                 (std::set<std::string>{kKfd, kMkfd, DeviceSpec("/dev/dri/card1"),
                                        DeviceSpec("/dev/dri/renderD128")}),
             boost::test_tools::per_element());
  BOOST_TEST(Mounts(r) == std::set<std::string>{kHyhal}, boost::test_tools::per_element());
  BOOST_TEST(r.cdi_devices_size() == 0);
}

BOOST_AUTO_TEST_CASE(two_cards_in_one_container_get_both_cards_dri_nodes_once_kfd) {
  DaemonHarness h("demo/nodes/k100ai-8.yaml");
  h.Start();
  h.RequireRegistered("hygon.com/hcu");
  auto r = AllocateOne(h, "hygon.com/hcu", {"0000:29:00.0", "0000:e9:00.0"});
  BOOST_TEST(r.devices_size() == 6);
  BOOST_TEST(DeviceSpecs(r) ==
                 (std::set<std::string>{kKfd, kMkfd, DeviceSpec("/dev/dri/card2"),
                                        DeviceSpec("/dev/dri/renderD129"),
                                        DeviceSpec("/dev/dri/card8"),
                                        DeviceSpec("/dev/dri/renderD135")}),
             boost::test_tools::per_element());
  BOOST_TEST(Mounts(r) == std::set<std::string>{kHyhal}, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(each_container_request_gets_its_own_response_in_order) {
  DaemonHarness h("demo/nodes/k100ai-8.yaml");
  h.Start();
  h.RequireRegistered("hygon.com/hcu");
  v1beta1::AllocateResponse response;
  grpc::Status s = h.kubelet().Allocate(
      "hygon.com/hcu", {{"0000:09:00.0"}, {"0000:89:00.0"}, {"0000:c9:00.0"}}, &response);
  BOOST_REQUIRE_MESSAGE(s.ok(), s.error_message());
  BOOST_REQUIRE_EQUAL(response.container_responses_size(), 3);
  BOOST_TEST(DeviceSpecs(response.container_responses(0)).count(DeviceSpec("/dev/dri/card1")));
  BOOST_TEST(DeviceSpecs(response.container_responses(1)).count(DeviceSpec("/dev/dri/card5")));
  BOOST_TEST(DeviceSpecs(response.container_responses(2)).count(DeviceSpec("/dev/dri/card7")));
  BOOST_TEST(!DeviceSpecs(response.container_responses(0)).count(DeviceSpec("/dev/dri/card5")));
}

BOOST_AUTO_TEST_CASE(a_vhcu_gets_its_parent_cards_dri_nodes_and_its_conf_file) {
  DaemonHarness h("demo/nodes/z100l-mixed.yaml");
  h.Start();
  h.RequireRegistered("hygon.com/hcu-share-30c-16g");
  auto r = AllocateOne(h, "hygon.com/hcu-share-30c-16g", {"vdev4"});
  BOOST_TEST(DeviceSpecs(r) ==
                 (std::set<std::string>{kKfd, kMkfd, DeviceSpec("/dev/dri/card4"),
                                        DeviceSpec("/dev/dri/renderD131")}),
             boost::test_tools::per_element());
  BOOST_TEST(Mounts(r) ==
                 (std::set<std::string>{
                     kHyhal, Mount("/etc/vdev/vdev4.conf", "/etc/vdev/docker/vdev4.conf")}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a_mig_instance_gets_its_cards_dri_nodes_and_its_ci_conf) {
  DaemonHarness h("demo/nodes/bw-mig.yaml", {"--strategy=mig"});
  h.Start();
  h.RequireRegistered("hygon.com/hcu-mig-4g-31gb");
  auto r = AllocateOne(h, "hygon.com/hcu-mig-4g-31gb",
                       {"MIG-0fd630f1-f29d-4da9-953f-48f1a09f76b5"});
  BOOST_TEST(DeviceSpecs(r) ==
                 (std::set<std::string>{kKfd, kMkfd, DeviceSpec("/dev/dri/card4"),
                                        DeviceSpec("/dev/dri/renderD131")}),
             boost::test_tools::per_element());
  const std::string conf = "/etc/dmi_mig_config/ci/dev3gi1ci0.conf";
  BOOST_TEST(Mounts(r) == (std::set<std::string>{kHyhal, Mount(conf, conf)}),
             boost::test_tools::per_element());
}

struct UnknownIdCase {
  std::string label;
  std::string node;
  std::vector<std::string> flags;
  std::string resource;
  std::vector<std::string> ids;
};

std::ostream& operator<<(std::ostream& os, const UnknownIdCase& c) { return os << c.label; }

const UnknownIdCase kUnknownIds[] = {
    {"no such card", "demo/nodes/k100ai-8.yaml", {}, "hygon.com/hcu", {"0000:ff:00.0"}},
    {"one good one unknown card", "demo/nodes/k100ai-8.yaml", {}, "hygon.com/hcu",
     {"0000:09:00.0", "0000:ff:00.0"}},
    {"empty id", "demo/nodes/k100ai-8.yaml", {}, "hygon.com/hcu", {""}},
    {"card hidden in mixed because it carries vHCUs", "demo/nodes/z100l-mixed.yaml", {},
     "hygon.com/hcu", {"0000:8b:00.0"}},
    {"no such vHCU", "demo/nodes/z100l-mixed.yaml", {}, "hygon.com/hcu-share-15c-8g", {"vdev9"}},
    {"vHCU of another profile", "demo/nodes/z100l-mixed.yaml", {}, "hygon.com/hcu-share-15c-8g",
     {"vdev4"}},
    {"no such MIG instance", "demo/nodes/bw-mig.yaml", {"--strategy=mig"},
     "hygon.com/hcu-mig-4g-31gb", {"MIG-00000000-0000-0000-0000-000000000000"}},
    {"MIG instance of another profile", "demo/nodes/bw-mig.yaml", {"--strategy=mig"},
     "hygon.com/hcu-mig-4g-31gb", {"MIG-6513270e-269e-4d37-b2a7-4de452e6b438"}},
};

BOOST_DATA_TEST_CASE(unknown_device_ids_are_invalid_arguments,
                     boost::unit_test::data::make(kUnknownIds), c) {
  DaemonHarness h(c.node, c.flags);
  h.Start();
  h.RequireRegistered(c.resource);
  v1beta1::AllocateResponse response;
  grpc::Status s = h.kubelet().Allocate(c.resource, {c.ids}, &response);
  BOOST_TEST(s.error_code() == grpc::StatusCode::INVALID_ARGUMENT,
             "code " << s.error_code() << ": " << s.error_message());
  BOOST_TEST(h.daemon().Running());
}

BOOST_AUTO_TEST_CASE(two_vhcus_in_one_container_are_refused) {
  DaemonHarness h("demo/nodes/z100l-mixed.yaml");
  h.Start();
  h.RequireRegistered("hygon.com/hcu-share-15c-8g");
  v1beta1::AllocateResponse response;
  grpc::Status s = h.kubelet().Allocate("hygon.com/hcu-share-15c-8g", {{"vdev0", "vdev1"}},
                                        &response);
  BOOST_TEST(!s.ok());
  BOOST_TEST(!s.error_message().empty());
  // One vHCU per container in two containers is fine.
  s = h.kubelet().Allocate("hygon.com/hcu-share-15c-8g", {{"vdev0"}, {"vdev1"}}, &response);
  BOOST_TEST(s.ok(), s.error_message());
}

BOOST_AUTO_TEST_CASE(two_mig_instances_in_one_container_are_refused) {
  DaemonHarness h("demo/nodes/bw-mig.yaml", {"--strategy=mig"});
  h.Start();
  h.RequireRegistered("hygon.com/hcu-mig-2g-15gb");
  std::vector<std::string> ids = MigIds("2g.15gb");
  v1beta1::AllocateResponse response;
  grpc::Status s =
      h.kubelet().Allocate("hygon.com/hcu-mig-2g-15gb", {{ids[0], ids[1]}}, &response);
  BOOST_TEST(!s.ok());
  BOOST_TEST(!s.error_message().empty());
}

BOOST_AUTO_TEST_CASE(thirty_two_concurrent_callers_all_get_their_own_card) {
  DaemonHarness h("demo/nodes/k100ai-8.yaml");
  h.Start();
  h.RequireRegistered("hygon.com/hcu");
  constexpr int kCallers = 32;
  std::atomic<int> ok{0};
  std::vector<std::string> failures(kCallers);
  std::vector<std::thread> callers;
  for (int i = 0; i < kCallers; ++i) {
    callers.emplace_back([&, i] {
      const int card = i % 8;
      v1beta1::AllocateResponse response;
      grpc::Status s = h.kubelet().Allocate("hygon.com/hcu", {{K100Bdfs()[card]}}, &response);
      if (!s.ok()) {
        failures[i] = s.error_message();
      } else if (response.container_responses_size() != 1) {
        failures[i] = "responses: " + std::to_string(response.container_responses_size());
      } else {
        std::set<std::string> specs = DeviceSpecs(response.container_responses(0));
        std::set<std::string> want = {kKfd, kMkfd,
                                      DeviceSpec("/dev/dri/card" + std::to_string(card + 1)),
                                      DeviceSpec("/dev/dri/renderD" + std::to_string(128 + card))};
        if (specs == want) {
          ok++;
        } else {
          failures[i] = "wrong devices for card " + std::to_string(card);
        }
      }
    });
  }
  for (std::thread& t : callers) t.join();
  for (int i = 0; i < kCallers; ++i) BOOST_TEST(failures[i].empty(), "caller " << i << ": " << failures[i]);
  BOOST_TEST(ok == kCallers);
}

// --- GetPreferredAllocation on two HSL islands {0..3} and {4..7} ---

struct TwoIslands {
  TwoIslands() : h("test/fixtures/two-islands.yaml", {"--strategy=hcu"}) {
    h.Start();
    h.RequireRegistered("hygon.com/hcu");
  }
  std::set<std::string> Preferred(const std::vector<std::string>& must_include, int size) {
    v1beta1::PreferredAllocationResponse response;
    grpc::Status s =
        h.kubelet().GetPreferredAllocation("hygon.com/hcu", K100Bdfs(), must_include, size,
                                           &response);
    BOOST_REQUIRE_MESSAGE(s.ok(), "GetPreferredAllocation failed: " << s.error_message());
    BOOST_REQUIRE_EQUAL(response.container_responses_size(), 1);
    const auto& ids = response.container_responses(0).deviceids();
    return {ids.begin(), ids.end()};
  }
  DaemonHarness h;
  const std::set<std::string> island_a{K100Bdfs().begin(), K100Bdfs().begin() + 4};
  const std::set<std::string> island_b{K100Bdfs().begin() + 4, K100Bdfs().end()};
};

BOOST_FIXTURE_TEST_CASE(four_cards_are_picked_from_one_hsl_island, TwoIslands) {
  std::set<std::string> picked = Preferred({}, 4);
  BOOST_TEST((picked == island_a || picked == island_b), "picked one island");
}

BOOST_FIXTURE_TEST_CASE(two_cards_are_picked_inside_one_island, TwoIslands) {
  std::set<std::string> picked = Preferred({}, 2);
  BOOST_REQUIRE_EQUAL(picked.size(), 2u);
  bool in_a = std::includes(island_a.begin(), island_a.end(), picked.begin(), picked.end());
  bool in_b = std::includes(island_b.begin(), island_b.end(), picked.begin(), picked.end());
  BOOST_TEST((in_a || in_b));
}

BOOST_FIXTURE_TEST_CASE(must_include_pulls_the_pick_into_that_cards_island, TwoIslands) {
  std::set<std::string> picked = Preferred({"0000:a9:00.0"}, 4);  // card 5, island B
  BOOST_TEST(picked == island_b, boost::test_tools::per_element());
}

BOOST_FIXTURE_TEST_CASE(an_impossible_request_is_not_an_error, TwoIslands) {
  v1beta1::PreferredAllocationResponse response;
  grpc::Status s = h.kubelet().GetPreferredAllocation("hygon.com/hcu", {K100Bdfs()[0]}, {}, 3,
                                                      &response);
  BOOST_TEST(s.ok(), s.error_message());
  s = h.kubelet().GetPreferredAllocation("hygon.com/hcu", K100Bdfs(), {"0000:ff:00.0"}, 2,
                                         &response);
  BOOST_TEST(s.ok(), s.error_message());
}

// --- CDI ---

// The spec files the daemon wrote into --cdi-spec-dir.
std::vector<std::string> CdiSpecs(const DaemonHarness& h) {
  std::vector<std::string> specs;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(h.cdi_dir(), ec)) {
    std::string ext = entry.path().extension().string();
    if (ext == ".json" || ext == ".yaml") specs.push_back(entry.path().string());
  }
  return specs;
}

// Runs `python3 -m jsonschema` against the CDI schema (test/fixtures/cdi);
// YAML specs are converted to JSON first.
void RequireValidCdiSpec(const DaemonHarness& h, const std::string& spec) {
  std::string instance = spec;
  if (spec.size() > 5 && spec.substr(spec.size() - 5) == ".yaml") {
    instance = h.node_path() + ".cdi.json";
    RunResult conv = Run({"/usr/bin/env", "python3", "-c",
                          "import json,sys,yaml; json.dump(yaml.safe_load(open(sys.argv[1])), "
                          "open(sys.argv[2], 'w'))",
                          spec, instance});
    BOOST_REQUIRE_MESSAGE(conv.exit_code == 0, "yaml->json: " << conv.err);
  }
  const std::string schema_dir = SourcePath("test/fixtures/cdi");
  RunResult r = Run({"/usr/bin/env", "python3", "-W", "ignore", "-m", "jsonschema", "--base-uri",
                     "file://" + schema_dir + "/", "-i", instance, schema_dir + "/schema.json"});
  BOOST_TEST(r.exit_code == 0, spec << " does not validate: " << r.out << r.err);
}

// The deviceNodes paths of CDI device `name` in `spec` (JSON is YAML).
std::set<std::string> CdiDeviceNodes(const std::string& spec, const std::string& name) {
  std::set<std::string> paths;
  YAML::Node root = YAML::LoadFile(spec);
  for (const YAML::Node& device : root["devices"]) {
    if (device["name"].as<std::string>() != name) continue;
    for (const YAML::Node& node : device["containerEdits"]["deviceNodes"]) {
      paths.insert(node["path"].as<std::string>());
    }
  }
  return paths;
}

std::string RequireOneCdiDevice(const v1beta1::ContainerAllocateResponse& r) {
  BOOST_REQUIRE_EQUAL(r.cdi_devices_size(), 1);
  const std::string& fq = r.cdi_devices(0).name();
  const std::string prefix = "hygon.com/hcu=";
  BOOST_REQUIRE_MESSAGE(fq.rfind(prefix, 0) == 0, fq << " starts with " << prefix);
  return fq.substr(prefix.size());
}

BOOST_AUTO_TEST_CASE(cdi_mode_returns_cdi_devices_named_in_a_valid_spec) {
  DaemonHarness h("demo/nodes/k100ai-8.yaml", {"--device-list-strategy=cdi"});
  h.Start();
  h.RequireRegistered("hygon.com/hcu");
  std::vector<std::string> specs = CdiSpecs(h);
  BOOST_REQUIRE_MESSAGE(!specs.empty(), "no CDI spec in " << h.cdi_dir());
  for (const std::string& spec : specs) RequireValidCdiSpec(h, spec);

  auto r = AllocateOne(h, "hygon.com/hcu", {"0000:09:00.0"});
  std::string name = RequireOneCdiDevice(r);
  BOOST_TEST(r.devices_size() == 0, "cdi mode returns no device specs");
  std::set<std::string> nodes;
  for (const std::string& spec : specs) {
    std::set<std::string> n = CdiDeviceNodes(spec, name);
    nodes.insert(n.begin(), n.end());
  }
  BOOST_TEST(nodes.count("/dev/dri/card1"), "spec device " << name << " has card1");
  BOOST_TEST(nodes.count("/dev/dri/renderD128"), "spec device " << name << " has renderD128");
}

BOOST_AUTO_TEST_CASE(both_mode_returns_cdi_devices_and_the_classic_fields) {
  DaemonHarness h("demo/nodes/k100ai-8.yaml", {"--device-list-strategy=both"});
  h.Start();
  h.RequireRegistered("hygon.com/hcu");
  BOOST_REQUIRE(!CdiSpecs(h).empty());
  auto r = AllocateOne(h, "hygon.com/hcu", {"0000:09:00.0"});
  RequireOneCdiDevice(r);
  BOOST_TEST(DeviceSpecs(r).count(DeviceSpec("/dev/dri/card1")));
  BOOST_TEST(Mounts(r).count(kHyhal));
}

// A spec write that failed (the CDI directory briefly unusable: /var/run
// full or remounted) is retried by itself, not only at the next change of
// the devices: until then Allocate names CDI devices (or the spec keeps
// devices) the runtime cannot resolve. --pulse=0 on the sim backend (its node
// edits are file events): no periodic look helps. The host backend's
// stand-ins answer the edit at the next pulse, and a pulse that finds no
// change wrote nothing either.
BOOST_AUTO_TEST_CASE(a_failed_cdi_spec_write_is_retried_without_a_further_change) {
  DaemonHarness h("demo/nodes/k100ai-8.yaml", {"--device-list-strategy=cdi",
                                               UsingHostBackend() ? "--pulse=1" : "--pulse=0"});
  h.Start();
  h.RequireRegistered("hygon.com/hcu");
  const std::string spec = h.cdi_dir() + "/hygon.com-hcu.json";
  BOOST_REQUIRE(PathExists(spec));
  const size_t before = YAML::LoadFile(spec)["devices"].size();
  fs::remove_all(h.cdi_dir());
  WriteFile(h.cdi_dir(), "not a directory\n");  // the write fails
  h.RemoveCard(7);
  std::set<std::string> seven(K100Bdfs().begin(), K100Bdfs().end() - 1);
  h.RequireIds("hygon.com/hcu", seven, kHealthTimeout);
  BOOST_REQUIRE_MESSAGE(h.daemon().WaitForLog("write CDI spec", milliseconds(5000)),
                        "the failed write was not reported");
  fs::remove(h.cdi_dir());
  fs::create_directories(h.cdi_dir());
  const auto deadline = std::chrono::steady_clock::now() + milliseconds(5000);
  while (!PathExists(spec) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(20));
  }
  BOOST_REQUIRE_MESSAGE(PathExists(spec), "no CDI spec written once the directory was usable");
  BOOST_TEST(YAML::LoadFile(spec)["devices"].size() == before - 1);
}

BOOST_AUTO_TEST_CASE(cdi_spec_of_a_vhcu_node_validates) {
  DaemonHarness h("demo/nodes/z100l-mixed.yaml", {"--device-list-strategy=cdi"});
  h.Start();
  h.RequireRegistered("hygon.com/hcu-share-30c-16g");
  std::vector<std::string> specs = CdiSpecs(h);
  BOOST_REQUIRE(!specs.empty());
  for (const std::string& spec : specs) RequireValidCdiSpec(h, spec);
  auto r = AllocateOne(h, "hygon.com/hcu-share-30c-16g", {"vdev4"});
  RequireOneCdiDevice(r);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp::testing
