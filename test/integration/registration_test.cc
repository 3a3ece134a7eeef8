// hcu-dp-daemon registers the right resources, sockets and first device
// lists with kubelet, per demo node, strategy and naming policy
// (DESIGN.md §3-4, reference/hcu-hardware.md §6).
#include <sys/stat.h>

#include <algorithm>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <iostream>
#include <map>
#include <ostream>
#include <thread>

#include "integration/daemon_harness.h"

namespace hcudp::testing {
namespace {

using IdsByResource = std::map<std::string, std::set<std::string>>;

struct RegistrationCase {
  std::string label;
  std::string node;
  std::vector<std::string> flags;
  IdsByResource expected;
};

std::ostream& operator<<(std::ostream& os, const RegistrationCase& c) { return os << c.label; }

const std::set<std::string> kK100All(K100Bdfs().begin(), K100Bdfs().end());
const std::set<std::string> kZ100Whole = {"0000:0b:00.0", "0000:0e:00.0"};
const std::set<std::string> kZ100All = {"0000:0b:00.0", "0000:0e:00.0", "0000:8b:00.0",
                                        "0000:8e:00.0"};
const std::set<std::string> kZ100Share15 = {"vdev0", "vdev1", "vdev2", "vdev3"};
const std::set<std::string> kZ100Share30 = {"vdev4", "vdev5"};

std::set<std::string> MigSet(const std::string& profile) {
  std::vector<std::string> ids = MigIds(profile);
  return {ids.begin(), ids.end()};
}

const RegistrationCase kCases[] = {
    {"k100ai-8 mixed",
     "demo/nodes/k100ai-8.yaml",
     {"--strategy=mixed"},
     {{"hygon.com/hcu", kK100All}}},
    {"k100ai-8 hcu", "demo/nodes/k100ai-8.yaml", {"--strategy=hcu"}, {{"hygon.com/hcu", kK100All}}},
    {"k100ai-8 policy 1",
     "demo/nodes/k100ai-8.yaml",
     {"--policy=1"},
     {{"hygon.com/K100_AI", kK100All}}},
    {"k100ai-8 policy 2",
     "demo/nodes/k100ai-8.yaml",
     {"--policy=2"},
     {{"hygon.com/K100-AI_64G_120CU", kK100All}}},
    {"z100l-mixed mixed",
     "demo/nodes/z100l-mixed.yaml",
     {"--strategy=mixed"},
     {{"hygon.com/hcu", kZ100Whole},
      {"hygon.com/hcu-share-15c-8g", kZ100Share15},
      {"hygon.com/hcu-share-30c-16g", kZ100Share30}}},
    {"z100l-mixed hcu",
     "demo/nodes/z100l-mixed.yaml",
     {"--strategy=hcu"},
     {{"hygon.com/hcu", kZ100All}}},
    {"z100l-mixed vhcu",
     "demo/nodes/z100l-mixed.yaml",
     {"--strategy=vhcu"},
     {{"hygon.com/hcu-share-15c-8g", kZ100Share15}, {"hygon.com/hcu-share-30c-16g", kZ100Share30}}},
    {"bw-mig mig",
     "demo/nodes/bw-mig.yaml",
     {"--strategy=mig"},
     {{"hygon.com/hcu-mig-2g-15gb", MigSet("2g.15gb")},
      {"hygon.com/hcu-mig-4g-31gb", MigSet("4g.31gb")},
      {"hygon.com/hcu-mig-8g-63gb", MigSet("8g.63gb")}}},
};

bool IsSocket(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode);
}

// The resources the daemon serves: one socket "hygon.com_<last-name>@<tag>"
// each in the plugin directory. The daemon serves every resource of a
// snapshot before it registers any (PluginManager::Start), so once one
// registration is seen this is the whole set it can ever register for the
// node as started: a stray resource shows here without waiting for it.
std::vector<std::string> ServedResources(const DaemonHarness& h) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(h.plugin_dir())) {
    const std::string file = e.path().filename();
    const size_t at = file.find('@');
    const size_t underscore = file.find('_');
    if (at == std::string::npos || underscore == std::string::npos || !IsSocket(e.path())) continue;
    names.push_back(file.substr(0, underscore) + "/" +
                    file.substr(underscore + 1, at - underscore - 1));
  }
  std::sort(names.begin(), names.end());
  return names;
}

BOOST_AUTO_TEST_SUITE(registration)

BOOST_DATA_TEST_CASE(registers_exactly_the_expected_resources_and_devices,
                     boost::unit_test::data::make(kCases), c) {
  DaemonHarness h(c.node, c.flags);
  h.Start();
  for (const auto& [resource, ids] : c.expected) {
    ResourceSnapshot snap = h.RequireRegistered(resource);
    BOOST_TEST(Ids(snap.current_stream_first_devices) == ids, resource);
  }
  std::vector<std::string> expected_names;
  for (const auto& [resource, ids] : c.expected) expected_names.push_back(resource);
  BOOST_TEST(ServedResources(h) == expected_names, boost::test_tools::per_element());
  BOOST_TEST(h.kubelet().Resources() == expected_names, boost::test_tools::per_element());
}

BOOST_DATA_TEST_CASE(each_resource_has_its_own_socket_named_for_it,
                     boost::unit_test::data::make(kCases), c) {
  DaemonHarness h(c.node, c.flags);
  h.Start();
  std::set<std::string> endpoints;
  for (const auto& [resource, ids] : c.expected) {
    ResourceSnapshot snap = h.RequireRegistered(resource);
    const std::string last_name = resource.substr(resource.find('/') + 1);
    const std::string prefix = "hygon.com_" + last_name + "@";
    BOOST_TEST(snap.endpoint.rfind(prefix, 0) == 0u, snap.endpoint << " starts with " << prefix);
    BOOST_TEST(snap.endpoint.size() > prefix.size() + 5, snap.endpoint << " has an instance");
    BOOST_TEST(snap.endpoint.find('/') == std::string::npos, "endpoint is a bare file name");
    // hygon.com_<last-name>@<7-character instance tag> (hcudp/plugin_socket.h).
    BOOST_TEST(snap.endpoint.size() == prefix.size() + 7, snap.endpoint);
    BOOST_TEST(IsSocket(h.plugin_dir() + "/" + snap.endpoint), snap.endpoint << " is a socket");
    endpoints.insert(snap.endpoint);
  }
  BOOST_TEST(endpoints.size() == c.expected.size());
}

BOOST_AUTO_TEST_CASE(socket_names_differ_between_daemon_instances) {
  DaemonHarness first("demo/nodes/k100ai-8.yaml");
  first.Start();
  DaemonHarness second("demo/nodes/k100ai-8.yaml");
  second.Start();
  std::string a = first.RequireRegistered("hygon.com/hcu").endpoint;
  std::string b = second.RequireRegistered("hygon.com/hcu").endpoint;
  BOOST_TEST(a != b);
}

BOOST_AUTO_TEST_CASE(card_resources_offer_preferred_allocation) {
  DaemonHarness h("demo/nodes/k100ai-8.yaml");
  h.Start();
  ResourceSnapshot snap = h.RequireRegistered("hygon.com/hcu");
  BOOST_TEST(snap.options.get_preferred_allocation_available());
  v1beta1::DevicePluginOptions live;
  BOOST_REQUIRE(h.kubelet().GetOptions("hygon.com/hcu", &live).ok());
  BOOST_TEST(live.get_preferred_allocation_available());
  BOOST_TEST(!live.pre_start_required());
}

BOOST_AUTO_TEST_CASE(first_list_comes_at_once_all_healthy_with_the_cards_numa_node) {
  DaemonHarness h("demo/nodes/k100ai-8.yaml", {"--pulse=30"});
  h.Start();
  ResourceSnapshot snap = h.RequireRegistered("hygon.com/hcu");
  std::cerr << "process start -> registered with a first list: "
            << std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() -
                                                        h.daemon_started_at())
                   .count()
            << " ms\n";
  // Well inside one pulse: the first list must not wait for a health probe.
  BOOST_TEST(snap.current_stream_first_message_ms < 2000);
  BOOST_REQUIRE_EQUAL(snap.current_stream_first_devices.size(), 8u);
  for (const v1beta1::Device& d : snap.current_stream_first_devices) {
    BOOST_TEST(d.health() == "Healthy", d.id());
    int index = static_cast<int>(std::find(K100Bdfs().begin(), K100Bdfs().end(), d.id()) -
                                 K100Bdfs().begin());
    BOOST_REQUIRE_EQUAL(d.topology().nodes_size(), 1);
    BOOST_TEST(d.topology().nodes(0).id() == index, d.id());
  }
}

BOOST_AUTO_TEST_CASE(a_card_without_numa_node_has_no_topology) {
  DaemonHarness h("demo/nodes/k100ai-8.yaml");
  h.EditNode([](YAML::Node& node) {
    for (YAML::Node card : node["cards"]) {
      if (card["index"].as<int>() == 2) card["numaNode"] = -1;
    }
  });
  h.Start();
  ResourceSnapshot snap = h.RequireRegistered("hygon.com/hcu");
  for (const v1beta1::Device& d : snap.current_stream_first_devices) {
    if (d.id() == "0000:49:00.0") {
      BOOST_TEST(d.topology().nodes_size() == 0, "no NUMA node for card 2, not -1");
    } else {
      BOOST_TEST(d.topology().nodes_size() == 1, d.id());
    }
  }
}

BOOST_AUTO_TEST_CASE(vhcus_carry_their_parent_cards_numa_node) {
  DaemonHarness h("demo/nodes/z100l-mixed.yaml");
  h.Start();
  for (const char* resource : {"hygon.com/hcu-share-15c-8g", "hygon.com/hcu-share-30c-16g"}) {
    ResourceSnapshot snap = h.RequireRegistered(resource);
    for (const v1beta1::Device& d : snap.current_stream_first_devices) {
      BOOST_REQUIRE_EQUAL(d.topology().nodes_size(), 1);
      BOOST_TEST(d.topology().nodes(0).id() == 1, d.id());
    }
  }
  for (const v1beta1::Device& d :
       h.RequireRegistered("hygon.com/hcu").current_stream_first_devices) {
    BOOST_REQUIRE_EQUAL(d.topology().nodes_size(), 1);
    BOOST_TEST(d.topology().nodes(0).id() == 0, d.id());
  }
}

BOOST_AUTO_TEST_CASE(mig_instances_carry_their_cards_numa_node) {
  DaemonHarness h("demo/nodes/bw-mig.yaml", {"--strategy=mig"});
  h.Start();
  ResourceSnapshot snap = h.RequireRegistered("hygon.com/hcu-mig-4g-31gb");
  for (const v1beta1::Device& d : snap.current_stream_first_devices) {
    BOOST_REQUIRE_EQUAL(d.topology().nodes_size(), 1);
    // 6b0d…, 8d11… are on card 1 (NUMA 1); 0fd6… on card 3 (NUMA 3).
    int expected = d.id() == "MIG-0fd630f1-f29d-4da9-953f-48f1a09f76b5" ? 3 : 1;
    BOOST_TEST(d.topology().nodes(0).id() == expected, d.id());
  }
}

BOOST_AUTO_TEST_CASE(a_daemon_started_before_kubelet_registers_when_kubelet_comes_up) {
  DaemonHarness h("demo/nodes/k100ai-8.yaml");
  h.Start(/*start_kubelet=*/false);
  // The daemon is up and has looked for kubelet, which is not there.
  BOOST_REQUIRE(h.daemon().WaitForLog("waiting for kubelet: ", milliseconds(10000)));
  BOOST_REQUIRE(h.daemon().Running());
  h.StartKubelet();
  h.RequireRegistered("hygon.com/hcu");
}

BOOST_AUTO_TEST_CASE(the_policy_flag_wins_over_the_policy_env_var) {
  DaemonHarness h("demo/nodes/k100ai-8.yaml", {"--policy=0"}, {"POLICY=2"});
  h.Start();
  h.RequireRegistered("hygon.com/hcu");
  BOOST_TEST(ServedResources(h) == std::vector<std::string>{"hygon.com/hcu"},
             boost::test_tools::per_element());
  BOOST_TEST(!h.kubelet().Snapshot("hygon.com/K100-AI_64G_120CU").has_value());
}

BOOST_AUTO_TEST_CASE(the_policy_env_var_applies_without_the_flag) {
  DaemonHarness h("demo/nodes/k100ai-8.yaml", {}, {"POLICY=2"});
  h.Start();
  h.RequireRegistered("hygon.com/K100-AI_64G_120CU");
}

BOOST_AUTO_TEST_CASE(the_strategy_env_var_applies_without_the_flag) {
  DaemonHarness h("demo/nodes/z100l-mixed.yaml", {}, {"RESOURCE_REGISTER_STRATEGY=hcu"});
  h.Start();
  h.RequireIds("hygon.com/hcu", kZ100All);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp::testing
