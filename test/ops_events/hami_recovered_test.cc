// HAMi mode with --events=true: a daemon killed right after the driver made
// a vHCU (the test copy with crash points) leaves it to the journal; the
// restarted daemon's recovery destroys it and reports a VhcuRecovered Event.
#include <rapidjson/document.h>

#include <boost/test/unit_test.hpp>

#include "integration/hami_node.h"

namespace hcudp::testing {
namespace {

constexpr char kEvents[] = "/apis/events.k8s.io/v1/namespaces/default/events";

// "reason|type|note" of the events about node1.
std::vector<std::string> Node1Events(const FakeApiServer& api) {
  rapidjson::Document d;
  const std::string body = api.MustRequest("GET", kEvents);
  d.Parse(body.c_str());
  std::vector<std::string> out;
  if (!d.IsObject() || !d.HasMember("items")) return out;
  for (const auto& e : d["items"].GetArray()) {
    if (std::string(e["regarding"]["name"].GetString()) != "node1") continue;
    out.push_back(std::string(e["reason"].GetString()) + "|" + e["type"].GetString() + "|" +
                  e["note"].GetString());
  }
  return out;
}

BOOST_AUTO_TEST_SUITE(hami_recovered)

BOOST_AUTO_TEST_CASE(recovery_after_a_crash_is_a_vhcu_recovered_event) {
  HamiNode n({"--events=true"});
  n.Start();
  BOOST_TEST(Node1Events(n.api()).empty());  // a clean start reports nothing

  n.h().daemon().Stop();
  std::vector<std::string> crashing = n.h().argv();
  crashing[0] = BinaryPath("test/integration/hcu-dp-daemon-crashpoints");
  BOOST_REQUIRE_EQUAL(
      n.h().daemon().Start(crashing, n.h().log_path(), {"HCUDP_TEST_ONLY_CRASH_AFTER=vhcu-created"},
                           DaemonEnvVars()),
      "");
  n.h().RequireRegistered(kHamiCount, 2);
  n.SchedulePod({"victim", {{"main", std::string(kSn1) + ",HCU,4096,50:"}}});
  v1beta1::AllocateResponse response;
  BOOST_TEST(!n.Allocate({{std::string(kSn1) + "-fake-0"}}, &response).ok());
  BOOST_REQUIRE(n.h().daemon().WaitForExit(milliseconds(5000)).has_value());
  BOOST_TEST(Node1Events(n.api()).empty());  // the crashed run sent nothing

  BOOST_REQUIRE_EQUAL(n.h().daemon().Start(n.h().argv(), n.h().log_path(), {}, DaemonEnvVars()),
                      "");
  n.h().RequireRegistered(kHamiCount, 3);
  std::vector<std::string> events;
  BOOST_REQUIRE_MESSAGE(WaitUntil([&] {
                          events = Node1Events(n.api());
                          return !events.empty();
                        }),
                        n.h().daemon().Log());
  BOOST_REQUIRE_EQUAL(events.size(), 1u);
  BOOST_TEST(events[0].rfind("VhcuRecovered|Warning|", 0) == 0, events[0]);
  BOOST_TEST(events[0].find("destroyed 1") != std::string::npos, events[0]);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp::testing
