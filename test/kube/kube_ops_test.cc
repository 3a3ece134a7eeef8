// Typed operations of the HAMi flow against the fake kube-apiserver.
#include "hcudp/kube_ops.h"

#include <boost/test/unit_test.hpp>

#include "kube/kube_test_util.h"

namespace hcudp {
namespace {

using testing::ApiFixture;
using testing::CountRequests;
using testing::NodeJson;
using testing::PodJson;

const char kLock[] = "hami.io/mutex.lock";

BOOST_FIXTURE_TEST_SUITE(kube_ops, ApiFixture)

BOOST_AUTO_TEST_CASE(node_lock_is_removed_only_on_an_exact_match) {
  api.MustRequest("POST", "/api/v1/nodes",
                  NodeJson("lock-node", R"({"hami.io/mutex.lock":"2026-03-01T10:00:00Z,ns,ab"})"));
  // Pod "a" must not release pod "ab"'s lock (the vendor plugin's substring bug).
  StatusOr<bool> other =
      RemoveNodeAnnotationIfEquals(*client, "lock-node", kLock, "2026-03-01T10:00:00Z,ns,a");
  BOOST_REQUIRE(other.ok());
  BOOST_TEST(!*other);
  BOOST_TEST(GetNode(*client, "lock-node")->metadata.annotations.count(kLock) == 1u);

  StatusOr<bool> mine =
      RemoveNodeAnnotationIfEquals(*client, "lock-node", kLock, "2026-03-01T10:00:00Z,ns,ab");
  BOOST_REQUIRE(mine.ok());
  BOOST_TEST(*mine);
  BOOST_TEST(GetNode(*client, "lock-node")->metadata.annotations.count(kLock) == 0u);

  StatusOr<bool> absent = RemoveNodeAnnotationIfEquals(*client, "lock-node", kLock, "x");
  BOOST_REQUIRE(absent.ok());
  BOOST_TEST(!*absent);
}

BOOST_AUTO_TEST_CASE(node_lock_release_rereads_and_retries_on_conflict) {
  api.MustRequest("POST", "/api/v1/nodes", NodeJson("busy-lock", R"({"hami.io/mutex.lock":"v"})"));
  api.ClearRequests();
  api.AddFault(R"({"method":"PATCH","path":"/nodes/busy-lock$","status":409,"count":1})");
  StatusOr<bool> r = RemoveNodeAnnotationIfEquals(*client, "busy-lock", kLock, "v");
  BOOST_REQUIRE_MESSAGE(r.ok(), r.status().ToString());
  BOOST_TEST(*r);
  auto log = api.Requests();
  BOOST_TEST(CountRequests(log, "GET", "/api/v1/nodes/busy-lock") == 2);
  BOOST_TEST(CountRequests(log, "PATCH", "/api/v1/nodes/busy-lock") == 2);
}

BOOST_AUTO_TEST_CASE(node_lock_release_with_a_stale_version_does_not_remove_a_new_lock) {
  // Between our GET and PATCH the scheduler replaced the lock: the server
  // must refuse the patch (resourceVersion precondition) and we must then
  // see the new value and leave it alone.
  api.MustRequest("POST", "/api/v1/nodes",
                  NodeJson("race-lock", R"({"hami.io/mutex.lock":"old"})"));
  StatusOr<NodeObject> before = GetNode(*client, "race-lock");
  BOOST_REQUIRE(before.ok());
  api.MustRequest("PATCH", "/api/v1/nodes/race-lock",
                  R"({"metadata":{"annotations":{"hami.io/mutex.lock":"new"}}})",
                  "application/merge-patch+json");
  StatusOr<std::string> stale =
      client->Patch(NodePath("race-lock"), PatchType::kMerge,
                    AnnotationsPatch({{kLock, std::nullopt}}, before->metadata.resource_version));
  BOOST_TEST(IsConflict(stale.status()));
  StatusOr<bool> r = RemoveNodeAnnotationIfEquals(*client, "race-lock", kLock, "old");
  BOOST_REQUIRE(r.ok());
  BOOST_TEST(!*r);
  BOOST_TEST(GetNode(*client, "race-lock")->metadata.annotations.at(kLock) == "new");
}

BOOST_AUTO_TEST_CASE(node_annotations_and_status_are_patched_strategically) {
  api.MustRequest("POST", "/api/v1/nodes", NodeJson("reg-node", R"({"keep":"1"})"));
  StatusOr<NodeObject> n = PatchNodeAnnotations(
      *client, "reg-node", {{"hami.io/node-hcu-register", "HCU-SN01,4:"}, {"keep", std::nullopt}});
  BOOST_REQUIRE_MESSAGE(n.ok(), n.status().ToString());
  BOOST_TEST((n->metadata.annotations ==
              std::map<std::string, std::string>{{"hami.io/node-hcu-register", "HCU-SN01,4:"}}));
  StatusOr<NodeObject> s = PatchNodeStatus(
      *client, "reg-node",
      R"({"status":{"capacity":{"hygon.com/hcumem":"65520"},"allocatable":{"hygon.com/hcumem":"65520"}}})");
  BOOST_REQUIRE_MESSAGE(s.ok(), s.status().ToString());
  BOOST_TEST(s->raw_json.find(R"("hygon.com/hcumem": "65520")") != std::string::npos);
  auto log = api.Requests();
  BOOST_TEST(CountRequests(log, "PATCH", "/api/v1/nodes/reg-node/status") == 1);
  BOOST_TEST(log.back().content_type == "application/strategic-merge-patch+json");
}

BOOST_AUTO_TEST_CASE(pod_annotations_are_patched) {
  api.MustRequest("POST", "/api/v1/namespaces/ops/pods", PodJson("pp", "n"));
  StatusOr<Pod> p = PatchPodAnnotations(*client, "ops", "pp", {{"hami.io/bind-phase", "success"}});
  BOOST_REQUIRE(p.ok());
  BOOST_TEST(p->metadata.annotations.at("hami.io/bind-phase") == "success");
  BOOST_TEST(GetPod(*client, "ops", "pp")->metadata.annotations.at("hami.io/bind-phase") ==
             "success");
}

BOOST_AUTO_TEST_CASE(configmap_is_created_then_merged) {
  BOOST_REQUIRE(MergeConfigMapData(*client, "kube-system", "topo", {{"node1", "{}"}}).ok());
  BOOST_REQUIRE(MergeConfigMapData(*client, "kube-system", "topo", {{"node2", "[1]"}}).ok());
  std::string cm = *client->Get(ConfigMapPath("kube-system", "topo"));
  BOOST_TEST(cm.find(R"("node1": "{}")") != std::string::npos, cm);
  BOOST_TEST(cm.find(R"("node2": "[1]")") != std::string::npos, cm);
  auto log = api.Requests();
  BOOST_TEST(CountRequests(log, "POST", "/api/v1/namespaces/kube-system/configmaps") == 1);
}

BOOST_AUTO_TEST_CASE(configmap_create_race_falls_back_to_patch) {
  BOOST_REQUIRE(MergeConfigMapData(*client, "kube-system", "race", {{"a", "1"}}).ok());
  api.ClearRequests();
  // The first patch sees NotFound (as if not yet created); the create then
  // finds it exists (another node won); the second patch lands.
  api.AddFault(R"({"method":"PATCH","path":"/configmaps/race$","status":404,"count":1})");
  BOOST_REQUIRE(MergeConfigMapData(*client, "kube-system", "race", {{"b", "2"}}).ok());
  std::string cm = *client->Get(ConfigMapPath("kube-system", "race"));
  BOOST_TEST(cm.find(R"("b": "2")") != std::string::npos);
  auto log = api.Requests();
  BOOST_TEST(CountRequests(log, "PATCH", "/api/v1/namespaces/kube-system/configmaps/race") == 2);
  BOOST_TEST(CountRequests(log, "POST", "/api/v1/namespaces/kube-system/configmaps") == 1);
}

BOOST_AUTO_TEST_CASE(pod_delete_requires_the_uid) {
  StatusOr<Pod> p =
      ParsePod(api.MustRequest("POST", "/api/v1/namespaces/ops/pods", PodJson("victim", "n")));
  BOOST_REQUIRE(p.ok());
  BOOST_TEST(IsConflict(DeletePodWithUid(*client, "ops", "victim", "other-uid", 0)));
  BOOST_TEST(DeletePodWithUid(*client, "ops", "victim", p->metadata.uid, 0).ok());
  BOOST_TEST(IsNotFound(DeletePodWithUid(*client, "ops", "victim", p->metadata.uid, 0)));
}

BOOST_AUTO_TEST_CASE(list_pods_follows_continue_pages) {
  for (int i = 0; i < 5; ++i) {
    api.MustRequest("POST", "/api/v1/namespaces/paging/pods",
                    PodJson("p" + std::to_string(i), "page-node"));
  }
  api.ClearRequests();
  ListOptions o;
  o.field_selector = "spec.nodeName=page-node";
  o.limit = 2;
  StatusOr<PodList> list = ListPods(*client, "", o);
  BOOST_REQUIRE_MESSAGE(list.ok(), list.status().ToString());
  BOOST_TEST(list->items.size() == 5u);
  BOOST_TEST(CountRequests(api.Requests(), "GET", "/api/v1/pods") == 3);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp
