// A fake kubelet pod-resources API (v1.PodResourcesLister) on a unix socket,
// for tests of `hcuctl allocations`. List() and GetAllocatableResources()
// return whatever the test configured; Get() looks the pod up in the List
// response and fails as kubelet does when it is missing
// (shared/reference/kubelet-contract.md §10).
//
// Thread-safety: all methods may be called from any thread.
#ifndef HCUDP_TEST_FAKE_KUBELET_FAKE_PODRESOURCES_H_
#define HCUDP_TEST_FAKE_KUBELET_FAKE_PODRESOURCES_H_

#include <grpcpp/grpcpp.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "podresources_v1.grpc.pb.h"

namespace hcudp::testing {

class FakePodResources {
 public:
  explicit FakePodResources(std::string socket_path);
  ~FakePodResources();
  FakePodResources(const FakePodResources&) = delete;
  FakePodResources& operator=(const FakePodResources&) = delete;

  // Creates the socket's directory and serves. Returns "" or an error text.
  std::string Start();
  void Stop();
  const std::string& socket_path() const { return socket_path_; }

  void SetListResponse(const v1::ListPodResourcesResponse& response);
  void SetAllocatableResponse(const v1::AllocatableResourcesResponse& response);
  // Convenience: appends a container holding `device_ids` of `resource` to
  // pod namespace/pod (created on first use) in the List response.
  void AddContainerDevices(const std::string& pod_namespace, const std::string& pod,
                           const std::string& container, const std::string& resource,
                           const std::vector<std::string>& device_ids);

  int list_calls() const;

 private:
  class Service;

  const std::string socket_path_;
  std::unique_ptr<Service> service_;
  std::unique_ptr<grpc::Server> server_;
};

}  // namespace hcudp::testing

#endif  // HCUDP_TEST_FAKE_KUBELET_FAKE_PODRESOURCES_H_
