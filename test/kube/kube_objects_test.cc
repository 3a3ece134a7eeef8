// Typed views of API JSON and patch builders.
#include "hcudp/kube_objects.h"

#include <boost/test/unit_test.hpp>
#include <chrono>

#include "hcudp/hami/rfc3339.h"

namespace hcudp {
namespace {

const char kPod[] = R"({
  "kind": "Pod", "apiVersion": "v1",
  "metadata": {"name": "demo", "namespace": "default", "uid": "u-1", "resourceVersion": "42",
               "creationTimestamp": "2026-03-01T10:00:00Z",
               "labels": {"app": "x"},
               "annotations": {"hami.io/bind-phase": "allocating",
                               "hami.io/hcu-devices-to-allocate": "HCU-SN01,HCU,8192,30:;"}},
  "spec": {"nodeName": "node1", "schedulerName": "hcu-scheduler",
           "containers": [{"name": "main", "image": "img",
                           "resources": {"limits": {"hygon.com/hcunum": "1",
                                                    "hygon.com/hcumem": 8192}}},
                          {"name": "side"}]},
  "status": {"phase": "Pending", "conditions": []}
})";

std::chrono::system_clock::time_point Unix(int64_t seconds) {
  return std::chrono::system_clock::time_point(std::chrono::seconds(seconds));
}

BOOST_AUTO_TEST_SUITE(kube_objects)

BOOST_AUTO_TEST_CASE(pod_fields_the_hami_flow_reads_are_parsed) {
  StatusOr<Pod> pod = ParsePod(kPod);
  BOOST_REQUIRE_MESSAGE(pod.ok(), pod.status().ToString());
  BOOST_TEST(pod->metadata.name == "demo");
  BOOST_TEST(pod->metadata.namespace_name == "default");
  BOOST_TEST(pod->metadata.uid == "u-1");
  BOOST_TEST(pod->metadata.resource_version == "42");
  BOOST_TEST(pod->metadata.creation_timestamp == "2026-03-01T10:00:00Z");
  BOOST_TEST((*hami::ParseRfc3339(pod->metadata.creation_timestamp) == Unix(1772359200)));
  BOOST_TEST(pod->metadata.labels.at("app") == "x");
  BOOST_TEST(pod->metadata.annotations.at("hami.io/hcu-devices-to-allocate") ==
             "HCU-SN01,HCU,8192,30:;");
  BOOST_TEST(pod->node_name == "node1");
  BOOST_TEST(pod->phase == "Pending");
  BOOST_REQUIRE(pod->containers.size() == 2u);
  BOOST_TEST(pod->containers[0].name == "main");
  BOOST_TEST(pod->containers[0].limits.at("hygon.com/hcunum") == "1");
  BOOST_TEST(pod->containers[0].limits.at("hygon.com/hcumem") == "8192");
  BOOST_TEST(pod->containers[1].limits.empty());
}

BOOST_AUTO_TEST_CASE(node_metadata_and_raw_json_are_kept) {
  const char json[] =
      R"({"metadata":{"name":"n1","resourceVersion":"7","annotations":{"hami.io/mutex.lock":
      "2026-03-01T10:00:00+08:00,default,demo"}},"status":{"capacity":{"cpu":"8"}}})";
  StatusOr<NodeObject> node = ParseNode(json);
  BOOST_REQUIRE(node.ok());
  BOOST_TEST(node->metadata.name == "n1");
  BOOST_TEST(node->metadata.resource_version == "7");
  BOOST_TEST(node->metadata.annotations.at("hami.io/mutex.lock") ==
             "2026-03-01T10:00:00+08:00,default,demo");
  BOOST_TEST(node->raw_json == json);
}

BOOST_AUTO_TEST_CASE(pod_list_carries_resource_version_and_continue) {
  StatusOr<PodList> list =
      ParsePodList(R"({"metadata":{"resourceVersion":"9","continue":"abc"},"items":[)" +
                   std::string(kPod) + "]}");
  BOOST_REQUIRE_MESSAGE(list.ok(), list.status().ToString());
  BOOST_TEST(list->resource_version == "9");
  BOOST_TEST(list->continue_token == "abc");
  BOOST_REQUIRE(list->items.size() == 1u);
  BOOST_TEST(list->items[0].metadata.name == "demo");
  // Each item is the same typed view ParsePod gives.
  StatusOr<Pod> pod = ParsePod(kPod);
  BOOST_REQUIRE(pod.ok());
  BOOST_TEST(list->items[0].metadata.uid == pod->metadata.uid);
  BOOST_TEST(list->items[0].metadata.annotations == pod->metadata.annotations);
  BOOST_REQUIRE(list->items[0].containers.size() == 2u);
  BOOST_TEST(list->items[0].containers[0].limits == pod->containers[0].limits);
  BOOST_TEST(list->items[0].phase == "Pending");
}

BOOST_AUTO_TEST_CASE(wrong_types_are_named) {
  const std::pair<const char*, const char*> cases[] = {
      {"[]", "not a JSON object"},
      {"{", "not JSON"},
      {R"({"spec":{}})", "metadata"},
      {R"({"metadata":{"name":5}})", "metadata.name"},
      {R"({"metadata":{"annotations":{"a":1}}})", "metadata.annotations.a"},
      {R"({"metadata":{"labels":[]}})", "metadata.labels"},
      {R"({"metadata":{"creationTimestamp":"yesterday"}})", "metadata.creationTimestamp"},
      {R"({"metadata":{},"spec":{"containers":{}}})", "spec.containers"},
      {R"({"metadata":{},"spec":{"containers":[{"name":"a"},{"resources":{"limits":{"x":[]}}}]}})",
       "spec.containers[1].resources.limits.x"},
      {R"({"metadata":{},"status":{"phase":1}})", "status.phase"},
  };
  for (const auto& [json, field] : cases) {
    StatusOr<Pod> pod = ParsePod(json);
    BOOST_TEST_CONTEXT(json) {
      BOOST_REQUIRE(!pod.ok());
      BOOST_TEST(pod.status().message().find(field) != std::string::npos, pod.status().message());
    }
  }
}

// Object metadata times go through the library's one RFC3339 parser.
BOOST_AUTO_TEST_CASE(rfc3339_times_with_offsets_and_fractions) {
  using hami::ParseRfc3339;
  BOOST_TEST((*ParseRfc3339("1970-01-01T00:00:00Z") == Unix(0)));
  BOOST_TEST((*ParseRfc3339("2026-03-01T10:00:00+08:00") == Unix(1772330400)));
  BOOST_TEST((*ParseRfc3339("2026-03-01T02:00:00.123456Z") == Unix(1772330400)));
  BOOST_TEST(!ParseRfc3339("2026-03-01 10:00:00").ok());
  BOOST_TEST(!ParseRfc3339("2026-13-01T10:00:00Z").ok());
  BOOST_TEST(!ParseRfc3339("2026-03-01T10:00:00+0800").ok());
  for (const char* bad : {"2026-13-01T10:00:00Z", "2026-03-01T10:00:00+0800"}) {
    std::string json = std::string(R"({"metadata":{"creationTimestamp":")") + bad + "\"}}";
    BOOST_TEST(!ParseObjectMeta(json).ok(), bad);
  }
}

BOOST_AUTO_TEST_CASE(annotations_patch_sets_deletes_and_preconditions) {
  BOOST_TEST(AnnotationsPatch({{"a", "1"}, {"b", std::nullopt}}) ==
             R"({"metadata":{"annotations":{"a":"1","b":null}}})");
  BOOST_TEST(AnnotationsPatch({{"k", "v\"q"}}, "12") ==
             R"({"metadata":{"resourceVersion":"12","annotations":{"k":"v\"q"}}})");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp
