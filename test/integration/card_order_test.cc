// Card identity on a node whose driver probe order is not PCI order
// (reference/hcu-hardware.md §1.9, DESIGN.md §6): cards[].index is the KFD
// topology order, which is the DMI and RSMI index, and it runs 3,0,7,1,...
// in PCI-address rank. Whatever a caller names (a card by BDF, a vHCU, a MIG
// instance, a card index for `hcuctl vhcu create`, a card serial in a HAMi
// annotation) must land on that physical card, on --backend=sim and on
// --backend=host with the stand-in vendor libraries (HCUDP_TEST_BACKEND).
#include <yaml-cpp/yaml.h>

#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <map>

#include "hcudp/vdev_conf.h"
#include "integration/daemon_harness.h"
#include "integration/hami_node.h"

namespace hcudp::testing {
namespace {

constexpr char kProbeOrderNode[] = "demo/nodes/k100ai-8-probe-order.yaml";
constexpr char kProbeOrderMig[] = "test/fixtures/bw-mig-probe-order.yaml";

struct NodeCard {
  int index = 0;
  std::string bdf;
  std::string serial;
  int card_minor = 0;
  int render_minor = 0;
};

// The cards as the node file lists them, by index.
std::map<int, NodeCard> CardsOf(const std::string& node) {
  std::map<int, NodeCard> cards;
  for (const YAML::Node& c : YAML::LoadFile(SourcePath(node))["cards"]) {
    NodeCard card;
    card.index = c["index"].as<int>();
    card.bdf = c["bdf"].as<std::string>();
    card.serial = c["serial"].as<std::string>();
    card.card_minor = c["cardMinor"].as<int>();
    card.render_minor = c["renderMinor"].as<int>();
    cards[card.index] = card;
  }
  return cards;
}

std::set<std::string> DriNodes(const NodeCard& c, const std::string& perm = "rw") {
  return {DeviceSpec("/dev/dri/card" + std::to_string(c.card_minor), perm),
          DeviceSpec("/dev/dri/renderD" + std::to_string(c.render_minor), perm)};
}

// The DRI device specs of an Allocate response.
std::set<std::string> DriOf(const v1beta1::ContainerAllocateResponse& r) {
  std::set<std::string> dri;
  for (const std::string& spec : DeviceSpecs(r)) {
    if (spec.find("/dev/dri/") != std::string::npos) dri.insert(spec);
  }
  return dri;
}

VdevConf ReadConf(const std::string& path) {
  StatusOr<VdevConf> conf = ParseVdevConf(ReadFile(path));
  BOOST_REQUIRE_MESSAGE(conf.ok(), path << ": " << conf.status().ToString());
  return *conf;
}

// vdevN.conf names under host_root/etc/vdev.
std::set<std::string> Confs(const std::string& host_root) {
  std::set<std::string> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(host_root + "/etc/vdev", ec)) {
    const std::string n = e.path().filename().string();
    if (n.rfind("vdev", 0) == 0 && e.is_regular_file()) out.insert(n);
  }
  return out;
}

BOOST_AUTO_TEST_SUITE(card_order)

BOOST_AUTO_TEST_CASE(the_shipped_node_is_not_in_pci_order) {
  std::map<int, NodeCard> cards = CardsOf(kProbeOrderNode);
  BOOST_REQUIRE_EQUAL(cards.size(), 8u);
  std::vector<std::string> by_index;
  for (const auto& [index, c] : cards) by_index.push_back(c.bdf);
  BOOST_TEST(!std::is_sorted(by_index.begin(), by_index.end()));
}

BOOST_AUTO_TEST_CASE(every_whole_card_allocate_gets_the_named_cards_dri_nodes) {
  DaemonHarness h(kProbeOrderNode, {"--strategy=hcu"});
  h.Start();
  h.RequireRegistered("hygon.com/hcu");
  for (const auto& [index, card] : CardsOf(kProbeOrderNode)) {
    BOOST_TEST_CONTEXT("card " << index << " " << card.bdf) {
      auto r = AllocateOne(h, "hygon.com/hcu", {card.bdf});
      BOOST_TEST(DriOf(r) == DriNodes(card), boost::test_tools::per_element());
    }
  }
}

BOOST_AUTO_TEST_CASE(a_pre_split_vhcu_is_served_with_its_parent_cards_dri_nodes) {
  const NodeCard parent = CardsOf(kProbeOrderNode).at(2);
  DaemonHarness h(kProbeOrderNode, {"--strategy=vhcu"});
  h.Start();
  h.RequireRegistered("hygon.com/hcu-share-60c-32g");
  for (const std::string id : {"vdev0", "vdev1"}) {
    auto r = AllocateOne(h, "hygon.com/hcu-share-60c-32g", {id});
    BOOST_TEST(DriOf(r) == DriNodes(parent), boost::test_tools::per_element());
    BOOST_TEST(ReadConf(h.host_root() + "/etc/vdev/" + id + ".conf").pci_bus_id == parent.bdf);
  }
}

BOOST_AUTO_TEST_CASE(a_mig_instance_is_served_with_its_cards_dri_nodes) {
  std::map<int, NodeCard> cards = CardsOf(kProbeOrderMig);
  DaemonHarness h(kProbeOrderMig, {"--strategy=mig"});
  h.Start();
  h.RequireRegistered("hygon.com/hcu-mig-8g-63gb");
  auto full =
      AllocateOne(h, "hygon.com/hcu-mig-8g-63gb", {"MIG-90c192cf-d3ac-44af-8f21-ddb66cad4a26"});
  BOOST_TEST(DriOf(full) == DriNodes(cards.at(3)), boost::test_tools::per_element());
  auto half =
      AllocateOne(h, "hygon.com/hcu-mig-4g-31gb", {"MIG-6b0d549b-6f03-475a-9600-a35a099950d8"});
  BOOST_TEST(DriOf(half) == DriNodes(cards.at(0)), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(hcuctl_vhcu_create_lands_on_the_named_card) {
  const NodeCard card = CardsOf(kProbeOrderNode).at(5);  // PCI rank 2
  // Picks the new vHCU up at the next pulse (this test is not about events).
  DaemonHarness h(kProbeOrderNode, {"--strategy=vhcu", "--pulse=1"});
  h.Start();
  h.RequireRegistered("hygon.com/hcu-share-60c-32g");
  std::vector<std::string> argv = {BinaryPath("hcuctl/hcuctl")};
  for (const std::string& a : h.argv()) {
    for (const char* flag : {"--backend=", "--sim-node=", "--host-root=", "--hyhal-path="}) {
      if (a.rfind(flag, 0) == 0) argv.push_back(a);
    }
  }
  for (const char* a : {"vhcu", "create", "--card", "5", "--cu", "30", "--mem-mib", "4096"}) {
    argv.push_back(a);
  }
  const std::set<std::string> before = Confs(h.host_root());
  RunResult run = Run(argv);
  BOOST_REQUIRE_MESSAGE(run.exit_code == 0, run.out << run.err);
  std::set<std::string> made;
  for (const std::string& c : Confs(h.host_root())) {
    if (!before.count(c)) made.insert(c);
  }
  BOOST_REQUIRE_EQUAL(made.size(), 1u);
  const std::string conf = *made.begin();
  BOOST_TEST(ReadConf(h.host_root() + "/etc/vdev/" + conf).pci_bus_id == card.bdf);
  // The daemon serves it with that card's DRI nodes.
  const std::string id = conf.substr(0, conf.size() - 5);
  h.RequireRegistered("hygon.com/hcu-share-30c-4g");
  auto r = AllocateOne(h, "hygon.com/hcu-share-30c-4g", {id});
  BOOST_TEST(DriOf(r) == DriNodes(card), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a_hami_vhcu_is_created_on_the_card_the_scheduler_named) {
  const NodeCard card = CardsOf(kProbeOrderNode).at(4);  // PCI rank 6
  HamiNode n({}, {}, kProbeOrderNode);
  n.Start();
  n.SchedulePod({"probe-order", {{"main", "HCU-" + card.serial + ",HCU,8192,30:"}}});
  const std::set<std::string> before = n.Confs();
  auto r = n.MustAllocate(1);
  std::set<std::string> made;
  for (const std::string& c : n.Confs()) {
    if (!before.count(c)) made.insert(c);
  }
  BOOST_REQUIRE_EQUAL(made.size(), 1u);
  VdevConf conf = ReadConf(n.HostPath("/etc/vdev/" + *made.begin()));
  BOOST_TEST(conf.pci_bus_id == card.bdf);
  BOOST_TEST(DriOf(r) == DriNodes(card), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp::testing
