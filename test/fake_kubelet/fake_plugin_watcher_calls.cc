// FakePluginWatcher, kubelet's side after registration: the health streams
// it opens and the NodePrepareResources / NodeUnprepareResources calls.
#include <set>

#include "dra_health_v1.grpc.pb.h"
#include "dra_health_v1alpha1.grpc.pb.h"
#include "fake_kubelet/fake_plugin_watcher.h"
#include "fake_kubelet/fake_plugin_watcher_plugin.h"
#include "testing/testutil.h"

namespace hcudp::testing {

void FakePluginWatcher::StartHealth(const std::shared_ptr<Plugin>& plugin) {
  std::lock_guard<std::mutex> lock(plugin->mu);
  if (plugin->closed) return;
  plugin->health = std::thread([this, plugin] { RunHealth(plugin); });
}

namespace {

template <class Service, class Request, class Response>
grpc::Status ReadHealthStream(const std::shared_ptr<grpc::Channel>& channel,
                              grpc::ClientContext* context,
                              const std::function<void(const Response&)>& on_message) {
  auto stub = Service::NewStub(channel);
  auto reader = stub->NodeWatchResources(context, Request());
  Response message;
  while (reader->Read(&message)) on_message(message);
  return reader->Finish();
}

}  // namespace

void FakePluginWatcher::RunHealth(std::shared_ptr<Plugin> plugin) {
  for (;;) {
    grpc::ClientContext context;
    {
      std::lock_guard<std::mutex> lock(plugin->mu);
      if (plugin->closed) return;
      plugin->health_ctx = &context;
    }
    bool counted_open = false;
    auto on_message = [&](const auto& message) {
      std::lock_guard<std::mutex> lock(mu_);
      DriverHealth& h = state_.health[plugin->driver];
      if (!counted_open) {
        counted_open = true;
        h.streams_opened++;
      }
      h.devices.clear();
      h.messages.clear();
      for (const auto& d : message.devices()) {
        const std::string key = d.device().pool_name() + "/" + d.device().device_name();
        h.devices[key] = static_cast<int>(d.health());
        h.messages[key] = d.message();
      }
      h.stream_messages++;
      changed_.notify_all();
    };
    grpc::Status status;
    if (plugin->health_service == "v1.DRAResourceHealth") {
      status = ReadHealthStream<::v1::DRAResourceHealth, ::v1::NodeWatchResourcesRequest,
                                ::v1::NodeWatchResourcesResponse>(
          plugin->channel, &context,
          std::function<void(const ::v1::NodeWatchResourcesResponse&)>(on_message));
    } else {
      status =
          ReadHealthStream<::v1alpha1::DRAResourceHealth, ::v1alpha1::NodeWatchResourcesRequest,
                           ::v1alpha1::NodeWatchResourcesResponse>(
              plugin->channel, &context,
              std::function<void(const ::v1alpha1::NodeWatchResourcesResponse&)>(on_message));
    }
    {
      std::lock_guard<std::mutex> lock(plugin->mu);
      plugin->health_ctx = nullptr;
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      DriverHealth& h = state_.health[plugin->driver];
      h.devices.clear();  // kubelet forgets the driver's health when a stream ends
      h.messages.clear();
      h.streams_ended++;
      h.last_end_status =
          std::to_string(static_cast<int>(status.error_code())) + " " + status.error_message();
      changed_.notify_all();
    }
    if (config_.health_mode == HealthMode::kAdvertised &&
        status.error_code() == grpc::StatusCode::UNIMPLEMENTED) {
      return;
    }
    std::unique_lock<std::mutex> lock(plugin->mu);
    plugin->cv.wait_for(lock, config_.health_retry, [&] { return plugin->closed; });
  }
}

std::shared_ptr<FakePluginWatcher::Plugin> FakePluginWatcher::PickPlugin(
    const std::string& driver) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = store_.find(driver);
  if (it == store_.end() || it->second.empty()) return nullptr;
  for (auto p = it->second.rbegin(); p != it->second.rend(); ++p) {
    if ((*p)->channel->GetState(false) == GRPC_CHANNEL_READY) return *p;
  }
  return it->second.back();
}

namespace {

// kubelet's checks: every claim asked for answered, no others.
template <class Map>
std::string CheckAnswer(const char* call, const std::vector<drav1::Claim>& claims,
                        const Map& answered) {
  std::set<std::string> asked;
  for (const auto& c : claims) asked.insert(c.uid());
  for (const auto& [uid, result] : answered) {
    if (asked.count(uid) == 0) {
      return std::string(call) + " returned result for unknown claim UID " + uid;
    }
  }
  size_t skipped = 0;
  for (const std::string& uid : asked) skipped += answered.count(uid) == 0 ? 1 : 0;
  if (skipped > 0) {
    return std::string(call) + " skipped " + std::to_string(skipped) + " ResourceClaims";
  }
  return "";
}

}  // namespace

namespace {

// One claim call as kubelet makes it: the v1 request when the plugin
// speaks v1.DRAPlugin, else the v1beta1 request with the same claims; a
// v1beta1 answer has v1's fields and numbers, so its bytes read as v1
// (kubelet converts).
template <class V1Request, class BetaRequest, class BetaResponse, class V1Response, class V1Call,
          class BetaCall>
grpc::Status CallEither(bool v1, const std::vector<drav1::Claim>& claims, V1Response* out,
                        V1Call call_v1, BetaCall call_beta) {
  if (v1) {
    V1Request request;
    for (const auto& c : claims) *request.add_claims() = c;
    return call_v1(request, out);
  }
  BetaRequest request;
  for (const auto& c : claims) {
    auto* claim = request.add_claims();
    claim->set_namespace_(c.namespace_());
    claim->set_uid(c.uid());
    claim->set_name(c.name());
  }
  BetaResponse response;
  grpc::Status st = call_beta(request, &response);
  out->ParseFromString(response.SerializeAsString());
  return st;
}

}  // namespace

std::shared_ptr<FakePluginWatcher::Plugin> FakePluginWatcher::PickForCall(const std::string& driver,
                                                                          CallOutcome* out) const {
  std::shared_ptr<Plugin> p = PickPlugin(driver);
  if (p == nullptr) {
    out->status = grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                               "DRA driver " + driver + " is not registered");
  } else {
    out->service = p->chosen_service;
  }
  return p;
}

CallOutcome FakePluginWatcher::NodePrepareResources(const std::string& driver,
                                                    const std::vector<drav1::Claim>& claims) {
  CallOutcome out;
  std::shared_ptr<Plugin> p = PickForCall(driver, &out);
  if (p == nullptr) return out;
  grpc::ClientContext context;
  context.set_deadline(GrpcDeadline(config_.call_timeout));
  out.status =
      CallEither<drav1::NodePrepareResourcesRequest, drav1beta1::NodePrepareResourcesRequest,
                 drav1beta1::NodePrepareResourcesResponse>(
          p->chosen_service == "v1.DRAPlugin", claims, &out.prepare,
          [&](const auto& request, auto* response) {
            return p->v1->NodePrepareResources(&context, request, response);
          },
          [&](const auto& request, auto* response) {
            return p->v1beta1->NodePrepareResources(&context, request, response);
          });
  if (out.status.ok())
    out.kubelet_error = CheckAnswer("NodePrepareResources", claims, out.prepare.claims());
  return out;
}

CallOutcome FakePluginWatcher::NodeUnprepareResources(const std::string& driver,
                                                      const std::vector<drav1::Claim>& claims) {
  CallOutcome out;
  std::shared_ptr<Plugin> p = PickForCall(driver, &out);
  if (p == nullptr) return out;
  grpc::ClientContext context;
  context.set_deadline(GrpcDeadline(config_.call_timeout));
  out.status =
      CallEither<drav1::NodeUnprepareResourcesRequest, drav1beta1::NodeUnprepareResourcesRequest,
                 drav1beta1::NodeUnprepareResourcesResponse>(
          p->chosen_service == "v1.DRAPlugin", claims, &out.unprepare,
          [&](const auto& request, auto* response) {
            return p->v1->NodeUnprepareResources(&context, request, response);
          },
          [&](const auto& request, auto* response) {
            return p->v1beta1->NodeUnprepareResources(&context, request, response);
          });
  if (out.status.ok())
    out.kubelet_error = CheckAnswer("NodeUnprepareResources", claims, out.unprepare.claims());
  return out;
}

}  // namespace hcudp::testing
