// PluginService: kubelet's DevicePlugin service for one resource. It only
// translates: device lists come from NodeState snapshots (no I/O), Allocate
// from AllocationBuilder, preferences from PreferredAllocation.
//
// Thread-safety: handlers run concurrently on gRPC threads; the service holds
// no mutable state besides atomics.
#ifndef HCU_DP_DAEMON_PLUGIN_SERVICE_H_
#define HCU_DP_DAEMON_PLUGIN_SERVICE_H_

#include <atomic>
#include <functional>
#include <string>

#include "deviceplugin_v1beta1.grpc.pb.h"
#include "hcudp/allocation.h"
#include "hcudp/naming.h"
#include "hcudp/node_state.h"
#include "hcudp/options.h"

namespace hcudp::daemon {

// Serves Allocate for a resource whose allocations live outside the
// AllocationBuilder (the HAMi hcunum/hcucores resources).
using AllocateDelegate = std::function<grpc::Status(
    DeviceKind kind, const v1beta1::AllocateRequest& request, v1beta1::AllocateResponse* response)>;

// Whether a resource of `kind` offers GetPreferredAllocation: only whole
// cards have a topology worth preferring. GetDevicePluginOptions and the
// RegisterRequest must agree, so both ask here.
inline bool OffersPreferredAllocation(DeviceKind kind) { return kind == DeviceKind::kCard; }

class PluginService final : public v1beta1::DevicePlugin::Service {
 public:
  // `on_stream_end` is called (from a gRPC thread) when a ListAndWatch stream
  // ends for a reason other than Stop(): its client went away or cancelled
  // it (kubelet_stream_open() tells whether kubelet's own is still open).
  PluginService(std::string resource_name, DeviceKind kind, NodeState& state,
                const AllocationBuilder& builder, DeviceListStrategy list_strategy,
                std::function<void()> on_stream_end, AllocateDelegate delegate = nullptr,
                std::function<bool()> delegate_ready = nullptr);

  // Makes every ListAndWatch return promptly; call before shutting the server.
  void Stop();
  int active_streams() const { return active_streams_.load(); }
  // Called before each Register: the first ListAndWatch opened after it is
  // taken as kubelet's (kubelet opens its stream right after Register), so
  // that another client's stream (grpcurl, hcuctl) neither hides the end of
  // kubelet's nor passes for it.
  void ExpectKubeletStream() { expect_kubelet_ = true; }
  // True while the stream taken as kubelet's latest is open.
  bool kubelet_stream_open() const { return kubelet_stream_.load() != 0; }

  grpc::Status GetDevicePluginOptions(grpc::ServerContext* context, const v1beta1::Empty* request,
                                      v1beta1::DevicePluginOptions* response) override;
  grpc::Status ListAndWatch(grpc::ServerContext* context, const v1beta1::Empty* request,
                            grpc::ServerWriter<v1beta1::ListAndWatchResponse>* writer) override;
  grpc::Status GetPreferredAllocation(grpc::ServerContext* context,
                                      const v1beta1::PreferredAllocationRequest* request,
                                      v1beta1::PreferredAllocationResponse* response) override;
  grpc::Status Allocate(grpc::ServerContext* context, const v1beta1::AllocateRequest* request,
                        v1beta1::AllocateResponse* response) override;
  grpc::Status PreStartContainer(grpc::ServerContext* context,
                                 const v1beta1::PreStartContainerRequest* request,
                                 v1beta1::PreStartContainerResponse* response) override;

 private:
  // Allocate without the metrics around it.
  grpc::Status AllocateUnmetered(grpc::ServerContext* context,
                                 const v1beta1::AllocateRequest* request,
                                 v1beta1::AllocateResponse* response);

  const std::string resource_name_;
  const DeviceKind kind_;
  NodeState& state_;
  const AllocationBuilder& builder_;
  const DeviceListStrategy list_strategy_;
  const std::function<void()> on_stream_end_;
  const AllocateDelegate delegate_;  // HAMi kinds only; may be empty
  // HAMi kinds only, may be empty: whether the delegate can serve an
  // Allocate now. While it cannot, every device is sent Unhealthy (nothing
  // is offered before the state it depends on is recovered, and an offer
  // whose state is lost later is withdrawn).
  const std::function<bool()> delegate_ready_;
  std::atomic<bool> stopping_{false};
  std::atomic<int> active_streams_{0};
  std::atomic<bool> expect_kubelet_{false};
  std::atomic<uint64_t> next_stream_{0};
  std::atomic<uint64_t> kubelet_stream_{0};  // its id while open, else 0
};

// Copies `a` into a kubelet container response as `strategy` says.
void FillResponse(const ContainerAllocation& a, DeviceListStrategy strategy,
                  v1beta1::ContainerAllocateResponse* out);

// The ListAndWatch message for `resource` (nullptr: empty list).
v1beta1::ListAndWatchResponse DeviceList(const Resource* resource);

}  // namespace hcudp::daemon

#endif  // HCU_DP_DAEMON_PLUGIN_SERVICE_H_
