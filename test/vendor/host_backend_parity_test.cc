// The same node through both vendor libraries: HostBackend over
// DlopenVendorLib + the stand-in libraries must discover exactly what
// HostBackend over SimVendorLib discovers (--backend=host vs --backend=sim).
#include <algorithm>
#include <boost/test/unit_test.hpp>

#include "hcudp/backend.h"
#include "hcudp/options.h"
#include "stub_node.h"

namespace hcudp {
namespace {

using testing::SourcePath;
using testing::StubNode;

NodeInventory DiscoverWith(const Options& options) {
  StatusOr<std::unique_ptr<Backend>> backend = OpenBackend(options);
  BOOST_REQUIRE_MESSAGE(backend.ok(), backend.status().ToString());
  StatusOr<NodeInventory> inv = (*backend)->Discover();
  BOOST_REQUIRE_MESSAGE(inv.ok(), inv.status().ToString());
  return std::move(inv).value();
}

void CheckSameInventory(const NodeInventory& sim, const NodeInventory& host) {
  BOOST_CHECK_EQUAL(host.driver_version, sim.driver_version);
  BOOST_REQUIRE_EQUAL(host.cards.size(), sim.cards.size());
  for (size_t i = 0; i < sim.cards.size(); ++i) {
    const Card& s = sim.cards[i];
    const Card& h = host.cards[i];
    BOOST_TEST_CONTEXT("card " << i) {
      BOOST_CHECK_EQUAL(h.index, s.index);
      BOOST_CHECK_EQUAL(h.bdf, s.bdf);
      BOOST_CHECK_EQUAL(h.model, s.model);
      BOOST_CHECK_EQUAL(h.pci_device_id, s.pci_device_id);
      BOOST_CHECK_EQUAL(h.serial, s.serial);
      BOOST_CHECK_EQUAL(h.compute_units, s.compute_units);
      BOOST_CHECK_EQUAL(h.memory_bytes, s.memory_bytes);
      BOOST_CHECK_EQUAL(h.numa_node, s.numa_node);
      BOOST_CHECK(h.health == s.health);
      BOOST_CHECK(h.dri_nodes == s.dri_nodes);
    }
  }
  BOOST_REQUIRE_EQUAL(host.links.size(), sim.links.size());
  for (size_t i = 0; i < sim.links.size(); ++i) {
    BOOST_TEST_CONTEXT("link " << sim.links[i].src << "->" << sim.links[i].dst) {
      BOOST_CHECK(host.links[i].type == sim.links[i].type);
      BOOST_CHECK_EQUAL(host.links[i].hops, sim.links[i].hops);
      BOOST_CHECK_EQUAL(host.links[i].weight, sim.links[i].weight);
      BOOST_CHECK_EQUAL(host.links[i].up_links, sim.links[i].up_links);
    }
  }
  BOOST_REQUIRE_EQUAL(host.vhcus.size(), sim.vhcus.size());
  for (size_t i = 0; i < sim.vhcus.size(); ++i) {
    BOOST_CHECK_EQUAL(host.vhcus[i].id, sim.vhcus[i].id);
    BOOST_CHECK_EQUAL(host.vhcus[i].card, sim.vhcus[i].card);
    BOOST_CHECK_EQUAL(host.vhcus[i].card_bdf, sim.vhcus[i].card_bdf);
    BOOST_CHECK_EQUAL(host.vhcus[i].compute_units, sim.vhcus[i].compute_units);
  }
  BOOST_CHECK_EQUAL(host.mig_enabled, sim.mig_enabled);
  BOOST_REQUIRE_EQUAL(host.mig_instances.size(), sim.mig_instances.size());
  for (size_t i = 0; i < sim.mig_instances.size(); ++i) {
    BOOST_CHECK_EQUAL(host.mig_instances[i].card, sim.mig_instances[i].card);
    BOOST_CHECK_EQUAL(host.mig_instances[i].card_bdf, sim.mig_instances[i].card_bdf);
  }
  BOOST_CHECK_EQUAL(host.has_kfd, sim.has_kfd);
  BOOST_CHECK_EQUAL(host.has_mkfd, sim.has_mkfd);
}

BOOST_AUTO_TEST_SUITE(HostBackendParity)

BOOST_AUTO_TEST_CASE(HostBackendOverStandInLibrariesDiscoversWhatTheSimDiscovers) {
  for (const char* file :
       {"demo/nodes/k100ai-8.yaml", "demo/nodes/z100l-mixed.yaml", "demo/nodes/bw-mig.yaml",
        "test/fixtures/two-islands.yaml", "demo/nodes/k100ai-8-probe-order.yaml",
        "test/fixtures/bw-mig-probe-order.yaml"}) {
    BOOST_TEST_CONTEXT(file) {
      StubNode node(SourcePath(file));
      Options sim;
      sim.backend = BackendKind::kSim;
      sim.sim_node_path = node.sim_node();
      sim.host_root = node.host_root();
      Options host;
      host.backend = BackendKind::kHost;
      host.hyhal_path = StubNode::StubHyhal();
      host.host_root = node.host_root();
      CheckSameInventory(DiscoverWith(sim), DiscoverWith(host));
    }
  }
}

BOOST_AUTO_TEST_CASE(HostBackendCreatesAndDestroysVhcusThroughDmi) {
  StubNode node(SourcePath("demo/nodes/k100ai-8.yaml"));
  Options host;
  host.backend = BackendKind::kHost;
  host.hyhal_path = StubNode::StubHyhal();
  host.host_root = node.host_root();
  StatusOr<std::unique_ptr<Backend>> backend = OpenBackend(host);
  BOOST_REQUIRE_MESSAGE(backend.ok(), backend.status().ToString());
  StatusOr<Vhcu> created = (*backend)->CreateVhcu(3, 20, 8192);
  BOOST_REQUIRE_MESSAGE(created.ok(), created.status().ToString());
  BOOST_CHECK_EQUAL(created->card, 3);
  BOOST_CHECK_EQUAL(created->compute_units, 20);
  BOOST_CHECK_EQUAL(created->memory_mib, 8192u);
  const Status destroyed = (*backend)->DestroyVhcu(created->id);
  BOOST_REQUIRE_MESSAGE(destroyed.ok(), destroyed.ToString());
  StatusOr<NodeInventory> inv = (*backend)->Discover();
  BOOST_REQUIRE(inv.ok());
  BOOST_CHECK(inv->vhcus.empty());
}

std::unique_ptr<Backend> HostBackendOn(const StubNode& node) {
  Options host;
  host.backend = BackendKind::kHost;
  host.hyhal_path = StubNode::StubHyhal();
  host.host_root = node.host_root();
  StatusOr<std::unique_ptr<Backend>> backend = OpenBackend(host);
  BOOST_REQUIRE_MESSAGE(backend.ok(), backend.status().ToString());
  return std::move(backend).value();
}

size_t Lines(const std::string& path) {
  if (!testing::PathExists(path)) return 0;
  const std::string text = testing::ReadFile(path);
  return static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
}

// Inventory and health are separate questions (issue 10.7): Discover is on
// HAMi's Allocate path and must never run hy-smi.
BOOST_AUTO_TEST_CASE(DiscoverNeverRunsHySmiAndAHealthQueryRunsItOnce) {
  StubNode node(SourcePath("demo/nodes/k100ai-8.yaml"));
  testing::TempDir dir;
  const std::string runs = dir.Join("hy-smi-runs");
  node.Control("hysmi_count=" + runs + "\nhysmi_word=2:Error\n");
  std::unique_ptr<Backend> backend = HostBackendOn(node);
  for (int i = 0; i < 3; ++i) BOOST_REQUIRE(backend->Discover().ok());
  BOOST_CHECK_EQUAL(Lines(runs), 0u);
  StatusOr<std::vector<CardHealthReport>> health = backend->QueryHealth();
  BOOST_REQUIRE_MESSAGE(health.ok(), health.status().ToString());
  BOOST_CHECK_EQUAL(Lines(runs), 1u);
  // Discover reports the health last queried, still without running it.
  StatusOr<NodeInventory> inv = backend->Discover();
  BOOST_REQUIRE(inv.ok());
  BOOST_CHECK(inv->cards[2].health == Health::kUnhealthy);
  BOOST_CHECK(inv->cards[1].health == Health::kHealthy);
  BOOST_CHECK_EQUAL(Lines(runs), 1u);
}

BOOST_AUTO_TEST_CASE(AVhcuMadeOnAnotherCardIsDestroyedAndTheCreateFailsNamingBoth) {
  StubNode node(SourcePath("demo/nodes/k100ai-8-probe-order.yaml"));
  std::unique_ptr<Backend> backend = HostBackendOn(node);
  // A library acting on another card than asked (what a wrong index map does).
  node.Control("create_on_card=0\n");
  StatusOr<Vhcu> created = backend->CreateVhcu(5, 20, 8192);
  BOOST_REQUIRE(!created.ok());
  const std::string& message = created.status().message();
  BOOST_CHECK_MESSAGE(message.find("0000:69:00.0") != std::string::npos, message);  // made on
  BOOST_CHECK_MESSAGE(message.find("card 5 (0000:49:00.0)") != std::string::npos, message);
  BOOST_CHECK_MESSAGE(message.find("destroyed") != std::string::npos, message);
  StatusOr<NodeInventory> inv = backend->Discover();
  BOOST_REQUIRE(inv.ok());
  BOOST_CHECK_EQUAL(inv->vhcus.size(), 2u);  // only the two pre-split ones
  BOOST_CHECK(!testing::PathExists(node.host_root() + "/etc/vdev/vdev2.conf"));
  node.Control("");
  StatusOr<Vhcu> right = backend->CreateVhcu(5, 20, 8192);
  BOOST_REQUIRE_MESSAGE(right.ok(), right.status().ToString());
  BOOST_CHECK_EQUAL(right->card, 5);
  BOOST_CHECK_EQUAL(right->card_bdf, "0000:49:00.0");
}

BOOST_AUTO_TEST_CASE(ACardThatNeedsAResetStaysListedAndTurnsUnhealthy) {
  StubNode node(SourcePath("demo/nodes/k100ai-8-probe-order.yaml"));
  std::unique_ptr<Backend> backend = HostBackendOn(node);
  node.Control("reset_required=3\n");
  StatusOr<std::vector<CardHealthReport>> health = backend->QueryHealth();
  BOOST_REQUIRE_MESSAGE(health.ok(), health.status().ToString());
  StatusOr<NodeInventory> inv = backend->Discover();
  BOOST_REQUIRE_MESSAGE(inv.ok(), inv.status().ToString());
  BOOST_REQUIRE_EQUAL(inv->cards.size(), 8u);
  const Card* card = inv->FindCard(3);
  BOOST_REQUIRE(card != nullptr);
  BOOST_CHECK_EQUAL(card->bdf, "0000:29:00.0");
  BOOST_CHECK_EQUAL(card->model, "K100_AI");
  BOOST_CHECK(card->health == Health::kUnhealthy);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp
