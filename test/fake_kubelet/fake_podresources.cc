#include "fake_kubelet/fake_podresources.h"

#include <filesystem>

namespace hcudp::testing {

class FakePodResources::Service final : public v1::PodResourcesLister::Service {
 public:
  grpc::Status List(grpc::ServerContext* /*context*/,
                    const v1::ListPodResourcesRequest* /*request*/,
                    v1::ListPodResourcesResponse* response) override {
    std::lock_guard<std::mutex> lock(mu_);
    ++list_calls_;
    *response = list_;
    return grpc::Status::OK;
  }

  grpc::Status GetAllocatableResources(grpc::ServerContext* /*context*/,
                                       const v1::AllocatableResourcesRequest* /*request*/,
                                       v1::AllocatableResourcesResponse* response) override {
    std::lock_guard<std::mutex> lock(mu_);
    *response = allocatable_;
    return grpc::Status::OK;
  }

  grpc::Status Get(grpc::ServerContext* /*context*/, const v1::GetPodResourcesRequest* request,
                   v1::GetPodResourcesResponse* response) override {
    std::lock_guard<std::mutex> lock(mu_);
    for (const v1::PodResources& pod : list_.pod_resources()) {
      if (pod.name() == request->pod_name() && pod.namespace_() == request->pod_namespace()) {
        *response->mutable_pod_resources() = pod;
        return grpc::Status::OK;
      }
    }
    return grpc::Status(grpc::StatusCode::UNKNOWN, "pod " + request->pod_name() + " in namespace " +
                                                       request->pod_namespace() + " not found");
  }

  std::mutex mu_;
  v1::ListPodResourcesResponse list_;             // guarded by mu_
  v1::AllocatableResourcesResponse allocatable_;  // guarded by mu_
  int list_calls_ = 0;                            // guarded by mu_
};

FakePodResources::FakePodResources(std::string socket_path)
    : socket_path_(std::move(socket_path)), service_(std::make_unique<Service>()) {}

FakePodResources::~FakePodResources() { Stop(); }

std::string FakePodResources::Start() {
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(socket_path_).parent_path(), ec);
  std::filesystem::remove(socket_path_, ec);
  grpc::ServerBuilder builder;
  builder.AddListeningPort("unix:" + socket_path_, grpc::InsecureServerCredentials());
  builder.RegisterService(service_.get());
  server_ = builder.BuildAndStart();
  if (server_ == nullptr) return "cannot serve on " + socket_path_;
  return "";
}

void FakePodResources::Stop() {
  if (server_ == nullptr) return;
  server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
  server_.reset();
}

void FakePodResources::SetListResponse(const v1::ListPodResourcesResponse& response) {
  std::lock_guard<std::mutex> lock(service_->mu_);
  service_->list_ = response;
}

void FakePodResources::SetAllocatableResponse(const v1::AllocatableResourcesResponse& response) {
  std::lock_guard<std::mutex> lock(service_->mu_);
  service_->allocatable_ = response;
}

void FakePodResources::AddContainerDevices(const std::string& pod_namespace, const std::string& pod,
                                           const std::string& container,
                                           const std::string& resource,
                                           const std::vector<std::string>& device_ids) {
  std::lock_guard<std::mutex> lock(service_->mu_);
  v1::PodResources* target = nullptr;
  for (v1::PodResources& p : *service_->list_.mutable_pod_resources()) {
    if (p.name() == pod && p.namespace_() == pod_namespace) target = &p;
  }
  if (target == nullptr) {
    target = service_->list_.add_pod_resources();
    target->set_name(pod);
    target->set_namespace_(pod_namespace);
  }
  v1::ContainerResources* c = nullptr;
  for (v1::ContainerResources& existing : *target->mutable_containers()) {
    if (existing.name() == container) c = &existing;
  }
  if (c == nullptr) {
    c = target->add_containers();
    c->set_name(container);
  }
  v1::ContainerDevices* devices = c->add_devices();
  devices->set_resource_name(resource);
  for (const std::string& id : device_ids) devices->add_device_ids(id);
}

int FakePodResources::list_calls() const {
  std::lock_guard<std::mutex> lock(service_->mu_);
  return service_->list_calls_;
}

}  // namespace hcudp::testing
