// HostBackend discovery of cards: vendor answers, DRI nodes from sysfs,
// /dev/kfd and /dev/mkfd, health, links.
#include <boost/test/unit_test.hpp>
#include <memory>
#include <string>
#include <vector>

#include "backend/fake_vendor_lib.h"
#include "backend/node_tree.h"
#include "hcudp/backend.h"
#include "testing/testutil.h"

namespace hcudp {
namespace {

using testing::FakeCard;
using testing::FakeVendorLib;

// A Z100L node under a temporary host-root; `fake` stays valid as long as
// `backend` lives.
struct Z100lNode {
  testing::TempDir root;
  FakeVendorLib* fake = nullptr;
  std::unique_ptr<Backend> backend;

  Z100lNode() {
    auto lib = std::make_unique<FakeVendorLib>();
    lib->cards = testing::Z100lCards();
    fake = lib.get();
    for (int i = 0; i < 4; ++i) {
      testing::WriteDri(root.path(), lib->cards[i].bdf, i + 1, 128 + i);
    }
    HostBackendOptions options;
    options.host_root = root.path();
    backend = NewHostBackend(options, std::move(lib));
  }

  NodeInventory Discover() {
    auto inv = backend->Discover();
    BOOST_REQUIRE_MESSAGE(inv.ok(), inv.status().ToString());
    return *inv;
  }
};

BOOST_AUTO_TEST_SUITE(host_backend_cards)

BOOST_AUTO_TEST_CASE(cards_come_from_the_vendor_lib) {
  Z100lNode node;
  NodeInventory inv = node.Discover();
  BOOST_REQUIRE(inv.cards.size() == 4u);
  const Card& c = inv.cards[2];
  BOOST_TEST(c.index == 2);
  BOOST_TEST(c.bdf == "0000:8b:00.0");
  BOOST_TEST(c.model == "Z100L");
  BOOST_TEST(c.serial == "T6Q2210021060101");
  BOOST_TEST(c.pci_device_id == 0x55b7);
  BOOST_TEST(c.compute_units == 60);
  BOOST_TEST(c.memory_mib() == 32752u);
  BOOST_TEST(c.numa_node == 1);
  BOOST_TEST(inv.driver_version == "6.3.27-V1.2.5");
}

BOOST_AUTO_TEST_CASE(model_is_cut_at_the_first_comma_and_non_ascii_bytes_dropped) {
  Z100lNode node;
  node.fake->cards[0].dmi_name = std::string("K100\xC3\xA9_AI,rev B") + '\0' + "junk";
  node.fake->cards[0].bdf = "0000:0B:00.0";  // upper-case from the library
  NodeInventory inv = node.Discover();
  BOOST_TEST(inv.cards[0].model == "K100_AI");
  BOOST_TEST(inv.cards[0].bdf == "0000:0b:00.0");
}

BOOST_AUTO_TEST_CASE(negative_numa_means_no_numa_node) {
  Z100lNode node;
  node.fake->cards[1].numa_node = -1;
  BOOST_TEST(node.Discover().cards[1].numa_node == kNoNumaNode);
}

BOOST_AUTO_TEST_CASE(a_card_whose_queries_fail_is_skipped_not_the_whole_node) {
  Z100lNode node;
  node.fake->failing_cards = {1};
  NodeInventory inv = node.Discover();
  BOOST_REQUIRE(inv.cards.size() == 3u);
  BOOST_TEST(inv.unknown_cards.size() == 1u);  // unknown, never absent (unknown_cards_test)
  BOOST_TEST(inv.cards[0].index == 0);
  BOOST_TEST(inv.cards[1].index == 2);
  BOOST_TEST(inv.cards[2].index == 3);
  BOOST_TEST(inv.links.size() == 6u);  // pairs among the three that answered
}

BOOST_AUTO_TEST_CASE(discovery_fails_when_the_card_count_is_unknown) {
  Z100lNode node;
  node.fake->card_count_error = UnavailableError("rsmi not initialised");
  auto inv = node.backend->Discover();
  BOOST_REQUIRE(!inv.ok());
  BOOST_TEST(inv.status().message().find("rsmi not initialised") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(dri_nodes_are_found_per_bdf_as_host_paths) {
  Z100lNode node;
  NodeInventory inv = node.Discover();
  BOOST_TEST(
      inv.cards[0].dri_nodes == (std::vector<std::string>{"/dev/dri/card1", "/dev/dri/renderD128"}),
      boost::test_tools::per_element());
  BOOST_TEST(
      inv.cards[3].dri_nodes == (std::vector<std::string>{"/dev/dri/card4", "/dev/dri/renderD131"}),
      boost::test_tools::per_element());
  BOOST_TEST(inv.cards[3].dri_error.empty());
}

BOOST_AUTO_TEST_CASE(a_module_whose_driver_dir_has_another_name_is_ignored) {
  testing::TempDir root;
  testing::WriteDri(root.path(), "0000:09:00.0", 1, 128, true, "hycu", "amdgpu");
  testing::WriteDri(root.path(), "0000:29:00.0", 2, 129, true, "hycu", "amdgpu");
  testing::WriteDri(root.path(), "0000:29:00.0", 2, 129, true, "hydcu", "hydcu");
  auto lib = std::make_unique<FakeVendorLib>();
  lib->cards.resize(2);
  lib->cards[1].bdf = "0000:29:00.0";
  HostBackendOptions options;
  options.host_root = root.path();
  auto inv = NewHostBackend(options, std::move(lib))->Discover();
  BOOST_REQUIRE(inv.ok());
  BOOST_TEST(inv->cards[0].dri_nodes.empty());
  BOOST_TEST(!inv->cards[0].dri_error.empty());
  // The older module name works when module == driver.
  BOOST_TEST(inv->cards[1].dri_nodes.size() == 2u);
}

BOOST_AUTO_TEST_CASE(a_dri_entry_without_its_dev_node_is_left_out) {
  Z100lNode node;
  std::remove((node.root.path() + "/dev/dri/renderD129").c_str());
  NodeInventory inv = node.Discover();
  BOOST_TEST(inv.cards[1].dri_nodes == (std::vector<std::string>{"/dev/dri/card2"}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(missing_dri_is_reported_per_card_and_discovery_succeeds) {
  Z100lNode node;
  node.fake->cards.push_back(FakeCard());  // 0000:09:00.0: no sysfs entry
  NodeInventory inv = node.Discover();
  BOOST_REQUIRE(inv.cards.size() == 5u);
  const Card& c = inv.cards[4];
  BOOST_TEST(c.dri_nodes.empty());
  BOOST_TEST(c.dri_error.find(node.root.path() + "/sys/module/*/drivers/pci:*/0000:09:00.0/drm") !=
                 std::string::npos,
             c.dri_error);
}

BOOST_AUTO_TEST_CASE(dev_nodes_missing_for_every_entry_are_named_in_the_error) {
  testing::TempDir root;
  testing::WriteDri(root.path(), "0000:09:00.0", 1, 128, /*with_dev_nodes=*/false);
  auto lib = std::make_unique<FakeVendorLib>();
  lib->cards.resize(1);
  HostBackendOptions options;
  options.host_root = root.path();
  auto inv = NewHostBackend(options, std::move(lib))->Discover();
  BOOST_REQUIRE(inv.ok());
  BOOST_TEST(inv->cards[0].dri_nodes.empty());
  BOOST_TEST(inv->cards[0].dri_error.find("/dev/dri/renderD128") != std::string::npos,
             inv->cards[0].dri_error);
}

BOOST_AUTO_TEST_CASE(kfd_and_mkfd_presence_follows_the_host_root) {
  Z100lNode node;
  NodeInventory before = node.Discover();
  BOOST_TEST(!before.has_kfd);
  BOOST_TEST(!before.has_mkfd);
  testing::WriteFile(node.root.Join("dev/kfd"), "");
  NodeInventory kfd_only = node.Discover();
  BOOST_TEST(kfd_only.has_kfd);
  BOOST_TEST(!kfd_only.has_mkfd);
  testing::WriteFile(node.root.Join("dev/mkfd"), "");
  BOOST_TEST(node.Discover().has_mkfd);
}

BOOST_AUTO_TEST_CASE(health_comes_from_the_health_source_by_bdf) {
  Z100lNode node;
  node.fake->health = {{"0000:0b:00.0", Health::kHealthy, ""},
                       {"0000:0E:00.0", Health::kUnhealthy, "ECC"},
                       {"0000:8e:00.0", Health::kHealthy, ""}};  // card 2 not listed
  // Discover does not ask the health source; it reports the last answer.
  BOOST_TEST(HealthName(node.Discover().cards[1].health) == "Healthy");
  BOOST_REQUIRE(node.backend->QueryHealth().ok());
  NodeInventory inv = node.Discover();
  BOOST_TEST(HealthName(inv.cards[0].health) == "Healthy");
  BOOST_TEST(HealthName(inv.cards[1].health) == "Unhealthy");
  BOOST_TEST(HealthName(inv.cards[2].health) == "Unhealthy");  // missing: as the vendor
  BOOST_TEST(HealthName(inv.cards[3].health) == "Healthy");
}

BOOST_AUTO_TEST_CASE(a_failed_health_query_leaves_cards_healthy) {
  Z100lNode node;
  node.fake->health_error = UnavailableError("hy-smi timed out");
  NodeInventory inv = node.Discover();
  BOOST_REQUIRE_EQUAL(inv.cards.size(), 4u);
  for (const Card& c : inv.cards) BOOST_TEST(HealthName(c.health) == "Healthy");
  BOOST_TEST(!node.backend->QueryHealth().ok());
}

BOOST_AUTO_TEST_CASE(links_are_asked_for_every_ordered_pair) {
  Z100lNode node;
  RsmiLink hsl;
  hsl.type = LinkType::kHsl;
  hsl.hops = 1;
  hsl.weight = 15;
  hsl.up_links = 2;
  node.fake->links[{2, 3}] = hsl;
  NodeInventory inv = node.Discover();
  BOOST_TEST(inv.links.size() == 12u);
  const Link* l = inv.FindLink(2, 3);
  BOOST_REQUIRE(l != nullptr);
  BOOST_TEST(LinkTypeName(l->type) == "HSL");
  BOOST_TEST(l->up_links == 2);
  BOOST_TEST(l->weight == 15);
  BOOST_TEST(LinkTypeName(inv.FindLink(3, 2)->type) == "PCIE");
  BOOST_TEST(inv.FindLink(1, 1) == nullptr);
}

BOOST_AUTO_TEST_CASE(watch_paths_are_the_conf_dirs_and_the_vendor_lib_paths) {
  Z100lNode node;
  node.fake->watch_paths = {"/tmp/node.yaml"};
  std::vector<std::string> paths = node.backend->WatchPaths();
  BOOST_TEST(paths == (std::vector<std::string>{node.root.Join("etc/vdev"),
                                                node.root.Join("etc/dmi_mig_config/ci"),
                                                "/tmp/node.yaml"}),
             boost::test_tools::per_element());
  BOOST_TEST(node.backend->host_root() == node.root.path());
}

// Counts Shutdown() calls somewhere that outlives the library.
class ShutdownCounter : public FakeVendorLib {
 public:
  explicit ShutdownCounter(int* count) : count_(count) {}
  void Shutdown() override { ++*count_; }

 private:
  int* count_;
};

BOOST_AUTO_TEST_CASE(the_backend_shuts_its_vendor_lib_down_once) {
  int shutdowns = 0;
  {
    auto backend =
        NewHostBackend(HostBackendOptions(), std::make_unique<ShutdownCounter>(&shutdowns));
    BOOST_TEST(shutdowns == 0);
  }
  BOOST_TEST(shutdowns == 1);
}

BOOST_AUTO_TEST_CASE(host_path_joins_with_exactly_one_slash) {
  BOOST_TEST(HostPath("/", "/dev/kfd") == "/dev/kfd");
  BOOST_TEST(HostPath("/tmp/root", "/dev/kfd") == "/tmp/root/dev/kfd");
  BOOST_TEST(HostPath("/tmp/root/", "dev/kfd") == "/tmp/root/dev/kfd");
  BOOST_TEST(HostPath("/tmp/root//", "//etc/vdev") == "/tmp/root/etc/vdev");
  BOOST_TEST(HostPath("", "/dev/kfd") == "/dev/kfd");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp
