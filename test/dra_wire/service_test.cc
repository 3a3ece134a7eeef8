// NodePrepareResources / NodeUnprepareResources through the wire layer, as
// kubelet calls them (v1 and v1beta1), into a test handler and back.
#include <boost/test/unit_test.hpp>
#include <thread>

#include "dra_wire/dra_node.h"

namespace hcudp::testing {
namespace {

using daemon::dra::PreparedDevice;
using daemon::dra::PrepareResult;
using std::chrono::milliseconds;
using std::chrono::seconds;

PrepareResult TwoDevices() {
  PrepareResult r;
  PreparedDevice whole;
  whole.request_names = {"gpu"};
  whole.pool_name = "node-a";
  whole.device_name = "hcu-0000-09-00-0";
  whole.cdi_device_ids = {"dra.hygon.com/hcu=hcu-0000-09-00-0"};
  PreparedDevice share;
  share.request_names = {"slice/small"};  // a prioritized-list sub-request
  share.pool_name = "node-a";
  share.device_name = "hcu-0000-0a-00-0";
  share.cdi_device_ids = {"dra.hygon.com/vhcu=uid-1-0"};
  share.share_id = "0f3e";
  r.devices = {whole, share};
  return r;
}

BOOST_AUTO_TEST_SUITE(service)

BOOST_AUTO_TEST_CASE(v1_prepare_returns_devices_with_share_id_and_base_request_names) {
  DraNode node;
  node.handler().SetResult("uid-1", TwoDevices());
  node.Start();
  CallOutcome out =
      node.kubelet().NodePrepareResources(kDriver, {MakeClaim("uid-1", "claim-1", "ns1")});
  BOOST_REQUIRE_MESSAGE(out.ok(), out.status.error_message() << out.kubelet_error);
  BOOST_TEST(out.service == "v1.DRAPlugin");
  const auto& claim = out.prepare.claims().at("uid-1");
  BOOST_TEST(claim.error() == "");
  BOOST_REQUIRE_EQUAL(claim.devices_size(), 2);
  BOOST_TEST(claim.devices(0).device_name() == "hcu-0000-09-00-0");
  BOOST_TEST(claim.devices(0).cdi_device_ids(0) == "dra.hygon.com/hcu=hcu-0000-09-00-0");
  BOOST_TEST(!claim.devices(0).has_share_id());
  BOOST_TEST(claim.devices(1).request_names(0) == "slice");
  BOOST_TEST(claim.devices(1).pool_name() == "node-a");
  BOOST_TEST(claim.devices(1).has_share_id());
  BOOST_TEST(claim.devices(1).share_id() == "0f3e");
  // The handler saw the claim as kubelet named it.
  auto calls = node.handler().prepare_calls();
  BOOST_REQUIRE_EQUAL(calls.size(), 1u);
  BOOST_TEST(calls[0][0].namespace_name == "ns1");
  BOOST_TEST(calls[0][0].name == "claim-1");
  BOOST_TEST(calls[0][0].uid == "uid-1");
}

BOOST_AUTO_TEST_CASE(v1beta1_prepare_and_unprepare_round_trip_without_share_id) {
  FakePluginWatcher::Config config;
  config.known_services = {"v1beta1.DRAPlugin"};
  DraNode node(config);
  node.handler().SetResult("uid-1", TwoDevices());
  node.Start();
  CallOutcome out = node.kubelet().NodePrepareResources(
      kDriver, {MakeClaim("uid-1", "claim-1"), MakeClaim("uid-2", "claim-2")});
  BOOST_REQUIRE_MESSAGE(out.ok(), out.status.error_message() << out.kubelet_error);
  BOOST_TEST(out.service == "v1beta1.DRAPlugin");
  const auto& claim = out.prepare.claims().at("uid-1");
  BOOST_REQUIRE_EQUAL(claim.devices_size(), 2);
  BOOST_TEST(claim.devices(1).request_names(0) == "slice");
  BOOST_TEST(claim.devices(1).cdi_device_ids(0) == "dra.hygon.com/vhcu=uid-1-0");
  BOOST_TEST(!claim.devices(1).has_share_id());  // v1beta1 has no such field
  BOOST_TEST(out.prepare.claims().at("uid-2").devices(0).device_name() == "hcu-claim-2");

  CallOutcome un = node.kubelet().NodeUnprepareResources(
      kDriver, {MakeClaim("uid-1", "claim-1"), MakeClaim("uid-2", "claim-2")});
  BOOST_REQUIRE_MESSAGE(un.ok(), un.status.error_message() << un.kubelet_error);
  BOOST_TEST(un.unprepare.claims().at("uid-1").error() == "");
  BOOST_TEST(un.unprepare.claims().at("uid-2").error() == "");
  BOOST_TEST(node.handler().unprepare_calls().size() == 1u);
}

BOOST_AUTO_TEST_CASE(every_claim_gets_an_answer_and_no_other) {
  DraNode node;
  node.Start();
  node.handler().Omit("uid-2");
  PrepareResult retry;
  retry.error = "API server unavailable; try again";
  node.handler().SetResult("uid-3", retry);
  CallOutcome out = node.kubelet().NodePrepareResources(
      kDriver, {MakeClaim("uid-1", "a"), MakeClaim("uid-2", "b"), MakeClaim("uid-3", "c"),
                MakeClaim("uid-1", "a")});  // a duplicate goes to the handler once
  BOOST_REQUIRE_MESSAGE(out.ok(), out.status.error_message() << out.kubelet_error);
  BOOST_TEST(out.prepare.claims().size() == 3u);
  BOOST_TEST(out.prepare.claims().at("uid-1").error() == "");
  BOOST_TEST(out.prepare.claims().at("uid-2").error().find("no result for claim default/b") !=
             std::string::npos);
  BOOST_TEST(out.prepare.claims().at("uid-3").error() == "API server unavailable; try again");
  BOOST_TEST(out.prepare.claims().at("uid-3").devices_size() == 0);
  BOOST_TEST(node.handler().prepare_calls().at(0).size() == 3u);
}

BOOST_AUTO_TEST_CASE(a_failed_call_is_a_grpc_error_and_a_claim_without_uid_is_invalid) {
  DraNode node;
  node.Start();
  CallOutcome bad = node.kubelet().NodePrepareResources(kDriver, {MakeClaim("", "nameless")});
  BOOST_TEST(bad.status.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  BOOST_TEST(bad.status.error_message() == "claims[0] (default/nameless): empty uid");
  BOOST_TEST(node.handler().prepare_calls().empty());

  node.handler().FailWholeCall(UnavailableError("checkpoint unreadable"));
  CallOutcome failed = node.kubelet().NodePrepareResources(kDriver, {MakeClaim("uid-1", "a")});
  BOOST_TEST(failed.status.error_code() == grpc::StatusCode::UNAVAILABLE);
  BOOST_TEST(failed.status.error_message() == "checkpoint unreadable");
  CallOutcome failed_un = node.kubelet().NodeUnprepareResources(kDriver, {MakeClaim("uid-1", "a")});
  BOOST_TEST(failed_un.status.error_code() == grpc::StatusCode::UNAVAILABLE);
}

BOOST_AUTO_TEST_CASE(an_empty_request_is_answered_without_the_handler) {
  DraNode node;
  node.Start();
  CallOutcome out = node.kubelet().NodePrepareResources(kDriver, {});
  BOOST_TEST(out.ok());
  BOOST_TEST(out.prepare.claims().empty());
  BOOST_TEST(node.handler().prepare_calls().empty());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp::testing
