// ParseResourceClaim / ParseQuantity: good claims, and bad ones named by field.
#include "hcudp/dra/claim.h"

#include <boost/test/unit_test.hpp>

namespace hcudp::dra {
namespace {

const char* kClaim = R"({
  "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
  "metadata": {"namespace": "ns1", "name": "c1", "uid": "7f0c-1"},
  "spec": {"devices": {"requests": [
    {"name": "hcu", "exactly": {"deviceClassName": "dra.hygon.com",
      "capacity": {"requests": {"cores": "60", "memory": "20Gi"}}}},
    {"name": "pick", "firstAvailable": [
      {"name": "big", "deviceClassName": "dra.hygon.com"},
      {"name": "small", "deviceClassName": "dra.hygon.com",
       "capacity": {"requests": {"cores": "15"}}}]}]}},
  "status": {
    "allocation": {"devices": {"results": [
      {"request": "hcu", "driver": "dra.hygon.com", "pool": "node-a",
       "device": "hcu-0000-3b-00-0", "shareID": "5d1e",
       "consumedCapacity": {"cores": "60", "memory": "20Gi", "slices": "1"}},
      {"request": "gpu", "driver": "gpu.example.com", "pool": "x", "device": 7},
      {"request": "pick/small", "driver": "dra.hygon.com", "pool": "node-a",
       "device": "hcu-0000-3c-00-0"}]}},
    "reservedFor": [{"resource": "jobs", "apiGroup": "batch", "name": "j", "uid": "job-1"},
                    {"resource": "pods", "name": "pod-a", "uid": "pod-1"}]}})";

BOOST_AUTO_TEST_CASE(keeps_this_drivers_results_with_capacity_share_and_pod) {
  auto c = ParseResourceClaim(kClaim, "dra.hygon.com");
  BOOST_REQUIRE_MESSAGE(c.ok(), c.status().ToString());
  BOOST_TEST(c->uid == "7f0c-1");
  BOOST_TEST(c->namespace_name == "ns1");
  BOOST_TEST(c->allocated);
  BOOST_TEST(c->pod_uid == "pod-1");  // the batch Job is not a pod
  BOOST_REQUIRE(c->results.size() == 2u);
  const AllocatedDevice& a = c->results[0];
  BOOST_TEST(a.device == "hcu-0000-3b-00-0");
  BOOST_TEST(a.share_id == "5d1e");
  BOOST_TEST(a.has_consumed_capacity);
  BOOST_TEST(*a.consumed.cores == 60);
  BOOST_TEST(*a.consumed.memory_bytes == 20LL << 30);
  BOOST_TEST(*a.requested.cores == 60);
  const AllocatedDevice& b = c->results[1];
  BOOST_TEST(b.request == "pick/small");
  BOOST_TEST(b.BaseRequest() == "pick");
  BOOST_TEST(!b.has_consumed_capacity);
  BOOST_TEST(*b.requested.cores == 15);  // the sub-request's own capacity
  BOOST_TEST(!b.requested.memory_bytes.has_value());
}

BOOST_AUTO_TEST_CASE(another_driver_name_sees_only_its_results) {
  auto c = ParseResourceClaim(kClaim, "gpu.example.com");
  BOOST_REQUIRE(!c.ok());  // its result has a numeric device: named
  BOOST_TEST(c.status().message().find("status.allocation.devices.results[1].device") !=
             std::string::npos);
}

BOOST_AUTO_TEST_CASE(unallocated_claim_parses_without_results) {
  auto c =
      ParseResourceClaim(R"({"metadata":{"name":"c","namespace":"n","uid":"u"}})", "dra.hygon.com");
  BOOST_REQUIRE(c.ok());
  BOOST_TEST(!c->allocated);
  BOOST_TEST(c->results.empty());
}

BOOST_AUTO_TEST_CASE(bad_claims_name_the_field) {
  const std::vector<std::pair<std::string, std::string>> table = {
      {"not json", "not valid JSON"},
      {"[]", "not a JSON object"},
      {R"({"kind":"Pod","metadata":{"name":"c","uid":"u"}})", "kind"},
      {R"({"metadata":{"name":"c"}})", "metadata.uid"},
      {R"({"metadata":{"name":"c","uid":5}})", "metadata.uid"},
      {R"({"metadata":{"name":"c","uid":"u"},"status":{"allocation":[]}})", "status.allocation"},
      {R"({"metadata":{"name":"c","uid":"u"},"status":{"allocation":{"devices":{"results":[{"driver":"dra.hygon.com","request":"r","pool":"p"}]}}}})",
       "results[0].device"},
      {R"({"metadata":{"name":"c","uid":"u"},"status":{"allocation":{"devices":{"results":[{"driver":"dra.hygon.com","request":"a/b/c","pool":"p","device":"d"}]}}}})",
       "results[0].request"},
      {R"({"metadata":{"name":"c","uid":"u"},"status":{"allocation":{"devices":{"results":[{"driver":"dra.hygon.com","request":"r","pool":"p","device":"d","consumedCapacity":{"memory":"12Zi"}}]}}}})",
       "consumedCapacity.memory"},
      {R"({"metadata":{"name":"c","uid":"u"},"status":{"allocation":{"devices":{"results":[{"driver":"dra.hygon.com","request":"r","pool":"p","device":"d","adminAccess":"yes"}]}}}})",
       "adminAccess"},
      {R"({"metadata":{"name":"c","uid":"u"},"status":{"reservedFor":[7]}})",
       "status.reservedFor[0]"},
      {R"({"metadata":{"name":"c","uid":"u"},"spec":{"devices":{"requests":[{"name":"r","exactly":{"capacity":{"requests":{"cores":"-1"}}}}]}}})",
       "spec.devices.requests[0].exactly.capacity.requests.cores"},
  };
  for (const auto& [json, field] : table) {
    auto c = ParseResourceClaim(json, "dra.hygon.com");
    BOOST_TEST(!c.ok(), json);
    BOOST_TEST((c.status().code() == StatusCode::kInvalidArgument));
    BOOST_TEST(c.status().message().find(field) != std::string::npos,
               json << " → " << c.status().message());
  }
}

BOOST_AUTO_TEST_CASE(quantities_round_up_like_kubernetes) {
  const std::vector<std::pair<std::string, int64_t>> good = {{"60", 60},
                                                             {"20Gi", 20LL << 30},
                                                             {"1Mi", 1 << 20},
                                                             {"1.5k", 1500},
                                                             {"500m", 1},
                                                             {"1e3", 1000},
                                                             {"2.5", 3},
                                                             {"+7", 7},
                                                             {"8E", 8000000000000000000LL},
                                                             {"1E", 1000000000000000000LL}};
  for (const auto& [text, want] : good) {
    auto q = ParseQuantity(text);
    BOOST_REQUIRE_MESSAGE(q.ok(), text << ": " << q.status().ToString());
    BOOST_TEST(*q == want, text);
  }
  for (std::string bad : {"", "-1", "Gi", "1Zi", "1e", "1e999", "16Ei", "10E", "1..2",
                          "1234567890123456789012345678901"}) {
    BOOST_TEST(!ParseQuantity(bad).ok(), bad);
  }
}

BOOST_AUTO_TEST_CASE(claim_path_is_resource_k8s_io_v1) {
  BOOST_TEST(ResourceClaimPath("ns1", "c1").ToString() ==
             "/apis/resource.k8s.io/v1/namespaces/ns1/resourceclaims/c1");
}

}  // namespace
}  // namespace hcudp::dra
