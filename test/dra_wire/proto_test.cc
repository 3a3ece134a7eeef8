// Our .proto files are kubelet's on the wire: the gRPC method paths (from
// the package names) and the bytes of a few messages, field by field.
#include <boost/test/unit_test.hpp>

#include "dra_health_v1.grpc.pb.h"
#include "dra_health_v1alpha1.grpc.pb.h"
#include "dra_v1.grpc.pb.h"
#include "dra_v1beta1.grpc.pb.h"
#include "pluginregistration_v1.grpc.pb.h"

namespace hcudp::testing {
namespace {

namespace drav1 = ::k8s::io::kubelet::pkg::apis::dra::v1;
namespace drav1beta1 = ::k8s::io::kubelet::pkg::apis::dra::v1beta1;

BOOST_AUTO_TEST_SUITE(proto)

BOOST_AUTO_TEST_CASE(service_names_are_kubelets) {
  BOOST_TEST(std::string(pluginregistration::Registration::service_full_name()) ==
             "pluginregistration.Registration");
  BOOST_TEST(std::string(drav1::DRAPlugin::service_full_name()) ==
             "k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin");
  BOOST_TEST(std::string(drav1beta1::DRAPlugin::service_full_name()) ==
             "k8s.io.kubelet.pkg.apis.dra.v1beta1.DRAPlugin");
  BOOST_TEST(std::string(::v1alpha1::DRAResourceHealth::service_full_name()) ==
             "v1alpha1.DRAResourceHealth");
  BOOST_TEST(std::string(::v1::DRAResourceHealth::service_full_name()) == "v1.DRAResourceHealth");
}

BOOST_AUTO_TEST_CASE(field_numbers_are_kubelets) {
  // PluginInfo: type=1 name=2 endpoint=3 supported_versions=4.
  pluginregistration::PluginInfo info;
  info.set_type("T");
  info.set_name("N");
  info.set_endpoint("E");
  info.add_supported_versions("V");
  BOOST_TEST(info.SerializeAsString() == std::string("\x0a\x01T\x12\x01N\x1a\x01"
                                                     "E\x22\x01V"));
  // RegistrationStatus: plugin_registered=1 error=2.
  pluginregistration::RegistrationStatus status;
  status.set_plugin_registered(true);
  status.set_error("x");
  BOOST_TEST(status.SerializeAsString() == std::string("\x08\x01\x12\x01x"));
  // Claim: namespace=1 uid=2 name=3.
  drav1::Claim claim;
  claim.set_namespace_("a");
  claim.set_uid("b");
  claim.set_name("c");
  BOOST_TEST(claim.SerializeAsString() == std::string("\x0a\x01"
                                                      "a\x12\x01"
                                                      "b\x1a\x01"
                                                      "c"));
  // Device: request_names=1 pool_name=2 device_name=3 cdi_device_ids=4 share_id=5.
  drav1::Device device;
  device.add_request_names("r");
  device.set_pool_name("p");
  device.set_device_name("d");
  device.add_cdi_device_ids("i");
  device.set_share_id("s");
  BOOST_TEST(device.SerializeAsString() == std::string("\x0a\x01r\x12\x01p\x1a\x01"
                                                       "d\x22\x01i\x2a\x01s"));
  // DeviceHealth: device=1 health=2 last_updated_time=3 timeout=4 message=5.
  ::v1alpha1::DeviceHealth health;
  health.mutable_device()->set_pool_name("p");
  health.set_health(::v1alpha1::UNHEALTHY);
  health.set_last_updated_time(7);
  health.set_health_check_timeout_seconds(30);
  health.set_message("m");
  BOOST_TEST(health.SerializeAsString() ==
             std::string("\x0a\x03\x0a\x01p\x10\x02\x18\x07\x20\x1e\x2a\x01m"));
  ::v1::DeviceHealth health_v1;
  BOOST_REQUIRE(health_v1.ParseFromString(health.SerializeAsString()));
  BOOST_TEST(health_v1.message() == "m");
  BOOST_TEST(health_v1.health() == ::v1::UNHEALTHY);
}

BOOST_AUTO_TEST_CASE(a_v1_device_reads_as_v1beta1_without_share_id) {
  drav1::NodePrepareResourcesResponse v1;
  auto& claim = (*v1.mutable_claims())["uid"];
  auto* d = claim.add_devices();
  d->set_device_name("hcu-0");
  d->add_cdi_device_ids("dra.hygon.com/hcu=x");
  d->set_share_id("1f");
  drav1beta1::NodePrepareResourcesResponse beta;
  BOOST_REQUIRE(beta.ParseFromString(v1.SerializeAsString()));
  BOOST_TEST(beta.claims().at("uid").devices(0).device_name() == "hcu-0");
  BOOST_TEST(beta.claims().at("uid").devices(0).cdi_device_ids(0) == "dra.hygon.com/hcu=x");
  // An unset optional share_id is not sent at all (1.34 kubelets never see it).
  d->clear_share_id();
  BOOST_TEST(d->SerializeAsString().find('\x2a') == std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp::testing
