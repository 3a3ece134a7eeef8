// HamiAgent against the fake API server and the simulated k100ai-8 node:
// the pieces the end-to-end suite does not pin down (pending-pod choice,
// exact lock release, handshake refresh, the opt-in pod killer, RBAC).
#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "fake_apiserver/fake_apiserver_process.h"
#include "hami/agent_fixture.h"
#include "hcudp/backend.h"
#include "hcudp/hami_agent.h"
#include "hcudp/kube_objects.h"
#include "testing/hcu_toolkit_model.h"
#include "testing/sim_clock.h"
#include "testing/testutil.h"

namespace hcudp::testing {
namespace {

BOOST_AUTO_TEST_SUITE(hami_agent)

// The scheduler locks the node after the agent started: a lock already there
// at start is one an earlier process left (agent_lock_test.cc).

BOOST_AUTO_TEST_CASE(without_a_lock_the_oldest_allocating_pod_by_bind_time_is_served) {
  AgentFixture f;
  f.CreatePod("default", "newer", std::string(kSn0) + ",HCU,8192,30:;", 1740796900);
  f.CreatePod("default", "older", std::string(kSn1) + ",HCU,65520,100:;", 1740796800);
  f.Start();
  auto r = f.agent_->AllocateCount({1});
  BOOST_REQUIRE_MESSAGE(r.ok(), r.status().ToString());
  BOOST_TEST(f.PodAnnotation("default", "older", "hami.io/bind-phase") == "success");
  BOOST_TEST(f.PodAnnotation("default", "newer", "hami.io/bind-phase") == "allocating");
}

// A pod devices value joined with ';' and no final ';' (as Volcano's Hygon
// device code writes it): served, as by the vendor (HAMi's decoder).
BOOST_AUTO_TEST_CASE(a_pod_devices_value_without_a_final_semicolon_is_allocated) {
  AgentFixture f;
  f.CreatePod("default", "joined", std::string(kSn0) + ",HCU,8192,30:", 1740796800);
  f.Start();
  auto r = f.agent_->AllocateCount({1});
  BOOST_REQUIRE_MESSAGE(r.ok(), r.status().ToString());
  BOOST_TEST(f.PodAnnotation("default", "joined", "hami.io/bind-phase") == "success");
  BOOST_TEST(f.PodAnnotation("default", "joined", "hami.io/hcu-devices-to-allocate") == ";");
  BOOST_TEST(f.PodAnnotation("default", "joined", "hygon.com/container-index") == "0,");
}

BOOST_AUTO_TEST_CASE(the_lock_holder_wins_over_an_older_pod) {
  AgentFixture f;
  f.CreatePod("default", "older", std::string(kSn1) + ",HCU,65520,100:;", 1740796800);
  f.CreatePod("default", "holder", std::string(kSn0) + ",HCU,8192,30:;", 1740796900);
  f.Start();
  f.Lock("2026-03-01T10:00:00+08:00,default,holder");
  BOOST_REQUIRE(f.agent_->AllocateCount({1}).ok());
  BOOST_TEST(f.PodAnnotation("default", "holder", "hami.io/bind-phase") == "success");
  BOOST_TEST(f.PodAnnotation("default", "older", "hami.io/bind-phase") == "allocating");
  BOOST_TEST(f.NodeAnnotations().count("hami.io/mutex.lock") == 0u);
}

BOOST_AUTO_TEST_CASE(a_lock_of_the_same_name_in_another_namespace_is_not_released) {
  AgentFixture f;
  f.CreatePod("default", "a", std::string(kSn0) + ",HCU,8192,30:;", 1740796800);
  // The lock's own pod exists and is allocating here, not yet bound: the
  // sweeper leaves such a lock alone. Without the pod it would release the
  // lock as stale ("the pod is gone"), rightly, whenever it ran between
  // Lock and the check (the test failed that way once in the suite).
  f.api_.MustRequest("POST", "/api/v1/namespaces/other/pods",
                     R"({"metadata":{"name":"a","namespace":"other","annotations":{)"
                     R"("hami.io/vgpu-node":"node1","hami.io/bind-phase":"allocating",)"
                     R"("hami.io/bind-time":"1740796800"}},)"
                     R"("spec":{"containers":[{"name":"main"}]},"status":{"phase":"Pending"}})");
  const std::string lock = "2026-03-01T10:00:00+08:00,other,a";
  f.Start();
  f.Lock(lock);
  BOOST_REQUIRE(f.agent_->AllocateCount({1}).ok());
  BOOST_TEST(f.PodAnnotation("default", "a", "hami.io/bind-phase") == "success");
  BOOST_TEST(f.NodeAnnotations()["hami.io/mutex.lock"] == lock);
}

BOOST_AUTO_TEST_CASE(a_failure_undoes_the_vhcu_marks_the_pod_failed_and_releases_its_lock) {
  AgentFixture f;
  f.CreatePod("default", "toobig", std::string(kSn0) + ",HCU,60000,30:;", 1740796800);
  f.Start();
  f.Lock("2026-03-01T10:00:00+08:00,default,toobig");
  // The pod patch fails for good after the vHCU was created.
  f.api_.AddFault(R"({"method":"PATCH","path":"/pods/toobig$","status":403,"count":1})");
  auto r = f.agent_->AllocateCount({1});
  BOOST_TEST(!r.ok());
  BOOST_TEST(f.PodAnnotation("default", "toobig", "hami.io/bind-phase") == "failed");
  BOOST_TEST(f.NodeAnnotations().count("hami.io/mutex.lock") == 0u);
  auto marks = ListMarkFiles(f.root_.path(), nullptr);
  BOOST_REQUIRE(marks.ok());
  BOOST_TEST(marks->empty());
  BOOST_TEST(f.backend_->Discover()->vhcus.empty());
}

BOOST_AUTO_TEST_CASE(a_conflicting_lock_release_is_re_read_and_retried) {
  AgentFixture f([](HamiAgentOptions& o) { o.register_interval = std::chrono::hours(1); });
  f.CreatePod("default", "p", std::string(kSn1) + ",HCU,65520,100:;", 1740796800);
  f.Start();
  f.Lock("2026-03-01T10:00:00+08:00,default,p");
  f.api_.ClearRequests();
  f.api_.AddFault(R"({"method":"PATCH","path":"/api/v1/nodes/node1$","status":409,"count":1})");
  f.api_.AddFault(R"({"method":"PATCH","path":"/pods/p$","status":500,"count":2})");
  auto r = f.agent_->AllocateCount({1});
  BOOST_REQUIRE_MESSAGE(r.ok(), r.status().ToString());
  BOOST_TEST(f.PodAnnotation("default", "p", "hami.io/bind-phase") == "success");
  BOOST_TEST(f.NodeAnnotations().count("hami.io/mutex.lock") == 0u);
  auto requests = f.api_.Requests();
  // find (1 GET) + release (GET, 409 PATCH, GET, PATCH); pod PATCH 3 times.
  BOOST_TEST(CountRequests(requests, "GET", "/api/v1/nodes/node1") >= 3);
  BOOST_TEST(CountRequests(requests, "PATCH", "/api/v1/namespaces/default/pods/p") == 3);
}

BOOST_AUTO_TEST_CASE(the_handshake_is_refreshed_on_time_even_when_nothing_changed) {
  SimClock clock(TestWallStart());
  AgentFixture f([](HamiAgentOptions& o) { o.register_interval = std::chrono::seconds(30); },
                 &clock);
  f.Start();
  std::string first = f.NodeAnnotations()["hami.io/node-handshake-hcu"];
  BOOST_TEST(first == "Reported 2026-03-01T02:00:00Z");
  clock.Advance(std::chrono::seconds(30));
  BOOST_TEST(WaitUntil([&] {
    return f.NodeAnnotations()["hami.io/node-handshake-hcu"] == "Reported 2026-03-01T02:00:30Z";
  }));
}

// A registration the API server refuses is retried after the client's retry
// pause, in simulated time: not before the clock moved, and then without a
// request.
BOOST_AUTO_TEST_CASE(a_refused_registration_is_retried_after_the_retry_pause) {
  SimClock clock(TestWallStart());
  AgentFixture f(
      [](HamiAgentOptions& o) {
        o.start_wait = std::chrono::milliseconds(0);
        o.register_interval = std::chrono::seconds(60);
      },
      &clock);
  f.api_.AddFault(R"({"method":"PATCH","path":"/api/v1/nodes/node1$","status":403,"count":1})");
  f.api_.ClearRequests();
  f.agent_ = std::make_unique<HamiAgent>(f.backend_.get(), f.client_.get(), f.options_);
  BOOST_REQUIRE(f.agent_->Start().ok());
  auto patches = [&] { return CountRequests(f.api_.Requests(), "PATCH", "/api/v1/nodes/node1"); };
  BOOST_REQUIRE(WaitUntil([&] { return patches() == 1 && f.agent_->ready(); }));
  // Both threads wait on the clock: the sweep is over, the registration
  // backs off.
  BOOST_REQUIRE(clock.WaitForSleepers(2, std::chrono::seconds(10)));
  BOOST_TEST(patches() == 1);
  BOOST_TEST(!f.agent_->settled());
  clock.Advance(std::chrono::seconds(5));
  BOOST_TEST(WaitUntil([&] { return f.agent_->settled(); }));
  BOOST_TEST(patches() >= 2);
  BOOST_TEST(f.NodeAnnotations()["hami.io/node-handshake-hcu"] == "Reported 2026-03-01T02:00:05Z");
}

// The handshake has a thread of its own: a destroy that hangs in the vendor
// library (holding the host-wide vHCU lock) does not delay it.
BOOST_AUTO_TEST_CASE(the_handshake_is_refreshed_while_a_destroy_hangs) {
  SimClock clock(TestWallStart());
  AgentFixture f([](HamiAgentOptions& o) { o.register_interval = std::chrono::seconds(20); },
                 &clock);
  f.CreatePod("default", "p", std::string(kSn0) + ",HCU,8192,30:;", 1740796800);
  f.Start();
  auto r = f.agent_->AllocateCount({1});
  BOOST_REQUIRE_MESSAGE(r.ok(), r.status().ToString());
  BOOST_REQUIRE_EQUAL(f.backend_->Discover()->vhcus.size(), 1u);
  f.holding_->Hold(true);
  f.DeletePod("default", "p");  // the sweep destroys its vHCU, and hangs there
  BOOST_REQUIRE(f.holding_->WaitForDestroy(std::chrono::seconds(10)));
  clock.Advance(std::chrono::seconds(20));
  BOOST_TEST(WaitUntil([&] {
    return f.NodeAnnotations()["hami.io/node-handshake-hcu"] == "Reported 2026-03-01T02:00:20Z";
  }));
  f.holding_->Hold(false);
  BOOST_TEST(WaitUntil([&] { return f.backend_->Discover()->vhcus.empty(); }));
}

BOOST_AUTO_TEST_CASE(topology_and_hcumem_are_reported_when_enabled) {
  AgentFixture f([](HamiAgentOptions& o) {
    o.topology_register = true;
    o.resource_multiple = true;
  });
  f.Start();
  BOOST_TEST(WaitUntil([&] {
    FakeResponse cm = f.api_.Request("GET",
                                     "/api/v1/namespaces/kube-system/configmaps/"
                                     "hcu-topology-info");
    return cm.status == 200 && cm.body.find("DeviceCount") != std::string::npos;
  }));
  BOOST_TEST(WaitUntil([&] {
    std::string node = f.api_.MustRequest("GET", "/api/v1/nodes/node1");
    return node.find("524160") != std::string::npos;  // 8 x 65520 MiB
  }));
}

BOOST_AUTO_TEST_CASE(hcucores_allocations_are_one_response_of_kfd_and_mkfd) {
  AgentFixture f;
  auto r = HamiAgent(f.backend_.get(), f.client_.get(), f.options_).AllocateCores();
  BOOST_REQUIRE(r.ok());
  BOOST_REQUIRE_EQUAL(r->size(), 1u);
  BOOST_TEST(r->front().mounts.empty());
  std::set<std::string> devices;
  for (const auto& d : r->front().devices) devices.insert(d.host_path + " " + d.permissions);
  BOOST_TEST(devices == (std::set<std::string>{"/dev/kfd rwm", "/dev/mkfd rwm"}),
             boost::test_tools::per_element());
}

// containerd fails every container whose device node is missing: on a node
// without /dev/mkfd, HAMi's answers leave it out, as the other Allocate paths
// and Hygon's plugin do.
BOOST_AUTO_TEST_CASE(hami_allocations_name_mkfd_only_where_the_node_has_it) {
  AgentFixture f;
  std::filesystem::remove(f.root_.Join("dev/mkfd"));
  auto cores = HamiAgent(f.backend_.get(), f.client_.get(), f.options_).AllocateCores();
  BOOST_REQUIRE_MESSAGE(cores.ok(), cores.status().ToString());
  BOOST_REQUIRE_EQUAL(cores->size(), 1u);
  for (const auto& d : cores->front().devices) BOOST_TEST(d.host_path != "/dev/mkfd");
  f.CreatePod("default", "nomkfd", std::string(kSn0) + ",HCU,8192,30:;", 1740796800);
  f.Start();
  auto r = f.agent_->AllocateCount({1});
  BOOST_REQUIRE_MESSAGE(r.ok(), r.status().ToString());
  bool kfd = false;
  for (const auto& d : r->front().devices) {
    BOOST_TEST(d.host_path != "/dev/mkfd");
    kfd = kfd || d.host_path == "/dev/kfd";
  }
  BOOST_TEST(kfd);
}

// HAMi mode's Allocate envs too leave Hygon's runtime injecting nothing into
// a DTK image: the container holds only its vHCU (DESIGN §4.5).
BOOST_AUTO_TEST_CASE(hami_allocations_tell_the_toolkit_to_inject_nothing) {
  AgentFixture f;
  f.CreatePod("default", "dtk", std::string(kSn0) + ",HCU,8192,30:;", 1740796800);
  f.Start();
  auto count = f.agent_->AllocateCount({1});
  BOOST_REQUIRE_MESSAGE(count.ok(), count.status().ToString());
  auto cores = HamiAgent(f.backend_.get(), f.client_.get(), f.options_).AllocateCores();
  BOOST_REQUIRE(cores.ok());
  for (const auto* list : {&*count, &*cores}) {
    for (const ContainerAllocation& a : *list) {
      testing::ToolkitInjects got = testing::HcuToolkitDecision(testing::DtkContainerEnv(a.envs));
      BOOST_TEST((got == testing::ToolkitInjects::kNothing), testing::ToolkitInjectsName(got));
    }
  }
}

BOOST_AUTO_TEST_CASE(unaccounted_running_pods_are_evicted_only_when_asked) {
  for (bool evict : {false, true}) {
    BOOST_TEST_CONTEXT("evict_unaccounted_pods " << evict) {
      SimClock clock(TestWallStart());
      AgentFixture f([evict](HamiAgentOptions& o) { o.evict_unaccounted_pods = evict; }, &clock);
      f.CreatePod("default", "rogue", "", 0, "Running", R"({"hygon.com/hcumem":"8192"})");
      f.CreatePod("default", "plain", "", 0, "Running", R"({"cpu":"1"})");
      f.Start();
      // Once ready, the sweep thread sweeps at once; when it and the
      // registration thread both wait on the clock, that sweep is over.
      BOOST_REQUIRE(clock.WaitForSleepers(2, std::chrono::seconds(10)));
      FakeResponse rogue = f.api_.Request("GET", "/api/v1/namespaces/default/pods/rogue");
      BOOST_TEST(rogue.status == (evict ? 404 : 200));
      BOOST_TEST(f.api_.Request("GET", "/api/v1/namespaces/default/pods/plain").status == 200);
    }
  }
}

// The one RBAC table of the HAMi code equals manifests/rbac-verbs.txt (which
// the deploy checks hold the manifests and the chart to); the only opt-in
// permission is pods delete.
BOOST_AUTO_TEST_CASE(rbac_table_equals_manifests_rbac_verbs_txt) {
  std::set<std::string> file;
  std::istringstream in(ReadFile(SourcePath("manifests/rbac-verbs.txt")));
  for (std::string line; std::getline(in, line);) {
    line = line.substr(0, line.find('#'));
    std::istringstream words(line);
    std::string resource, verb;
    if (words >> resource >> verb) file.insert(resource + " " + verb);
  }
  std::set<std::string> code;
  std::set<std::string> opt_in;
  for (const RbacRule& r : HamiRbacRules()) {
    (r.opt_in ? opt_in : code).insert(r.resource + " " + r.verb);
  }
  BOOST_TEST(code == file, boost::test_tools::per_element());
  BOOST_TEST(opt_in == std::set<std::string>{"pods delete"}, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp::testing
