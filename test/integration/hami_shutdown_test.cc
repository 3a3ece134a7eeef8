// HAMi mode, bounded (issue 10 items 1-2, issue 9 item 7): the real daemon
// exits 0 within 5 s of SIGTERM whatever the API server does — never
// answering while the daemon starts, a LIST in flight, an Allocate in flight
// — and, on the host backend, a failed health query leaves the registered
// verdict (the event path of a verdict change is in hami_test.cc).
#include <signal.h>

#include <boost/test/unit_test.hpp>
#include <cstdlib>
#include <thread>

#include "fake_apiserver/fake_apiserver_process.h"
#include "integration/hami_node.h"

namespace hcudp::testing {
namespace {

using SteadyClock = std::chrono::steady_clock;

bool SawRequest(const FakeApiServer& api, const std::string& method, const std::string& path,
                bool watch = false) {
  for (const FakeRequest& r : api.Requests()) {
    if (r.method == method && r.path == path && r.watch == watch) return true;
  }
  return false;
}

// SIGTERM now; the daemon must exit 0 within 5 s.
void ExpectSigtermExitsCleanly(HamiNode& n) {
  const auto start = SteadyClock::now();
  BOOST_REQUIRE(n.h().daemon().Signal(SIGTERM));
  auto status = n.h().daemon().WaitForExit(milliseconds(5000));
  const auto took = std::chrono::duration_cast<milliseconds>(SteadyClock::now() - start).count();
  BOOST_TEST_MESSAGE("exit " << (status ? status->ToString() : "none") << " after " << took
                             << " ms");
  BOOST_REQUIRE_MESSAGE(status.has_value(), "no exit 5 s after SIGTERM:\n" << n.h().daemon().Log());
  BOOST_TEST(status->exited);
  BOOST_TEST(status->code == 0, status->ToString() << "\n" << n.h().daemon().Log());
}

BOOST_AUTO_TEST_SUITE(hami_shutdown)

BOOST_AUTO_TEST_CASE(sigterm_while_starting_against_a_silent_api_server) {
  HamiNode n({"--pulse=0"});
  n.api().NeverAnswer();
  n.h().Start();
  // The pod cache's LIST is in flight, Start() waits for the first sync.
  BOOST_REQUIRE(WaitUntil([&] { return SawRequest(n.api(), "GET", "/api/v1/pods"); }));
  ExpectSigtermExitsCleanly(n);
}

BOOST_AUTO_TEST_CASE(sigterm_before_the_first_sync_while_lists_fail) {
  HamiNode n({"--pulse=0"});
  n.api().AddFault(R"({"method":"GET","path":"^/api/v1/pods$","status":500,"count":-1})");
  n.h().Start();
  BOOST_REQUIRE(WaitUntil([&] { return SawRequest(n.api(), "GET", "/api/v1/pods"); }));
  ExpectSigtermExitsCleanly(n);
}

BOOST_AUTO_TEST_CASE(sigterm_with_a_relist_in_flight_to_a_silent_api_server) {
  HamiNode n({"--pulse=0"});
  n.Start();
  n.api().ClearRequests();
  // The re-watch gets 410 (an ERROR event), the relist is never answered.
  n.api().AddFault(R"({"method":"GET","path":"^/api/v1/pods$","query":"watch=true",)"
                   R"("status":410,"count":1})");
  n.api().NeverAnswer("GET", "^/api/v1/pods$");
  n.api().CloseWatches();
  BOOST_REQUIRE(WaitUntil([&] { return SawRequest(n.api(), "GET", "/api/v1/pods"); }));
  ExpectSigtermExitsCleanly(n);
}

BOOST_AUTO_TEST_CASE(sigterm_with_an_allocate_in_flight_to_a_silent_api_server) {
  HamiNode n({"--pulse=0"});
  n.Start();
  n.SchedulePod({"stuck", {{"main", std::string(kSn0) + ",HCU,8192,30:"}}});
  n.api().ClearRequests();
  n.api().NeverAnswer();
  grpc::Status allocated;
  std::thread kubelet([&] {
    v1beta1::AllocateResponse response;
    allocated = n.Allocate({{std::string(kSn0) + "-fake-0"}}, &response);
  });
  BOOST_REQUIRE(WaitUntil([&] { return SawRequest(n.api(), "GET", "/api/v1/nodes/node1"); }));
  ExpectSigtermExitsCleanly(n);
  kubelet.join();
  BOOST_TEST(!allocated.ok());
}

// On the host backend (the stand-in vendor runtime, hy-smi polled every
// second): card 0 goes unhealthy,
// then hy-smi starts failing while the SimNode says the card is healthy
// again. A failed query changes nothing: after the next registration (forced
// by a vHCU on card 1) card 0 is still registered unhealthy.
BOOST_AUTO_TEST_CASE(a_failed_health_query_leaves_the_registered_verdict) {
  if (!UsingHostBackend()) {
    BOOST_TEST_MESSAGE("host backend only (integration_hami_shutdown_host)");
    return;
  }
  TempDir control;
  const std::string control_file = control.Join("stub.conf");
  WriteFile(control_file, "");
  setenv("HCUDP_STUB_CONTROL", control_file.c_str(), 1);  // inherited by the daemon
  HamiNode n({"--pulse=1"});                              // hy-smi is polled every pulse
  n.Start();
  const std::string unhealthy = std::string(kSn0) + ",4,65520,100,HCU-K100_AI,0,false,0,hami:";
  n.h().SetCardHealth(0, "Unhealthy");
  BOOST_REQUIRE(WaitUntil(
      [&] { return n.NodeAnnotations()["hami.io/node-hcu-register"].rfind(unhealthy, 0) == 0; },
      milliseconds(8000)));
  WriteFile(control_file, "hysmi=fail\n");
  n.h().SetCardHealth(0, "Healthy");
  n.SchedulePod({"on-card-1", {{"main", std::string(kSn1) + ",HCU,8192,30:"}}});
  v1beta1::AllocateResponse response;
  grpc::Status s = n.Allocate({{std::string(kSn1) + "-fake-0"}}, &response);
  BOOST_REQUIRE_MESSAGE(s.ok(), s.error_message());
  BOOST_REQUIRE(WaitUntil([&] {
    return n.NodeAnnotations()["hygon.com/node-hcu-register"].find(std::string(kSn1) + ",3,") !=
           std::string::npos;
  }));
  BOOST_TEST(n.NodeAnnotations()["hami.io/node-hcu-register"].rfind(unhealthy, 0) == 0,
             n.NodeAnnotations()["hami.io/node-hcu-register"]);
  unsetenv("HCUDP_STUB_CONTROL");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp::testing
