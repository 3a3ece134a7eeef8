// HostBackend and MIG: CI confs under /etc/dmi_mig_config/ci, profile names
// from the KFD shader-engine count.
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

// The ci conf of hcu-hardware.md §6.3, as `hy-smi mig` writes it.
const std::string& Dev3Gi1Ci0() {
  static const std::string text =
      hcudp::testing::ReadFile(hcudp::testing::SourcePath("test/fixtures/mig/dev3gi1ci0.conf"));
  return text;
}

// Four BW200 cards in MIG mode; KFD CPU nodes 0-3, GPU nodes 4-7 with 8 SEs.
struct MigNode {
  testing::TempDir root;
  FakeVendorLib* fake = nullptr;
  std::unique_ptr<Backend> backend;

  MigNode() {
    auto lib = std::make_unique<FakeVendorLib>();
    const char* bdfs[] = {"0000:09:00.0", "0000:39:00.0", "0000:89:00.0", "0000:b9:00.0"};
    for (int i = 0; i < 4; ++i) {
      FakeCard c;
      c.bdf = bdfs[i];
      c.dmi_name = "BW200";
      c.compute_units = 80;
      c.numa_node = i;
      lib->cards.push_back(c);
      testing::WriteKfdNode(root.path(), i, 0, 0, 0);
      testing::WriteKfdNode(root.path(), 4 + i, 22078 + i, 16, 2);
    }
    lib->mig_enabled = true;
    testing::WriteFile(root.Join("etc/dmi_mig_config/ci/dev3gi1ci0.conf"), Dev3Gi1Ci0());
    testing::WriteMigConf(
        root.path(), 0,
        testing::MakeMigConf(bdfs[0], 3, 1, 16380, "6513270e-269e-4d37-b2a7-4de452e6b438"));
    testing::WriteMigConf(
        root.path(), 2,
        testing::MakeMigConf(bdfs[2], 0, 4, 65520, "90c192cf-d3ac-44af-8f21-ddb66cad4a26"));
    fake = lib.get();
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

std::vector<std::string> Profiles(const NodeInventory& inv) {
  std::vector<std::string> out;
  for (const MigInstance& m : inv.mig_instances) out.push_back(m.profile);
  return out;
}

BOOST_AUTO_TEST_SUITE(host_backend_mig)

BOOST_AUTO_TEST_CASE(ci_confs_become_mig_instances) {
  MigNode node;
  NodeInventory inv = node.Discover();
  BOOST_TEST(inv.mig_enabled);
  BOOST_REQUIRE(inv.mig_instances.size() == 3u);
  const MigInstance& m = inv.mig_instances[2];  // sorted by card: 0, 2, 3
  BOOST_TEST(m.card == 3);
  BOOST_TEST(m.card_bdf == "0000:b9:00.0");
  BOOST_TEST(m.gpu_instance == 1);
  BOOST_TEST(m.compute_instance == 0);
  BOOST_TEST(m.profile == "4g.31gb");
  BOOST_TEST(m.compute_units == 40);
  BOOST_TEST(m.memory_mib == 32760u);
  BOOST_TEST(m.uuid == "0fd630f1-f29d-4da9-953f-48f1a09f76b5");
  BOOST_TEST(m.device_id() == "MIG-0fd630f1-f29d-4da9-953f-48f1a09f76b5");
  BOOST_TEST(m.conf_path == "/etc/dmi_mig_config/ci/dev3gi1ci0.conf");
  BOOST_TEST(Profiles(inv) == (std::vector<std::string>{"2g.15gb", "8g.63gb", "4g.31gb"}),
             boost::test_tools::per_element());
}

// dev<N> is the MIG library's index: when the card at the conf's pci was not
// discovered, N names some other card, whose DRI nodes it would be served with.
BOOST_AUTO_TEST_CASE(a_mig_instance_whose_card_was_not_discovered_is_on_no_card) {
  MigNode node;
  node.fake->failing_cards = {3};
  // 0000:b9:00.0 (card 3) is MIG device 1 on this node's probe order.
  testing::WriteMigConf(
      node.root.path(), 1,
      testing::MakeMigConf("0000:b9:00.0", 2, 1, 16380, "3c1d7a52-0b9e-4f55-8a51-6f0d2e9b7c14"));
  NodeInventory inv = node.Discover();
  BOOST_REQUIRE(inv.FindCard(3) == nullptr);
  for (const MigInstance& m : inv.mig_instances) {
    if (m.card_bdf == "0000:b9:00.0") BOOST_TEST(m.card == -1, m.conf_path);
  }
}

// devN is the MIG library's index, which follows the driver's probe order,
// not PCI order: on this node MIG device 1 is the card at 0000:b9:00.0
// (card 3). The inventory stays sorted by the discovered card (device.h).
BOOST_AUTO_TEST_CASE(mig_instances_are_sorted_by_discovered_card_when_probe_order_is_not_pci_order) {
  MigNode node;
  testing::WriteMigConf(
      node.root.path(), 1,
      testing::MakeMigConf("0000:b9:00.0", 2, 1, 16380, "3c1d7a52-0b9e-4f55-8a51-6f0d2e9b7c14"));
  NodeInventory inv = node.Discover();
  std::vector<int> cards;
  std::vector<int> gis;
  for (const MigInstance& m : inv.mig_instances) {
    cards.push_back(m.card);
    gis.push_back(m.gpu_instance);
  }
  BOOST_TEST(cards == (std::vector<int>{0, 2, 3, 3}), boost::test_tools::per_element());
  BOOST_TEST(gis == (std::vector<int>{3, 0, 1, 2}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(profile_names_use_the_first_gpu_node_in_numeric_order) {
  MigNode node;
  // Node 10 sorts before 4 as text; it has 4 SEs, so taking it would halve
  // every profile ("1g.15gb").
  testing::WriteKfdNode(node.root.path(), 10, 999, 8, 2);
  BOOST_TEST(Profiles(node.Discover())[0] == "2g.15gb");
}

BOOST_AUTO_TEST_CASE(a_ci_using_fewer_slices_than_its_gi_names_both) {
  MigNode node;
  MigConf conf =
      testing::MakeMigConf("0000:39:00.0", 1, 2, 32760, "6b0d549b-6f03-475a-9600-a35a099950d8");
  conf.ci.gpu_slice_count = 1;
  testing::WriteMigConf(node.root.path(), 1, conf);
  BOOST_TEST(Profiles(node.Discover())[1] == "2c.4g.31gb");
}

BOOST_AUTO_TEST_CASE(a_ci_path_that_is_a_directory_is_skipped) {
  MigNode node;
  testing::WriteFile(node.root.Join("etc/dmi_mig_config/ci/dev1gi1ci0.conf/x"), "");
  BOOST_TEST(node.Discover().mig_instances.size() == 3u);
}

BOOST_AUTO_TEST_CASE(unparsable_confs_are_gaps_and_other_names_are_skipped) {
  MigNode node;
  testing::WriteFile(node.root.Join("etc/dmi_mig_config/ci/dev1gi2ci0.conf"), "pci: nonsense\n");
  std::string copy = Dev3Gi1Ci0();
  testing::WriteFile(node.root.Join("etc/dmi_mig_config/ci/dev3-copy.conf"), copy);
  testing::WriteFile(node.root.Join("etc/dmi_mig_config/ci/README"), "not a conf");
  NodeInventory inv = node.Discover();
  BOOST_TEST(inv.mig_instances.size() == 3u);
  BOOST_REQUIRE(inv.mig_gaps.size() == 1u);  // dev1gi2ci0.conf: it may be an instance
  BOOST_TEST(inv.mig_gaps[0].path.find("dev1gi2ci0.conf") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(without_a_kfd_gpu_node_no_instance_can_be_named) {
  MigNode node;
  for (int i = 4; i < 8; ++i) {
    testing::WriteFile(
        node.root.Join("sys/class/kfd/kfd/topology/nodes/" + std::to_string(i) + "/gpu_id"), "0\n");
  }
  NodeInventory inv = node.Discover();
  BOOST_TEST(inv.mig_enabled);
  BOOST_TEST(inv.mig_instances.empty());
}

BOOST_AUTO_TEST_CASE(confs_are_ignored_when_mig_mode_is_off) {
  MigNode node;
  node.fake->mig_enabled = false;
  NodeInventory inv = node.Discover();
  BOOST_TEST(!inv.mig_enabled);
  BOOST_TEST(inv.mig_instances.empty());
}

BOOST_AUTO_TEST_CASE(mig_mode_with_no_instances_is_an_empty_list) {
  testing::TempDir root;
  auto lib = std::make_unique<FakeVendorLib>();
  lib->cards.resize(1);
  lib->mig_enabled = true;
  HostBackendOptions options;
  options.host_root = root.path();
  auto inv = NewHostBackend(options, std::move(lib))->Discover();
  BOOST_REQUIRE(inv.ok());
  BOOST_TEST(inv->mig_enabled);
  BOOST_TEST(inv->mig_instances.empty());
}

// Issue 28: main logged "MIG mode unknown, assuming off" and offered whole
// cards. Unknown, never off: the instances the node records are still read.
BOOST_AUTO_TEST_CASE(a_failed_mig_mode_query_is_unknown_not_off) {
  MigNode node;
  node.fake->mig_mode_fails = true;
  NodeInventory inv = node.Discover();
  BOOST_TEST((inv.LookupMigMode().certainty() == Certainty::kUnknown));
  BOOST_TEST(inv.LookupMigMode().why().find("UNKNOWN") != std::string::npos);
  BOOST_TEST(!inv.MigStateKnown());
  BOOST_TEST(!inv.AllKnown());
  BOOST_TEST(inv.mig_instances.size() == 3u);
}

BOOST_AUTO_TEST_CASE(a_ci_conf_that_does_not_read_is_a_gap_not_a_missing_instance) {
  MigNode node;
  testing::WriteFile(node.root.Join("etc/dmi_mig_config/ci/dev1gi0ci0.conf"), "torn");
  NodeInventory inv = node.Discover();
  BOOST_TEST((inv.LookupMigMode().certainty() == Certainty::kFound));
  BOOST_REQUIRE(inv.mig_gaps.size() == 1u);
  BOOST_TEST((inv.mig_gaps[0].kind == UnknownReason::kMigConfUnreadable));
  BOOST_TEST(inv.mig_gaps[0].path.find("dev1gi0ci0.conf") != std::string::npos);
  // What the torn conf hides may be any instance.
  BOOST_TEST((inv.LookupMig("MIG-00000000-0000-0000-0000-000000000000").certainty() ==
              Certainty::kUnknown));
  BOOST_TEST(
      (inv.LookupMig("90c192cf-d3ac-44af-8f21-ddb66cad4a26").certainty() == Certainty::kFound));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp
