// DraAgent (hcudp/dra/agent.h) on a simulated node, its slices on the fake
// API server and its claims from FakeClaims: the DRA runtime as a library,
// without the daemon.
#include "hcudp/dra/agent.h"

#include <sys/stat.h>

#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <functional>
#include <thread>

#include "dra_prepare/prepare_fixture.h"
#include "fake_apiserver/fake_apiserver_process.h"
#include "hcudp/backend_wrapper.h"
#include "hcudp/node.h"

namespace hcudp::testing {
namespace {

using std::chrono::milliseconds;

constexpr char kProbeOrderNode[] = "k100ai-8-probe-order.yaml";
constexpr char kPreSplitCard[] = "hcu-0000-e9-00-0";  // carries vdev0 and vdev1

std::unique_ptr<KubeClient> Client(const FakeApiServer& api) {
  KubeConfig config;
  config.source = "test";
  config.server = api.server_url();
  config.ca_pem = ReadFile(api.ca_file());
  config.token_file = api.token_file();
  auto client = KubeClient::New(config, KubeClientOptions{});
  BOOST_REQUIRE(client.ok());
  return std::move(*client);
}

// A claim allocated to one device of the pool, without consumed capacity.
dra::ClaimRef ClaimOn(SimDraNode& node, const std::string& name, const std::string& device) {
  const std::string uid = "uid-" + name;
  std::string json = ClaimJson(uid, name, "[" + ExactRequest("hcu") + "]");
  json.pop_back();  // reopen the object for its status
  json += R"(,"status":{"allocation":{"devices":{"results":[{"request":"hcu","driver":)"
          R"("dra.hygon.com","pool":"node-a","device":")" +
          device + R"("}]}},"reservedFor":[{"resource":"pods","name":"p","uid":"pod-)" + name +
          R"("}]}})";
  node.claims.Put(json);
  return {"ns1", name, uid};
}

// A Node over the fixture's backend (not owned: a BackendWrapper forwards),
// its state published by hand, as the watcher would.
std::unique_ptr<Node> OpenNode(SimDraNode& sim) {
  NodeOptions o;
  o.options.host_root = sim.Root();
  o.backend = std::make_unique<BackendWrapper>(*sim.backend);
  auto node = Node::Open(std::move(o));
  BOOST_REQUIRE_MESSAGE(node.ok(), node.status().ToString());
  (*node)->state().Publish(sim.Inventory(), {});
  return std::move(*node);
}

struct Agent {
  Agent(SimDraNode& sim, Node& node, KubeClient& client) {
    dra::DraAgentOptions o;
    o.preparer.pool_name = "node-a";
    o.slices.params.node_name = "node-a";
    o.slices.params.node_uid = "node-uid";
    o.tick_period = milliseconds(50);
    o.fetch = sim.claims.Fetcher();
    auto made = dra::DraAgent::New(node, client, std::move(o));
    BOOST_REQUIRE_MESSAGE(made.ok(), made.status().ToString());
    agent = std::move(*made);
  }
  std::unique_ptr<dra::DraAgent> agent;
};

bool InPool(const dra::PoolPlan& plan, const std::string& name) {
  for (const dra::PoolDevice& d : plan.devices) {
    if (d.name == name) return true;
  }
  return false;
}

// Polls `ok` for up to `timeout`.
bool Eventually(const std::function<bool()>& ok, milliseconds timeout = milliseconds(3000)) {
  const auto until = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < until) {
    if (ok()) return true;
    std::this_thread::sleep_for(milliseconds(20));
  }
  return ok();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(dra_agent)

BOOST_AUTO_TEST_CASE(the_pool_waits_for_recover_and_follows_every_prepare_and_unprepare) {
  FakeApiServer api;
  auto client = Client(api);
  SimDraNode node(kProbeOrderNode);
  std::unique_ptr<Node> door = OpenNode(node);
  const std::string held = std::string(kPreSplitCard) + "-vdev0";
  {
    Agent a(node, *door, *client);
    BOOST_REQUIRE(a.agent->Recover().ok());
    a.agent->Start();
    BOOST_REQUIRE(Eventually([&] { return InPool(a.agent->Pool(), held); }));
    auto answer = a.agent->Prepare(ClaimOn(node, "held", held));
    BOOST_REQUIRE_MESSAGE(answer.ok() && answer->error.empty(),
                          (answer.ok() ? answer->error : answer.status().ToString()));
    BOOST_TEST(Eventually([&] { return !InPool(a.agent->Pool(), held); }),
               held << " still offered after its Prepare");
    BOOST_TEST(!InPool(a.agent->Pool(), kPreSplitCard));
  }
  // A restart: nothing is computed or published before Recover.
  Agent b(node, *door, *client);
  b.agent->OnNodeChanged();
  std::this_thread::sleep_for(milliseconds(300));
  BOOST_TEST(b.agent->Pool().devices.empty());
  BOOST_TEST(b.agent->slices().syncs == 0u);
  BOOST_REQUIRE(b.agent->Recover().ok());
  b.agent->Start();
  BOOST_REQUIRE(Eventually([&] { return !b.agent->Pool().devices.empty(); }));
  BOOST_TEST(!InPool(b.agent->Pool(), held), held << " offered after the restart");
  BOOST_TEST(!InPool(b.agent->Pool(), kPreSplitCard), "its card offered whole");
  BOOST_TEST(InPool(b.agent->Pool(), std::string(kPreSplitCard) + "-vdev1"));
  // Neither the vHCU nor its card goes to a second claim.
  auto twice = b.agent->Prepare(ClaimOn(node, "second", held));
  BOOST_TEST((!twice.ok() || !twice->error.empty()), "prepared twice");
  auto whole = b.agent->Prepare(ClaimOn(node, "whole", kPreSplitCard));
  BOOST_REQUIRE(whole.ok());
  BOOST_TEST(whole->error.find("is not free") != std::string::npos, whole->error);

  BOOST_REQUIRE(b.agent->Unprepare({"ns1", "held", "uid-held"}).ok());
  BOOST_TEST(Eventually([&] { return InPool(b.agent->Pool(), held); }),
             held << " not offered again after its Unprepare");
}

BOOST_AUTO_TEST_CASE(a_card_gone_makes_its_claims_devices_unhealthy_and_unprepares_nothing) {
  FakeApiServer api;
  auto client = Client(api);
  SimDraNode node("k100ai-8.yaml");
  std::unique_ptr<Node> door = OpenNode(node);
  NodeState& state = door->state();
  Agent a(node, *door, *client);
  BOOST_REQUIRE(a.agent->Recover().ok());
  a.agent->Start();
  auto ref = node.AllocateAndStore(
      ClaimJson("uid-live", "live",
                "[" + ExactRequest("hcu", R"({"cores":"30","memory":"8Gi"})") + "]"),
      "pod-live");
  auto answer = a.agent->Prepare(ref);
  BOOST_REQUIRE_MESSAGE(answer.ok() && answer->error.empty(),
                        (answer.ok() ? answer->error : answer.status().ToString()));
  BOOST_REQUIRE(Eventually([&] {
    auto h = a.agent->Health();
    return h.size() == 1u && h[0].health == dra::DeviceHealthStatus::kHealthy;
  }));
  const dra::PreparedDevice device = a.agent->Prepared().at(0).devices.at(0);

  NodeInventory without = node.Inventory();
  without.cards.erase(std::remove_if(without.cards.begin(), without.cards.end(),
                                     [&](const Card& c) { return c.bdf == device.card_bdf; }),
                      without.cards.end());
  state.Publish(without, {});
  a.agent->OnNodeChanged();
  BOOST_TEST(Eventually([&] {
    auto h = a.agent->Health();
    return h.size() == 1u && h[0].health == dra::DeviceHealthStatus::kUnhealthy;
  }));
  std::this_thread::sleep_for(milliseconds(300));  // several ticks
  BOOST_TEST(a.agent->Prepared().size() == 1u, "the claim was unprepared");
  struct stat st {};
  BOOST_TEST(::stat(node.Path("/etc/vdev/vdev" + std::to_string(device.vhcu_id) + ".conf").c_str(),
                    &st) == 0,
             "its vHCU was destroyed");
  BOOST_TEST(!node.Files("/etc/vdev/dynamic").empty(), "its mark was removed");

  state.Publish(node.Inventory(), {});
  a.agent->OnNodeChanged();
  BOOST_TEST(Eventually([&] {
    auto h = a.agent->Health();
    return h.size() == 1u && h[0].health == dra::DeviceHealthStatus::kHealthy;
  }));
  BOOST_REQUIRE(a.agent->Unprepare(ref).ok());
  BOOST_TEST(a.agent->Prepared().empty());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace hcudp::testing
