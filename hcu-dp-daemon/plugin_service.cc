#include "plugin_service.h"

#include "grpc_status.h"
#include "hcudp/preferred.h"
#include "hcudp_internal/log.h"
#include "metrics.h"
#ifdef HCUDP_DAEMON_TEST_HOOKS
#include "test_hooks.h"  // test/daemon_bounds: the test-only build's hooks
#endif

namespace hcudp::daemon {
namespace {

constexpr std::chrono::milliseconds kStreamPoll{250};

bool IsHamiKind(DeviceKind kind) {
  return kind == DeviceKind::kHamiCount || kind == DeviceKind::kHamiCores;
}

}  // namespace

void FillResponse(const ContainerAllocation& a, DeviceListStrategy strategy,
                  v1beta1::ContainerAllocateResponse* out) {
  if (strategy != DeviceListStrategy::kCdi) {
    for (const auto& d : a.devices) {
      auto* spec = out->add_devices();
      spec->set_container_path(d.container_path);
      spec->set_host_path(d.host_path);
      spec->set_permissions(d.permissions);
    }
    for (const auto& m : a.mounts) {
      auto* mount = out->add_mounts();
      mount->set_container_path(m.container_path);
      mount->set_host_path(m.host_path);
      mount->set_read_only(m.read_only);
    }
    for (const auto& [k, v] : a.envs) (*out->mutable_envs())[k] = v;
  }
  if (strategy != DeviceListStrategy::kDevices) {
    for (const auto& name : a.cdi_devices) out->add_cdi_devices()->set_name(name);
  }
}

v1beta1::ListAndWatchResponse DeviceList(const Resource* resource) {
  v1beta1::ListAndWatchResponse out;
  if (resource == nullptr) return out;
  for (const auto& d : resource->devices) {
    auto* dev = out.add_devices();
    dev->set_id(d.id);
    dev->set_health(std::string(HealthName(d.health)));
    if (d.numa_node >= 0) dev->mutable_topology()->add_nodes()->set_id(d.numa_node);
  }
  return out;
}

PluginService::PluginService(std::string resource_name, DeviceKind kind, NodeState& state,
                             const AllocationBuilder& builder, DeviceListStrategy list_strategy,
                             std::function<void()> on_stream_end, AllocateDelegate delegate,
                             std::function<bool()> delegate_ready)
    : resource_name_(std::move(resource_name)),
      kind_(kind),
      state_(state),
      builder_(builder),
      list_strategy_(list_strategy),
      on_stream_end_(std::move(on_stream_end)),
      delegate_(std::move(delegate)),
      delegate_ready_(IsHamiKind(kind) ? std::move(delegate_ready) : nullptr) {}

void PluginService::Stop() {
  stopping_ = true;
  state_.Wake();
}

grpc::Status PluginService::GetDevicePluginOptions(grpc::ServerContext*, const v1beta1::Empty*,
                                                   v1beta1::DevicePluginOptions* response) {
  response->set_pre_start_required(false);
  response->set_get_preferred_allocation_available(OffersPreferredAllocation(kind_));
  return grpc::Status::OK;
}

grpc::Status PluginService::ListAndWatch(
    grpc::ServerContext* context, const v1beta1::Empty*,
    grpc::ServerWriter<v1beta1::ListAndWatchResponse>* writer) {
  ++active_streams_;
  const uint64_t id = ++next_stream_;
  if (expect_kubelet_.exchange(false)) kubelet_stream_ = id;
  auto snapshot = state_.Current();
  // Sent Unhealthy while the delegate cannot serve (see delegate_ready_).
  auto list = [this](const NodeSnapshot& s, bool servable) {
    v1beta1::ListAndWatchResponse out = DeviceList(s.FindResource(resource_name_));
    if (!servable) {
      for (auto& d : *out.mutable_devices())
        d.set_health(std::string(HealthName(Health::kUnhealthy)));
    }
    return out;
  };
  bool servable = !delegate_ready_ || delegate_ready_();
  v1beta1::ListAndWatchResponse sent = list(*snapshot, servable);
  bool ok = writer->Write(sent);
  VLOG(2) << resource_name_ << ": ListAndWatch opened, sent " << sent.devices_size() << " devices";
  while (ok && !stopping_ && !context->IsCancelled()) {
    uint64_t seen = snapshot->generation;
    snapshot = state_.WaitNewer(seen, kStreamPoll);
    const bool now_servable = !delegate_ready_ || delegate_ready_();
    // Woken by the poll, nothing new.
    if (snapshot->generation == seen && now_servable == servable) continue;
    if (now_servable != servable) {
      LOG(INFO) << resource_name_ << ": devices " << (now_servable ? "offered" : "withdrawn")
                << ": the HAMi agent is " << (now_servable ? "ready" : "not ready");
    }
    servable = now_servable;
    v1beta1::ListAndWatchResponse next = list(*snapshot, servable);
    // The same list, device for device: equal bytes (the message has no
    // maps, so its serialization is canonical). MessageDifferencer compared
    // by reflection and kept ~0.6 MiB more of libprotobuf resident.
    if (next.SerializeAsString() == sent.SerializeAsString()) continue;
    ok = writer->Write(next);
    if (ok) {
      VLOG(2) << resource_name_ << ": sent " << next.devices_size() << " devices";
      sent = std::move(next);
    }
  }
  --active_streams_;
  uint64_t mine = id;
  const bool kubelets = kubelet_stream_.compare_exchange_strong(mine, 0);
  if (stopping_) return grpc::Status::OK;
  if (kubelets) {
    LOG(WARNING) << resource_name_ << ": kubelet's ListAndWatch stream ended ("
                 << (ok ? "cancelled by kubelet" : "send failed") << ")";
  } else {
    VLOG(1) << resource_name_ << ": a ListAndWatch stream of another client ended";
  }
  if (on_stream_end_) on_stream_end_();
  return grpc::Status(grpc::StatusCode::CANCELLED, "stream ended");
}

grpc::Status PluginService::GetPreferredAllocation(
    grpc::ServerContext* context, const v1beta1::PreferredAllocationRequest* request,
    v1beta1::PreferredAllocationResponse* response) {
  // The search is bounded anyway; this ends it early when kubelet has gone
  // or the daemon is stopping.
  auto cancelled = [this, context] {
    return stopping_.load() || (context != nullptr && context->IsCancelled());
  };
  auto snapshot = state_.Current();
  const Resource* resource = snapshot->FindResource(resource_name_);
  for (const auto& req : request->container_requests()) {
    auto* out = response->add_container_responses();
    if (resource == nullptr) continue;
    PreferredRequest pr;
    pr.available.assign(req.available_deviceids().begin(), req.available_deviceids().end());
    pr.must_include.assign(req.must_include_deviceids().begin(),
                           req.must_include_deviceids().end());
    pr.size = req.allocation_size();
    for (auto& id : PreferredAllocation(snapshot->inventory, *resource, pr, cancelled)) {
      out->add_deviceids(std::move(id));
    }
  }
  return grpc::Status::OK;
}

grpc::Status PluginService::Allocate(grpc::ServerContext* context,
                                     const v1beta1::AllocateRequest* request,
                                     v1beta1::AllocateResponse* response) {
  const auto start = std::chrono::steady_clock::now();
  grpc::Status result = AllocateUnmetered(context, request, response);
  if (DaemonMetrics* m = DaemonMetrics::Active()) {
    m->ObserveAllocate(resource_name_, result.ok(), std::chrono::steady_clock::now() - start);
  }
  return result;
}

grpc::Status PluginService::AllocateUnmetered(grpc::ServerContext*,
                                              const v1beta1::AllocateRequest* request,
                                              v1beta1::AllocateResponse* response) {
#ifdef HCUDP_DAEMON_TEST_HOOKS
  testing::HoldAllocateIfAsked(*request);  // test-only build (test/daemon_bounds)
#endif
  if (delegate_ && IsHamiKind(kind_)) return delegate_(kind_, *request, response);
  auto snapshot = state_.Current();
  const Resource* resource = snapshot->FindResource(resource_name_);
  Resource empty;
  empty.name = resource_name_;
  empty.kind = kind_;
  for (const auto& req : request->container_requests()) {
    std::vector<std::string> ids(req.devices_ids().begin(), req.devices_ids().end());
    auto a = builder_.Build(snapshot->inventory, resource ? *resource : empty, ids);
    if (!a.ok()) {
      LOG(WARNING) << resource_name_ << ": Allocate refused: " << a.status().ToString();
      return ToGrpcStatus(a.status());
    }
    FillResponse(*a, list_strategy_, response->add_container_responses());
  }
  return grpc::Status::OK;
}

grpc::Status PluginService::PreStartContainer(grpc::ServerContext*,
                                              const v1beta1::PreStartContainerRequest*,
                                              v1beta1::PreStartContainerResponse*) {
  return grpc::Status::OK;
}

}  // namespace hcudp::daemon
