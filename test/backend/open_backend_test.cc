// OpenBackend: flags -> backend; on the simulated demo nodes the discovered
// inventory is what reference/hcu-hardware.md §6 describes.
#include <boost/test/unit_test.hpp>
#include <memory>
#include <string>
#include <vector>

#include "hcudp/backend.h"
#include "hcudp/naming.h"
#include "testing/testutil.h"

namespace hcudp {
namespace {

Options SimOptions(const std::string& node, const std::string& host_root) {
  Options o;
  o.backend = BackendKind::kSim;
  o.sim_node_path = testing::SourcePath("demo/nodes/" + node + ".yaml");
  o.host_root = host_root;
  return o;
}

NodeInventory DiscoverSim(const std::string& node, const testing::TempDir& root) {
  auto backend = OpenBackend(SimOptions(node, root.path()));
  BOOST_REQUIRE_MESSAGE(backend.ok(), backend.status().ToString());
  auto inv = (*backend)->Discover();
  BOOST_REQUIRE_MESSAGE(inv.ok(), inv.status().ToString());
  return *inv;
}

// Name -> device count, in BuildResources order.
std::vector<std::string> Summary(const NodeInventory& inv, Strategy strategy) {
  NamingParams params;
  params.strategy = strategy;
  auto resources = BuildResources(inv, params);
  BOOST_REQUIRE_MESSAGE(resources.ok(), resources.status().ToString());
  std::vector<std::string> out;
  for (const Resource& r : *resources) {
    out.push_back(r.name + ":" + std::to_string(r.devices.size()));
  }
  return out;
}

BOOST_AUTO_TEST_SUITE(open_backend)

BOOST_AUTO_TEST_CASE(sim_without_sim_node_names_the_flag) {
  Options o;
  o.backend = BackendKind::kSim;
  auto backend = OpenBackend(o);
  BOOST_REQUIRE(!backend.ok());
  BOOST_TEST(static_cast<int>(backend.status().code()) ==
             static_cast<int>(StatusCode::kInvalidArgument));
  BOOST_TEST(backend.status().message().find("--sim-node") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(sim_with_a_missing_file_names_the_flag_and_the_file) {
  testing::TempDir root;
  Options o = SimOptions("no-such-node", root.path());
  auto backend = OpenBackend(o);
  BOOST_REQUIRE(!backend.ok());
  BOOST_TEST(backend.status().message().find("--sim-node: ") == 0u, backend.status().message());
  BOOST_TEST(backend.status().message().find(o.sim_node_path) != std::string::npos,
             backend.status().message());
}

BOOST_AUTO_TEST_CASE(sim_with_an_invalid_file_names_the_flag) {
  testing::TempDir root;
  testing::WriteFile(root.Join("bad.yaml"), "apiVersion: hcudp.hygon.com/v1\nkind: Nope\n");
  Options o = SimOptions("unused", root.Join("host"));
  o.sim_node_path = root.Join("bad.yaml");
  auto backend = OpenBackend(o);
  BOOST_REQUIRE(!backend.ok());
  BOOST_TEST(backend.status().message().find("--sim-node") == 0u, backend.status().message());
}

BOOST_AUTO_TEST_CASE(host_backend_errors_name_the_hyhal_path) {
  testing::TempDir root;
  Options o;
  o.backend = BackendKind::kHost;
  o.hyhal_path = root.Join("no-hyhal");
  o.host_root = root.path();
  auto backend = OpenBackend(o);
  BOOST_REQUIRE(!backend.ok());  // no vendor libraries here
  BOOST_TEST(backend.status().message().find(o.hyhal_path) != std::string::npos,
             backend.status().message());
}

BOOST_AUTO_TEST_CASE(sim_k100ai_8_discovers_eight_cards_with_dri_and_hsl) {
  testing::TempDir root;
  NodeInventory inv = DiscoverSim("k100ai-8", root);
  BOOST_REQUIRE(inv.cards.size() == 8u);
  const Card& c = inv.cards[7];
  BOOST_TEST(c.bdf == "0000:e9:00.0");
  BOOST_TEST(c.model == "K100_AI");
  BOOST_TEST(c.serial == "T6T8290018020301");
  BOOST_TEST(c.compute_units == 120);
  BOOST_TEST(c.memory_mib() == 65520u);
  BOOST_TEST(c.numa_node == 7);
  BOOST_TEST(c.dri_nodes == (std::vector<std::string>{"/dev/dri/card8", "/dev/dri/renderD135"}),
             boost::test_tools::per_element());
  BOOST_TEST(inv.has_kfd);
  BOOST_TEST(inv.has_mkfd);
  BOOST_TEST(inv.links.size() == 56u);
  BOOST_TEST(LinkTypeName(inv.FindLink(0, 7)->type) == "HSL");
  BOOST_TEST(inv.vhcus.empty());
  BOOST_TEST(!inv.mig_enabled);
  BOOST_TEST(inv.driver_version == "6.3.27-V1.2.5");
  BOOST_TEST(Summary(inv, Strategy::kMixed) == (std::vector<std::string>{"hygon.com/hcu:8"}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(sim_z100l_mixed_discovers_the_pre_split_vhcus) {
  testing::TempDir root;
  NodeInventory inv = DiscoverSim("z100l-mixed", root);
  BOOST_REQUIRE(inv.cards.size() == 4u);
  BOOST_REQUIRE(inv.vhcus.size() == 6u);
  const Vhcu& v = inv.vhcus[4];
  BOOST_TEST(v.id == 4);
  BOOST_TEST(v.card == 3);
  BOOST_TEST(v.card_bdf == "0000:8e:00.0");
  BOOST_TEST(v.compute_units == 30);
  BOOST_TEST(v.memory_mib == 16376u);
  BOOST_TEST(v.cu_mask_lo == 0x3fffffffu);
  BOOST_TEST(v.conf_path == "/etc/vdev/vdev4.conf");
  BOOST_TEST(Summary(inv, Strategy::kMixed) ==
                 (std::vector<std::string>{"hygon.com/hcu:2", "hygon.com/hcu-share-15c-8g:4",
                                           "hygon.com/hcu-share-30c-16g:2"}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(sim_bw_mig_discovers_the_mig_instances) {
  testing::TempDir root;
  NodeInventory inv = DiscoverSim("bw-mig", root);
  BOOST_REQUIRE(inv.cards.size() == 4u);
  BOOST_TEST(inv.mig_enabled);
  BOOST_REQUIRE(inv.mig_instances.size() == 9u);
  const MigInstance& last = inv.mig_instances.back();  // sorted by card, gi, ci
  BOOST_TEST(last.card == 3);
  BOOST_TEST(last.gpu_instance == 3);
  BOOST_TEST(last.profile == "2g.15gb");
  BOOST_TEST(last.card_bdf == "0000:b9:00.0");
  BOOST_TEST(last.conf_path == "/etc/dmi_mig_config/ci/dev3gi3ci0.conf");
  BOOST_TEST(
      Summary(inv, Strategy::kMig) ==
          (std::vector<std::string>{"hygon.com/hcu-mig-2g-15gb:5", "hygon.com/hcu-mig-4g-31gb:3",
                                    "hygon.com/hcu-mig-8g-63gb:1"}),
      boost::test_tools::per_element());
  BOOST_TEST(Summary(inv, Strategy::kHcu) == (std::vector<std::string>{"hygon.com/hcu:0"}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(sim_vhcu_create_and_destroy_round_trip_through_the_backend) {
  testing::TempDir root;
  auto backend = OpenBackend(SimOptions("k100ai-8", root.path()));
  BOOST_REQUIRE_MESSAGE(backend.ok(), backend.status().ToString());
  auto vhcu = (*backend)->CreateVhcu(5, 30, 16384);
  BOOST_REQUIRE_MESSAGE(vhcu.ok(), vhcu.status().ToString());
  BOOST_TEST(vhcu->id == 0);  // lowest free id node-wide
  BOOST_TEST(vhcu->card == 5);
  BOOST_TEST(vhcu->card_bdf == "0000:a9:00.0");
  BOOST_TEST(testing::PathExists(root.Join("etc/vdev/vdev0.conf")));
  auto inv = (*backend)->Discover();
  BOOST_REQUIRE(inv.ok());
  BOOST_TEST(inv->VhcuCount(5) == 1);

  BOOST_TEST((*backend)->DestroyVhcu(0).ok());
  BOOST_TEST(!testing::PathExists(root.Join("etc/vdev/vdev0.conf")));
  BOOST_TEST(static_cast<int>((*backend)->DestroyVhcu(0).code()) ==
             static_cast<int>(StatusCode::kNotFound));
}

BOOST_AUTO_TEST_CASE(sim_watch_paths_include_the_sim_node_file) {
  testing::TempDir root;
  Options o = SimOptions("k100ai-8", root.path());
  auto backend = OpenBackend(o);
  BOOST_REQUIRE(backend.ok());
  std::vector<std::string> paths = (*backend)->WatchPaths();
  BOOST_REQUIRE(paths.size() == 3u);
  BOOST_TEST(paths[2] == o.sim_node_path);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp
