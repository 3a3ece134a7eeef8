// The fake pod-resources server answers as kubelet's v1 PodResourcesLister.
#include "fake_kubelet/fake_podresources.h"

#include <boost/test/unit_test.hpp>

#include "testing/testutil.h"

namespace hcudp::testing {
namespace {

struct PodResourcesFixture {
  PodResourcesFixture() : server(dir.Join("pod-resources/kubelet.sock")) {
    BOOST_REQUIRE_EQUAL(server.Start(), "");
    auto channel =
        grpc::CreateChannel("unix:" + server.socket_path(), grpc::InsecureChannelCredentials());
    stub = v1::PodResourcesLister::NewStub(channel);
  }
  TempDir dir;
  FakePodResources server;
  std::unique_ptr<v1::PodResourcesLister::Stub> stub;
};

BOOST_AUTO_TEST_SUITE(fake_podresources)

BOOST_FIXTURE_TEST_CASE(list_returns_the_configured_pods, PodResourcesFixture) {
  server.AddContainerDevices("default", "train", "main", "hygon.com/hcu",
                             {"0000:09:00.0", "0000:29:00.0"});
  server.AddContainerDevices("default", "train", "side", "hygon.com/hcu-share-15c-8g", {"vdev1"});
  grpc::ClientContext context;
  v1::ListPodResourcesResponse response;
  BOOST_REQUIRE(stub->List(&context, v1::ListPodResourcesRequest(), &response).ok());
  BOOST_REQUIRE_EQUAL(response.pod_resources_size(), 1);
  const v1::PodResources& pod = response.pod_resources(0);
  BOOST_TEST(pod.name() == "train");
  BOOST_TEST(pod.namespace_() == "default");
  BOOST_REQUIRE_EQUAL(pod.containers_size(), 2);
  BOOST_TEST(pod.containers(0).devices(0).resource_name() == "hygon.com/hcu");
  BOOST_TEST(pod.containers(0).devices(0).device_ids_size() == 2);
  BOOST_TEST(pod.containers(1).devices(0).device_ids(0) == "vdev1");
  BOOST_TEST(server.list_calls() == 1);
}

BOOST_FIXTURE_TEST_CASE(get_allocatable_resources_returns_the_configured_devices,
                        PodResourcesFixture) {
  v1::AllocatableResourcesResponse configured;
  v1::ContainerDevices* devices = configured.add_devices();
  devices->set_resource_name("hygon.com/hcu");
  devices->add_device_ids("0000:09:00.0");
  devices->mutable_topology()->add_nodes()->set_id(0);
  server.SetAllocatableResponse(configured);
  grpc::ClientContext context;
  v1::AllocatableResourcesResponse response;
  BOOST_REQUIRE(
      stub->GetAllocatableResources(&context, v1::AllocatableResourcesRequest(), &response).ok());
  BOOST_REQUIRE_EQUAL(response.devices_size(), 1);
  BOOST_TEST(response.devices(0).topology().nodes(0).id() == 0);
}

BOOST_FIXTURE_TEST_CASE(get_of_a_missing_pod_fails_with_kubelets_text, PodResourcesFixture) {
  grpc::ClientContext context;
  v1::GetPodResourcesRequest request;
  request.set_pod_name("gone");
  request.set_pod_namespace("default");
  v1::GetPodResourcesResponse response;
  grpc::Status s = stub->Get(&context, request, &response);
  BOOST_TEST(!s.ok());
  BOOST_TEST(s.error_message() == "pod gone in namespace default not found");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp::testing
