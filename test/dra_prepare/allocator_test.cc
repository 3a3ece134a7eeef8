// The test allocator: capacity, sub-requests, matchAttribute.
#include <boost/test/unit_test.hpp>

#include "dra_prepare/prepare_fixture.h"
#include "hcudp/dra/claim.h"

namespace hcudp::testing {
namespace {

std::vector<AllocatorDevice> Four() {
  std::vector<AllocatorDevice> d;
  for (int i = 0; i < 4; ++i) {
    d.push_back({"hcu-" + std::to_string(i),
                 {{"island", i == 0 || i == 3 ? "a" : "b"}},
                 120,
                 int64_t{64} << 30,
                 true});
  }
  return d;
}

BOOST_AUTO_TEST_CASE(capacity_is_consumed_and_tracked_across_claims) {
  DraAllocator alloc("dra.hygon.com", "node-a", Four());
  for (int i = 0; i < 4; ++i) {
    auto c = alloc.Allocate(ClaimJson("u" + std::to_string(i), "c",
                                      "[" + ExactRequest("r", R"({"cores":"100"})") + "]"),
                            "p");
    BOOST_REQUIRE(c.ok());
    auto parsed = dra::ParseResourceClaim(*c, "dra.hygon.com");
    BOOST_REQUIRE(parsed.ok());
    BOOST_TEST(parsed->results[0].device == "hcu-" + std::to_string(i));  // 100 of 120 each
    BOOST_TEST(*parsed->results[0].consumed.cores == 100);
    BOOST_TEST(*parsed->results[0].consumed.memory_bytes == int64_t{64} << 30);  // default full
  }
  auto full =
      alloc.Allocate(ClaimJson("u9", "c", "[" + ExactRequest("r", R"({"cores":"30"})") + "]"), "p");
  BOOST_TEST((full.status().code() == StatusCode::kResourceExhausted));
}

BOOST_AUTO_TEST_CASE(match_attribute_puts_two_cards_on_one_island) {
  DraAllocator alloc("dra.hygon.com", "node-a", Four());
  auto c =
      alloc.Allocate(ClaimJson("u", "c", "[" + ExactRequest("r", "", 2) + "]",
                               R"([{"requests":["r"],"matchAttribute":"dra.hygon.com/island"}])"),
                     "p");
  BOOST_REQUIRE_MESSAGE(c.ok(), c.status().ToString());
  auto parsed = dra::ParseResourceClaim(*c, "dra.hygon.com");
  BOOST_REQUIRE(parsed->results.size() == 2u);
  BOOST_TEST(parsed->results[0].device == "hcu-0");
  BOOST_TEST(parsed->results[1].device == "hcu-3");  // not hcu-1: another island
  BOOST_TEST(parsed->pod_uid == "p");
}

BOOST_AUTO_TEST_CASE(devices_come_from_resource_slices_and_tainted_ones_are_skipped) {
  const std::string slice = R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice",
    "metadata":{"name":"node-a-dra.hygon.com-0"},
    "spec":{"driver":"dra.hygon.com","nodeName":"node-a","pool":{"name":"node-a","generation":1,"resourceSliceCount":1},
    "devices":[
      {"name":"hcu-0000-09-00-0","allowMultipleAllocations":true,
       "attributes":{"type":{"string":"hcu"},"dra.hygon.com/hslIsland":{"int":0},
                     "resource.kubernetes.io/pciBusID":{"string":"0000:09:00.0"}},
       "capacity":{"cores":{"value":"120"},"memory":{"value":"65520Mi"},"slices":{"value":"4"}}},
      {"name":"hcu-0000-0a-00-0","allowMultipleAllocations":true,
       "attributes":{"type":{"string":"hcu"}},
       "capacity":{"cores":{"value":"120"},"memory":{"value":"65520Mi"}},
       "taints":[{"key":"dra.hygon.com/unhealthy","effect":"NoSchedule"}]}]}})";
  auto devices = DevicesFromSlices({slice}, "dra.hygon.com");
  BOOST_REQUIRE_MESSAGE(devices.ok(), devices.status().ToString());
  BOOST_REQUIRE(devices->size() == 1u);
  const AllocatorDevice& d = (*devices)[0];
  BOOST_TEST(d.name == "hcu-0000-09-00-0");
  BOOST_TEST(d.cores == 120);
  BOOST_TEST(d.memory_bytes == int64_t{65520} << 20);
  BOOST_TEST(d.allow_multiple);
  BOOST_TEST(d.attributes.at("hslIsland") == "0");
  BOOST_TEST(d.attributes.at("resource.kubernetes.io/pciBusID") == "0000:09:00.0");
  BOOST_TEST(DevicesFromSlices({slice}, "gpu.example.com")->empty());
}

BOOST_AUTO_TEST_CASE(unsupported_parts_are_errors) {
  DraAllocator alloc("dra.hygon.com", "node-a", Four());
  auto c = alloc.Allocate(
      ClaimJson(
          "u", "c",
          R"([{"name":"r","exactly":{"deviceClassName":"dra.hygon.com","selectors":[{"cel":{"expression":"true"}}]}}])"),
      "p");
  BOOST_TEST((c.status().code() == StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace hcudp::testing
