// The DRA code's API calls, as the API server sees them, against the RBAC the
// DRA manifest grants (manifests/rbac-verbs-dra.txt; deploy_check.py rbac
// holds the manifest and the chart to that file). The slice publisher and
// the preparer run their real paths against the fake API server: a pool
// created, grown over two slices, shrunk, wiped by a "kubelet restart" and
// restored through the watch; a claim prepared (GET) and, once deleted,
// unprepared by recovery (GET). Every request the fake logged is mapped to
// the permission it needs (resource[.group], verb), as kube-apiserver's
// authorizer does, and each must be in the file.
#include <rapidjson/document.h>

#include <boost/test/unit_test.hpp>
#include <chrono>
#include <cstdio>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "dra_prepare/prepare_fixture.h"
#include "dra_slices/many_cards.h"
#include "dra_slices/sim_inventory.h"
#include "fake_apiserver/fake_apiserver_process.h"
#include "hcudp/backend.h"
#include "hcudp/dra/claim.h"
#include "hcudp/dra/slice_publisher.h"
#include "kube/kube_test_util.h"
#include "rbac_permissions.h"

namespace hcudp::testing {
namespace {

using hcudp::testing::DiscoverSimNode;

using hcudp::dra::ManyCards;

std::set<Permission> Granted() { return GrantsOf("manifests/rbac-verbs-dra.txt"); }

// Names of the node's slices on the server (the test's own LIST).
std::vector<std::string> StoredSlices(FakeApiServer& api, const std::string& node) {
  std::string body = api.MustRequest(
      "GET", "/apis/resource.k8s.io/v1/resourceslices?fieldSelector=spec.nodeName%3D" + node);
  rapidjson::Document d;
  d.Parse(body.c_str());
  BOOST_REQUIRE(d.IsObject() && d.HasMember("items") && d["items"].IsArray());
  std::vector<std::string> names;
  for (const auto& item : d["items"].GetArray())
    names.push_back(item["metadata"]["name"].GetString());
  return names;
}

std::string UidOf(const std::string& object_json) {
  rapidjson::Document d;
  d.Parse(object_json.c_str());
  BOOST_REQUIRE(d.IsObject() && d.HasMember("metadata") && d["metadata"].HasMember("uid"));
  return d["metadata"]["uid"].GetString();
}

BOOST_AUTO_TEST_SUITE(deploy_dra_rbac)

BOOST_AUTO_TEST_CASE(permission_of_maps_requests_as_the_apiserver_does) {
  auto perm = [](std::string method, std::string path, bool watch = false) {
    FakeRequest r;
    r.method = std::move(method);
    r.path = std::move(path);
    r.watch = watch;
    return PermissionOf(r);
  };
  using P = Permission;
  BOOST_TEST((perm("GET", "/apis/resource.k8s.io/v1/namespaces/ns/resourceclaims/c") ==
              P{"resourceclaims.resource.k8s.io", "get"}));
  BOOST_TEST((perm("GET", "/apis/resource.k8s.io/v1/resourceslices", true) ==
              P{"resourceslices.resource.k8s.io", "watch"}));
  BOOST_TEST((perm("GET", "/apis/resource.k8s.io/v1/resourceslices") ==
              P{"resourceslices.resource.k8s.io", "list"}));
  BOOST_TEST((perm("PUT", "/apis/resource.k8s.io/v1/namespaces/ns/resourceclaims/c/status") ==
              P{"resourceclaims/status.resource.k8s.io", "update"}));
  BOOST_TEST((perm("DELETE", "/apis/resource.k8s.io/v1/resourceslices") ==
              P{"resourceslices.resource.k8s.io", "deletecollection"}));
  BOOST_TEST((perm("PATCH", "/api/v1/nodes/n1") == P{"nodes", "patch"}));
  BOOST_TEST((perm("GET", "/api/v1/namespaces/kube-system") == P{"namespaces", "get"}));
  // Something granted is not everything: the file lacks a patch of slices.
  BOOST_TEST(Granted().count(perm("PATCH", "/apis/resource.k8s.io/v1/resourceslices/x")) == 0u);
}

BOOST_AUTO_TEST_CASE(every_api_call_of_the_dra_code_is_granted) {
  FakeApiServer api;
  auto client = ClientFor(ConfigFor(api));
  const auto deadline = [] { return Clock::Real().Now() + std::chrono::seconds(15); };
  // What the DRA code asked: the fake's log, emptied before each request
  // the test makes itself (those are not the daemon's), collected after.
  std::vector<FakeRequest> log;
  auto collect = [&] {
    for (const FakeRequest& r : api.Requests()) log.push_back(r);
    api.ClearRequests();
  };

  // The slice publisher: create, grow to two slices (update + create),
  // shrink (update + delete), and the watch restoring a wiped pool.
  dra::SlicePublisherOptions o;
  o.params.node_name = "rbac-node";
  o.params.node_uid = "node-uid-1";
  auto pub = dra::SlicePublisher::New(*client, o);
  BOOST_REQUIRE_MESSAGE(pub.ok(), pub.status().ToString());
  (*pub)->Start();
  BOOST_REQUIRE((*pub)->WaitSynced(
      (*pub)->SetInventory(DiscoverSimNode("demo/nodes/k100ai-8.yaml")), deadline()));
  BOOST_REQUIRE((*pub)->WaitSynced((*pub)->SetInventory(ManyCards(200)), deadline()));
  BOOST_REQUIRE((*pub)->state().slice_count == 2);
  BOOST_REQUIRE((*pub)->WaitSynced((*pub)->SetInventory(ManyCards(3)), deadline()));
  BOOST_REQUIRE((*pub)->state().slice_count == 1);
  collect();
  const uint64_t writes = (*pub)->state().writes;
  const std::vector<std::string> names = StoredSlices(api, "rbac-node");
  BOOST_REQUIRE(names.size() == 1u);
  api.MustRequest("DELETE", "/apis/resource.k8s.io/v1/resourceslices/" + names[0]);
  api.ClearRequests();  // the test's LIST and DELETE
  BOOST_REQUIRE(Eventually([&] { return (*pub)->state().writes > writes; }));
  (*pub)->Stop();
  collect();
  BOOST_TEST(StoredSlices(api, "rbac-node").size() == 1u);  // restored through the watch

  // The preparer: a claim allocated on the API server, prepared (GET), then
  // deleted and unprepared by recovery (GET).
  SimDraNode node("k100ai-8.yaml");
  node.UseFetcher(dra::KubeClaimFetcher(client.get(), std::chrono::seconds(5)));
  BOOST_REQUIRE(node.preparer->Recover().ok());
  const std::string requests = "[" + ExactRequest("hcu", R"({"cores":"30","memory":"8Gi"})") + "]";
  const std::string created =
      api.MustRequest("POST", "/apis/resource.k8s.io/v1/namespaces/ns1/resourceclaims",
                      ClaimJson("set-by-server", "c1", requests));
  const std::string uid = UidOf(created);
  auto allocated = node.allocator->Allocate(ClaimJson(uid, "c1", requests), "pod-1");
  BOOST_REQUIRE_MESSAGE(allocated.ok(), allocated.status().ToString());
  api.MustRequest("PUT", "/apis/resource.k8s.io/v1/namespaces/ns1/resourceclaims/c1/status",
                  *allocated);
  api.ClearRequests();  // the test's claim writes
  auto answer = node.preparer->Prepare(dra::ClaimRef{"ns1", "c1", uid});
  BOOST_REQUIRE(answer.ok());
  BOOST_REQUIRE_MESSAGE(answer->error.empty(), answer->error);
  collect();
  api.MustRequest("DELETE", "/apis/resource.k8s.io/v1/namespaces/ns1/resourceclaims/c1");
  api.ClearRequests();
  auto recovered = node.preparer->Recover();
  BOOST_REQUIRE(recovered.ok());
  BOOST_TEST(recovered->unprepared == 1);
  collect();

  std::set<Permission> used;
  for (const FakeRequest& r : log) used.insert(PermissionOf(r));
  const std::set<Permission> granted = Granted();
  for (const Permission& p : used) {
    BOOST_TEST(granted.count(p) == 1u,
               "the DRA code needs " << p.first << " " << p.second << ", which the RBAC lacks");
  }
  // The run exercised what the code is known to call (a vacuous log would
  // pass the check above).
  for (const Permission& p : std::set<Permission>{{"resourceclaims.resource.k8s.io", "get"},
                                                  {"resourceslices.resource.k8s.io", "list"},
                                                  {"resourceslices.resource.k8s.io", "watch"},
                                                  {"resourceslices.resource.k8s.io", "create"},
                                                  {"resourceslices.resource.k8s.io", "update"},
                                                  {"resourceslices.resource.k8s.io", "delete"}}) {
    BOOST_TEST(used.count(p) == 1u, "not exercised: " << p.first << " " << p.second);
  }
  BOOST_TEST_MESSAGE(log.size() << " requests of the DRA code, " << used.size()
                                << " distinct permissions");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp::testing
