#include "hami_mode.h"

#include <signal.h>

#include <chrono>

#include "grpc_status.h"
#include "hcudp_internal/log.h"
#include "metrics.h"
#ifdef HCUDP_TEST_CRASH_POINTS
#include "crash_points.h"  // test/integration: the test copy's hooks
#endif

namespace hcudp::daemon {
namespace {

constexpr std::chrono::milliseconds kStartWait{10000};

}  // namespace

StatusOr<std::unique_ptr<HamiMode>> HamiMode::New(
    const Options& options, Node& node, std::function<void(const VhcuSweepResult&)> on_recovered) {
  // Whatever is wrong with the cluster credentials (missing, unreadable,
  // malformed) is a start-up input error: one line and exit 2.
  StatusOr<KubeConfig> resolved = ResolveKubeConfig(options.kubeconfig);
  if (!resolved.ok()) return InvalidArgumentError(resolved.status().message());
  KubeConfig config = std::move(*resolved);
  KubeClientOptions client_options;
  client_options.request_timeout_ms = 5000;
  client_options.max_retries = 4;
  client_options.on_response = DaemonMetrics::CountApiResponse;
  HCUDP_ASSIGN_OR_RETURN(auto client, KubeClient::New(std::move(config), client_options));
  LOG(INFO) << "HAMi: API server " << client->server() << ", node " << options.node_name;

  HamiAgentOptions o;
  o.node_name = options.node_name;
  o.split_count = options.device_split_count;
  o.resource_multiple = options.resource_multiple;
  o.topology_register = options.topology_register;
  o.evict_unaccounted_pods = options.evict_unaccounted_pods;
  o.on_recovered = std::move(on_recovered);
  o.hyhal_path = options.hyhal_path;
#ifdef HCUDP_TEST_CRASH_POINTS
  o.crash_after = testing::VhcuCrashHook(/*warn_if_unknown=*/true);
#endif
  // The host root, the card health (what ListAndWatch sends) and the
  // hcumem resource's name are the Node's: HamiAgent's Node constructor
  // takes them from it.
  o.hcumem_resource.clear();
  o.start_wait = std::chrono::milliseconds(0);  // Start() below waits, signals in view

  std::unique_ptr<HamiMode> mode(new HamiMode());
  mode->client_ = std::move(client);
  mode->agent_ = std::make_unique<HamiAgent>(node, mode->client_.get(), std::move(o));
  return mode;
}

HamiMode::~HamiMode() { Stop(); }

Status HamiMode::Start() {
  HCUDP_RETURN_IF_ERROR(agent_->Start());
  // Wait for the first sync and registration, but not past a SIGTERM: it
  // is taken here (the signals are blocked in every thread) and the caller
  // exits as it would after serving.
  sigset_t termination;
  sigemptyset(&termination);
  sigaddset(&termination, SIGTERM);
  sigaddset(&termination, SIGINT);
  const auto deadline = std::chrono::steady_clock::now() + kStartWait;
  while (!agent_->settled() && std::chrono::steady_clock::now() < deadline) {
    const timespec poll{0, 50 * 1000 * 1000};
    const int signal = sigtimedwait(&termination, nullptr, &poll);
    if (signal == SIGTERM || signal == SIGINT) {
      LOG(INFO) << "received " << (signal == SIGTERM ? "SIGTERM" : "SIGINT")
                << " while the HAMi agent was starting";
      agent_->Stop();
      return Status(StatusCode::kCancelled, "stopped by a signal before serving");
    }
  }
  if (!agent_->ready()) {
    LOG(WARNING) << "HAMi: not ready yet (pod cache sync, node lock check, vHCU recovery): "
                    "nothing is registered, and kubelet sees the devices unhealthy, until it is";
  }
  return OkStatus();
}

void HamiMode::Stop() { agent_->Stop(); }

// Before Start (a node change during the watcher's first look): the agent's
// start registers anyway.
void HamiMode::RequestRegister() { agent_->RequestRegister(); }

std::function<bool()> HamiMode::Ready() {
  return [this] { return agent_->ready(); };
}

AllocateDelegate HamiMode::Delegate() {
  return [this](DeviceKind kind, const v1beta1::AllocateRequest& request,
                v1beta1::AllocateResponse* response) { return Allocate(kind, request, response); };
}

grpc::Status HamiMode::Allocate(DeviceKind kind, const v1beta1::AllocateRequest& request,
                                v1beta1::AllocateResponse* response) {
  std::vector<int> counts;
  for (const auto& req : request.container_requests()) counts.push_back(req.devices_ids_size());
  StatusOr<std::vector<ContainerAllocation>> result =
      kind == DeviceKind::kHamiCores ? agent_->AllocateCores() : agent_->AllocateCount(counts);
  if (!result.ok()) {
    LOG(WARNING) << "HAMi Allocate refused: " << result.status().ToString();
    return ToGrpcStatus(result.status());
  }
  // Device specs and mounts whatever --device-list-strategy says: HAMi
  // allocations have no CDI names.
  for (const auto& a : *result) {
    FillResponse(a, DeviceListStrategy::kDevices, response->add_container_responses());
  }
  return grpc::Status::OK;
}

}  // namespace hcudp::daemon
