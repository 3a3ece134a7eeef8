#include "dra_mode.h"

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <thread>
#include <utility>

#include "hcudp/kube_config.h"
#include "hcudp_cli/cdi_dir.h"
#include "hcudp_internal/log.h"
#include "hcudp_internal/thread_annotations.h"
#include "metrics.h"
#ifdef HCUDP_TEST_CRASH_POINTS
#include "crash_points.h"  // test/integration: the test copy's hooks
#endif

namespace hcudp::daemon {
namespace {

namespace hdra = ::hcudp::dra;

// When a Prepare's claim GET must have ended, from kubelet's deadline: a
// fifth of what is left (at most 1 s) is kept for the answer to reach
// kubelet, as a per-claim error it can retry rather than its own timeout.
std::optional<Clock::TimePoint> GetDeadline(const dra::CallContext& call) {
  if (call.deadline == std::chrono::system_clock::time_point::max()) return std::nullopt;
  using Duration = Clock::TimePoint::duration;
  const auto left =
      std::chrono::duration_cast<Duration>(call.deadline - std::chrono::system_clock::now());
  const Duration margin =
      std::max(std::min<Duration>(left / 5, std::chrono::seconds(1)), Duration(0));
  return Clock::Real().Now() + left - margin;
}

}  // namespace

struct DraMode::RegistrationView {
  Mutex mu;
  const dra::DraPlugin* plugin HCUDP_GUARDED_BY(mu) = nullptr;
};

StatusOr<std::unique_ptr<DraMode>> DraMode::New(const Options& options, Node& node) {
  // Names first (no network): a bad one is the flag's error.
  hdra::SliceParams check;
  check.node_name = options.node_name;
  if (auto plan = hdra::BuildPoolPlan(NodeInventory{}, check); !plan.ok()) {
    return InvalidArgumentError("--node-name: " + plan.status().message());
  }
  check.node_name = "node";
  check.driver_name = options.dra_driver_name;
  if (auto plan = hdra::BuildPoolPlan(NodeInventory{}, check); !plan.ok()) {
    return InvalidArgumentError("--dra-driver-name: " + plan.status().message());
  }
  // Whatever is wrong with the cluster credentials is a start-up input
  // error: one line and exit 2 (as in HAMi mode).
  StatusOr<KubeConfig> resolved = ResolveKubeConfig(options.kubeconfig);
  if (!resolved.ok()) {
    const std::string& why = resolved.status().message();
    return InvalidArgumentError(why.rfind("--", 0) == 0 ? why : "--kubeconfig: " + why);
  }
  KubeClientOptions client_options;
  client_options.request_timeout_ms = 5000;
  client_options.max_retries = 4;
  client_options.on_response = DaemonMetrics::CountApiResponse;
  HCUDP_ASSIGN_OR_RETURN(auto client, KubeClient::New(std::move(*resolved), client_options));
  HCUDP_ASSIGN_OR_RETURN(std::string cdi_dir,
                         CdiSpecHostPath(node.backend().host_root(), options.cdi_spec_dir));
  std::unique_ptr<DraMode> mode(new DraMode(options));
  DraMode* m = mode.get();
  mode->client_ = std::move(client);
  mode->registration_view_ = std::make_shared<RegistrationView>();

  hdra::DraAgentOptions ao;
  ao.preparer.driver_name = options.dra_driver_name;
  ao.preparer.pool_name = options.node_name;
  ao.preparer.cdi_dir = cdi_dir;
  ao.preparer.hyhal_path = options.hyhal_path;
  ao.preparer.cdi_hook_path = options.cdi_hook_path;
  ao.preparer.cdi_debug_access = options.cdi_debug_access;
  ao.slices.params.node_name = options.node_name;
  ao.slices.params.driver_name = options.dra_driver_name;
  ao.slices.params.max_vhcus_per_card = options.device_split_count;
  ao.slices.owned_by_node = true;
#ifdef HCUDP_TEST_CRASH_POINTS
  ao.preparer.crash_after = testing::PrepareCrashHook();
  ao.vhcus.crash_after = testing::VhcuCrashHook(/*warn_if_unknown=*/false);
#endif
  ao.on_health_changed = [m] {
    if (m->plugin_ != nullptr) m->plugin_->NotifyHealthChanged();
  };
  ao.on_pool = [](const std::vector<std::pair<std::string, bool>>& devices) {
    if (DaemonMetrics* metrics = DaemonMetrics::Active()) metrics->OnDraPool(devices);
  };
  HCUDP_ASSIGN_OR_RETURN(mode->agent_, hdra::DraAgent::New(node, *mode->client_, std::move(ao)));
  LOG(INFO) << "DRA: API server " << mode->client_->server() << ", node " << options.node_name
            << ", driver " << options.dra_driver_name;

  dra::DraPluginOptions plugin_options = dra::DraPluginOptionsFrom(options);
  // kubelet deletes the node's slices when it starts, then registers us.
  plugin_options.on_registered = [m] {
    m->agent_->RequestResync();
    m->ServeMetrics();
  };
  mode->plugin_ = std::make_unique<dra::DraPlugin>(std::move(plugin_options), *m);
  MutexLock lock(mode->registration_view_->mu);
  mode->registration_view_->plugin = mode->plugin_.get();
  return mode;
}

void DraMode::ServeMetrics() {
  DaemonMetrics* metrics = DaemonMetrics::Active();
  if (metrics == nullptr) return;
  // Later registrations change nothing: ServeMetrics acts once.
  metrics->ServeMetrics([view = registration_view_, driver = options_.dra_driver_name] {
    MutexLock lock(view->mu);
    return std::vector<std::pair<std::string, bool>>{
        {driver, view->plugin != nullptr && view->plugin->registered()}};
  });
}

DraMode::~DraMode() { Stop(); }

Status DraMode::Start() {
  // Recover before publishing or serving. It GETs recorded claims, which may
  // wait for an API server that does not answer; a SIGTERM meanwhile is
  // taken here.
  std::atomic<bool> done{false};
  StatusOr<hdra::RecoverResult> recovered = UnavailableError("not run");
  std::thread recover([&] {
    recovered = agent_->Recover();
    done = true;
  });
  sigset_t termination;
  sigemptyset(&termination);
  sigaddset(&termination, SIGTERM);
  sigaddset(&termination, SIGINT);
  int signal = 0;
  while (!done) {
    const timespec poll{0, 20 * 1000 * 1000};
    const int s = sigtimedwait(&termination, nullptr, &poll);
    if ((s == SIGTERM || s == SIGINT) && signal == 0) {
      signal = s;
      LOG(INFO) << "received " << (s == SIGTERM ? "SIGTERM" : "SIGINT")
                << " while recovering the DRA checkpoint";
      agent_->Cancel();  // the claim GET in flight ends now
    }
  }
  recover.join();
  if (signal != 0) return Status(StatusCode::kCancelled, "stopped by a signal before serving");
  if (!recovered.ok()) return recovered.status().WithContext("DRA checkpoint recovery");
  const hdra::RecoverResult& r = *recovered;
  LOG(INFO) << "DRA checkpoint: " << r.kept << " claim(s) kept, " << r.specs_rewritten
            << " CDI spec(s) recreated, " << r.rolled_back << " interrupted prepare(s) undone, "
            << r.unprepared << " deleted claim(s) unprepared, " << r.pending << " to check again";
  for (const std::string& bad : r.bad_entries) LOG(WARNING) << "DRA checkpoint: " << bad;
  agent_->Start();
  HCUDP_RETURN_IF_ERROR(plugin_->Start());
  LOG(INFO) << "DRA: serving " << plugin_->service_socket_path() << ", registration socket "
            << plugin_->registration_socket_path();
  return OkStatus();
}

bool DraMode::Stop() {
  if (stopped_ || agent_ == nullptr) return true;
  stopped_ = true;
  stopping_ = true;
  agent_->Cancel();  // every API call in flight ends
  {
    MutexLock lock(registration_view_->mu);
    registration_view_->plugin = nullptr;  // scrapes from now on: not registered
  }
  const bool clean = plugin_ == nullptr || plugin_->Stop();
  agent_->Stop();
  return clean;
}

StatusOr<std::map<std::string, dra::PrepareResult>> DraMode::Prepare(
    const std::vector<dra::Claim>& claims, const dra::CallContext& call) {
  std::map<std::string, dra::PrepareResult> out;
  for (const dra::Claim& c : claims) {
    if (call.cancelled() || stopping_) {
      return Status(StatusCode::kCancelled, "the call was cancelled");
    }
    const auto start = std::chrono::steady_clock::now();
    StatusOr<hdra::PrepareAnswer> answer = agent_->Prepare(c, GetDeadline(call));
    if (DaemonMetrics* m = DaemonMetrics::Active()) {
      m->ObservePrepare(answer.ok() && answer->error.empty(),
                        std::chrono::steady_clock::now() - start);
    }
    if (!answer.ok()) {
      LOG(WARNING) << "NodePrepareResources " << c.namespace_name << "/" << c.name << " (" << c.uid
                   << "): " << answer.status().ToString();
      return answer.status().WithContext("ResourceClaim " + c.namespace_name + "/" + c.name);
    }
    if (!answer->error.empty()) {
      LOG(WARNING) << "NodePrepareResources " << c.namespace_name << "/" << c.name
                   << ": will be retried: " << answer->error;
    }
    out[c.uid] = std::move(*answer);
  }
  return out;
}

StatusOr<std::map<std::string, std::string>> DraMode::Unprepare(
    const std::vector<dra::Claim>& claims, const dra::CallContext& call) {
  std::map<std::string, std::string> out;
  for (const dra::Claim& c : claims) {
    if (call.cancelled() || stopping_) {
      return Status(StatusCode::kCancelled, "the call was cancelled");
    }
    const auto start = std::chrono::steady_clock::now();
    Status st = agent_->Unprepare(c);
    if (DaemonMetrics* m = DaemonMetrics::Active()) {
      m->ObserveUnprepare(st.ok(), std::chrono::steady_clock::now() - start);
    }
    if (!st.ok()) {
      LOG(WARNING) << "NodeUnprepareResources " << c.namespace_name << "/" << c.name << " ("
                   << c.uid << "): will be retried: " << st.ToString();
    }
    out[c.uid] = st.ok() ? "" : st.message();
  }
  return out;
}

}  // namespace hcudp::daemon
