// HamiAgent on the node's one door (hcudp/node.h), as the daemon runs it:
// the Node gives the host root, the card health (its snapshot: what
// ListAndWatch sends) and, under a naming policy, the hcumem resource's name.
#include <boost/test/unit_test.hpp>

#include "hami/agent_fixture.h"
#include "hcudp/hami/node_devices.h"
#include "hcudp/node.h"

namespace hcudp::testing {
namespace {

BOOST_AUTO_TEST_SUITE(hami_agent_on_node)

BOOST_AUTO_TEST_CASE(registers_the_nodes_health_and_names_hcumem_by_its_policy) {
  AgentFixture f;  // the API server, the client and the host root
  NodeOptions no;
  no.options.backend = BackendKind::kSim;
  no.options.sim_node_path = SourcePath("demo/nodes/k100ai-8.yaml");
  no.options.host_root = f.root_.path();
  no.options.naming_policy = NamingPolicy::kModel;
  auto node = Node::Open(std::move(no));
  BOOST_REQUIRE_MESSAGE(node.ok(), node.status().ToString());
  // The watcher's verdict, published: card 0 Unhealthy, whatever a fresh
  // discovery says.
  auto inventory = (*node)->Look();
  BOOST_REQUIRE(inventory.ok());
  inventory->cards.at(0).health = Health::kUnhealthy;
  (*node)->state().Publish(*inventory, {});

  HamiAgentOptions o;
  o.node_name = "node1";
  o.resource_multiple = true;
  o.hcumem_resource.clear();  // named after the Node's cards
  o.register_interval = std::chrono::milliseconds(200);
  HamiAgent agent(**node, f.client_.get(), o);  // no host_root: the Node's
  BOOST_REQUIRE(agent.Start().ok());
  BOOST_REQUIRE(agent.ready());

  std::vector<hami::NodeDevice> devices;
  BOOST_REQUIRE(WaitUntil([&] {
    auto annotations = f.NodeAnnotations();
    auto it = annotations.find("hami.io/node-hcu-register");
    if (it == annotations.end()) return false;
    auto decoded = hami::DecodeNodeDevices(it->second);
    if (!decoded.ok()) return false;
    devices = *decoded;
    return true;
  }));
  BOOST_REQUIRE(devices.size() == 8u);
  for (const hami::NodeDevice& d : devices) {
    BOOST_TEST_CONTEXT(d.id) { BOOST_TEST(d.healthy == (d.index != 0)); }
  }
  std::string json;
  BOOST_TEST(WaitUntil([&] {
    json = f.api_.MustRequest("GET", "/api/v1/nodes/node1");
    return json.find("\"hygon.com/K100_AI_hcumem\"") != std::string::npos;
  }), json);
  agent.Stop();
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp::testing
