#include "dra_mode.h"

#include <glog/logging.h>
#include <malloc.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <map>
#include <set>
#include <utility>

#include "cdi_dir.h"
#include "hcudp/kube_config.h"
#include "hcudp/kube_ops.h"
#include "hcudp_internal/clock_wait.h"
#include "metrics.h"

namespace hcudp::daemon {
namespace {

namespace hdra = ::hcudp::dra;

#ifdef HCUDP_TEST_CRASH_POINTS
// Only in the test copy hcu-dp-daemon-crashpoints (test/integration): the
// step of a Prepare (or of its vHCU creation) after which the daemon SIGKILLs
// itself, from HCUDP_TEST_ONLY_CRASH_AFTER. The shipped daemon has no switch.
constexpr char kCrashAfterEnv[] = "HCUDP_TEST_ONLY_CRASH_AFTER";

std::string CrashStep() {
  const char* env = std::getenv(kCrashAfterEnv);
  return env == nullptr ? "" : env;
}

std::function<bool(hdra::PrepareStep)> PrepareCrashHook() {
  static const std::map<std::string, hdra::PrepareStep> kSteps = {
      {"dra-preparing", hdra::PrepareStep::kCheckpointPreparing},
      {"dra-device-made", hdra::PrepareStep::kDeviceMade},
      {"dra-claim-spec", hdra::PrepareStep::kClaimSpecWritten},
      {"dra-prepared", hdra::PrepareStep::kCheckpointPrepared},
      {"dra-unprepare-freed", hdra::PrepareStep::kUnprepareDeviceFreed}};
  auto it = kSteps.find(CrashStep());
  if (it == kSteps.end()) return nullptr;
  LOG(WARNING) << "test only: will crash after Prepare step " << it->first;
  const hdra::PrepareStep target = it->second;
  return [target](hdra::PrepareStep s) {
    if (s == target) std::raise(SIGKILL);
    return false;
  };
}

std::function<bool(VhcuCreateStep)> VhcuCrashHook() {
  static const std::map<std::string, VhcuCreateStep> kSteps = {
      {"intent-recorded", VhcuCreateStep::kIntentRecorded},
      {"vhcu-created", VhcuCreateStep::kVhcuCreated},
      {"id-recorded", VhcuCreateStep::kIdRecorded},
      {"mark-written", VhcuCreateStep::kMarkWritten}};
  auto it = kSteps.find(CrashStep());
  if (it == kSteps.end()) return nullptr;
  LOG(WARNING) << "test only: will crash after vHCU step " << it->first;
  const VhcuCreateStep target = it->second;
  return [target](VhcuCreateStep s) {
    if (s == target) std::raise(SIGKILL);
    return false;
  };
}
#endif  // HCUDP_TEST_CRASH_POINTS

}  // namespace

struct DraMode::RegistrationView {
  Mutex mu;
  const dra::DraPlugin* plugin HCUDP_GUARDED_BY(mu) = nullptr;
};

DraMode::DraMode(const Options& options, Backend& backend, const NodeState& state)
    : options_(options),
      backend_(backend),
      state_(state),
      registration_view_(std::make_shared<RegistrationView>()) {}

StatusOr<std::unique_ptr<DraMode>> DraMode::New(const Options& options, Backend& backend,
                                                const NodeState& state) {
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
                         CdiSpecHostPath(backend.host_root(), options.cdi_spec_dir));
  std::unique_ptr<DraMode> mode(new DraMode(options, backend, state));
  DraMode* m = mode.get();
  mode->client_ = std::move(client);

  // The Node's UID makes the slices garbage-collected with it. The API may
  // be down: publish without the owner rather than not at all.
  std::string node_uid;
  CallOptions call;
  call.deadline = Clock::Real().Now() + kNodeGetTimeout;
  call.cancel = &mode->stopping_;
  StatusOr<NodeObject> node = GetNode(*mode->client_, options.node_name, call);
  if (node.ok()) {
    node_uid = node->metadata.uid;
  } else {
    LOG(WARNING) << "DRA: node " << options.node_name << ": " << node.status().ToString()
                 << "; slices are published without the Node as owner";
  }
  LOG(INFO) << "DRA: API server " << mode->client_->server() << ", node " << options.node_name
            << (node_uid.empty() ? "" : " (uid " + node_uid + ")") << ", driver "
            << options.dra_driver_name;

  VhcuManagerOptions vo;
  vo.host_root = backend.host_root();
#ifdef HCUDP_TEST_CRASH_POINTS
  vo.crash_after = VhcuCrashHook();
#endif
  mode->vhcus_ = std::make_unique<VhcuManager>(&backend, vo);

  hdra::PreparerOptions po;
  po.host_root = backend.host_root();
  po.driver_name = options.dra_driver_name;
  po.pool_name = options.node_name;
  po.cdi_dir = cdi_dir;
  po.hyhal_path = options.hyhal_path;
  po.cdi_hook_path = options.cdi_hook_path;
  po.cdi_debug_access = options.cdi_debug_access;
  po.on_change = [m] { m->RefreshHealth(); };
#ifdef HCUDP_TEST_CRASH_POINTS
  po.crash_after = PrepareCrashHook();
#endif
  hdra::ClaimFetcher fetch =
      hdra::KubeClaimFetcher(mode->client_.get(), kClaimGetTimeout, &mode->stopping_);
  mode->preparer_ = std::make_unique<hdra::Preparer>(&backend, mode->vhcus_.get(), std::move(fetch),
                                                     std::move(po));

  hdra::SlicePublisherOptions so;
  so.params.node_name = options.node_name;
  so.params.node_uid = node_uid;  // the first guess: the publisher reads it again when needed
  so.owned_by_node = true;
  so.params.driver_name = options.dra_driver_name;
  so.params.max_vhcus_per_card = options.device_split_count;
  HCUDP_ASSIGN_OR_RETURN(mode->publisher_,
                         hdra::SlicePublisher::New(*mode->client_, std::move(so)));

  dra::DraPluginOptions plugin_options = dra::DraPluginOptionsFrom(options);
  // kubelet deletes the node's slices when it starts, then registers us.
  plugin_options.on_registered = [m] {
    m->publisher_->RequestResync();
    m->ServeMetrics();
  };
  mode->plugin_ = std::make_unique<dra::DraPlugin>(std::move(plugin_options), *m);
  {
    MutexLock lock(mode->registration_view_->mu);
    mode->registration_view_->plugin = mode->plugin_.get();
  }
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
  OnNodeChanged();
  publisher_->Start();
  // Recover before serving. It GETs recorded claims, which may wait for an
  // API server that does not answer; a SIGTERM meanwhile is taken here.
  std::atomic<bool> done{false};
  StatusOr<hdra::RecoverResult> recovered = UnavailableError("not run");
  std::thread recover([&] {
    recovered = preparer_->Recover();
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
      stopping_ = true;  // the claim GET in flight ends now
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
  RefreshHealth();
  HCUDP_RETURN_IF_ERROR(plugin_->Start());
  started_ = true;
  ticker_ = std::thread([this] { TickLoop(); });
  LOG(INFO) << "DRA: serving " << plugin_->service_socket_path() << ", registration socket "
            << plugin_->registration_socket_path();
  return OkStatus();
}

bool DraMode::Stop() {
  if (stopped_) return true;
  stopped_ = true;
  stopping_ = true;  // cancels every API call in flight
  {
    MutexLock lock(mu_);
    tick_stop_ = true;
  }
  cv_.notify_all();
  {
    MutexLock lock(registration_view_->mu);
    registration_view_->plugin = nullptr;  // scrapes from now on: not registered
  }
  const bool clean = plugin_ == nullptr || plugin_->Stop();
  if (ticker_.joinable()) ticker_.join();
  if (publisher_) publisher_->Stop();
  return clean;
}

void DraMode::OnNodeChanged() {
  if (stopping_) return;
  std::shared_ptr<const NodeSnapshot> snapshot = state_.Current();
  if (Status st = preparer_->WriteWholeCardSpec(snapshot->inventory); !st.ok()) {
    LOG(ERROR) << "DRA whole-card CDI spec: " << st.ToString();
  }
  NodeInventory offered = hdra::OfferableInventory(snapshot->inventory, backend_.host_root(),
                                                   preparer_->Prepared(), nullptr);
  if (DaemonMetrics* m = DaemonMetrics::Active()) m->OnDraPool(offered);
  publisher_->SetInventory(std::move(offered));
  RefreshHealth();
}

void DraMode::RefreshHealth() {
  MutexLock refresh(refresh_mu_);
  std::shared_ptr<const NodeSnapshot> snapshot = state_.Current();
  std::map<std::string, dra::DeviceHealth> by_device;
  for (const hdra::PreparedClaim& claim : preparer_->Prepared()) {
    for (const hdra::PreparedDevice& d : claim.devices) {
      dra::DeviceHealth h;
      h.pool_name = d.pool;
      h.device_name = d.device;
      const NodeInventory& inv = snapshot->inventory;
      const Card* card = inv.FindCardByBdf(d.card_bdf);
      // A pre-split vHCU or a MIG instance is a device of its own: gone
      // (destroyed under its claim, a driver reset), it is unhealthy too.
      Lookup<Vhcu> vhcu = inv.LookupVhcu(d.vhcu_id);
      const bool vhcu_gone =
          d.kind == hdra::PreparedKind::kVhcu &&
          (vhcu.certainty() == Certainty::kAbsent ||
           (vhcu.certainty() == Certainty::kFound && vhcu.value().card_bdf != d.card_bdf));
      const bool mig_gone =
          d.kind == hdra::PreparedKind::kMig &&
          std::none_of(inv.mig_instances.begin(), inv.mig_instances.end(),
                       [&](const MigInstance& mig) { return mig.uuid == d.mig_uuid; });
      Lookup<Card> card_now = inv.LookupCardByBdf(d.card_bdf);
      if (card_now.certainty() == Certainty::kUnknown) {
        h.health = dra::DeviceHealthStatus::kUnknown;
        h.message = card_now.why();
      } else if (card == nullptr) {
        h.health = dra::DeviceHealthStatus::kUnhealthy;
        h.message = "card " + d.card_bdf + " is no longer on the node";
      } else if (vhcu_gone || mig_gone) {
        h.health = dra::DeviceHealthStatus::kUnhealthy;
        h.message = d.device + " is no longer on the node";
      } else if (card->health == Health::kHealthy) {
        h.health = dra::DeviceHealthStatus::kHealthy;
      } else {
        h.health = dra::DeviceHealthStatus::kUnhealthy;
        h.message = "card " + d.card_bdf + " is " + std::string(HealthName(card->health));
      }
      by_device.emplace(d.pool + "/" + d.device, std::move(h));
    }
  }
  std::vector<dra::DeviceHealth> list;
  for (auto& [key, h] : by_device) list.push_back(std::move(h));
  bool changed;
  {
    MutexLock lock(mu_);
    changed = list != health_;
    if (changed) health_ = std::move(list);
  }
  if (changed && plugin_ != nullptr) plugin_->NotifyHealthChanged();
}

std::vector<dra::DeviceHealth> DraMode::HealthSnapshot() {
  const int64_t now =
      std::chrono::duration_cast<std::chrono::seconds>(Clock::Real().WallNow().time_since_epoch())
          .count();
  MutexLock lock(mu_);
  std::vector<dra::DeviceHealth> out = health_;
  for (dra::DeviceHealth& h : out) h.last_updated_unix_seconds = now;
  return out;
}

std::optional<Clock::TimePoint> DraMode::GetDeadline(const dra::CallContext& call) {
  if (call.deadline == std::chrono::system_clock::time_point::max()) return std::nullopt;
  const auto left = std::chrono::duration_cast<Clock::TimePoint::duration>(
      call.deadline - std::chrono::system_clock::now());
  // Keep a fifth of what is left (at most kAnswerMargin) for the answer to
  // reach kubelet: a per-claim error it can retry, not its own timeout.
  const auto margin = std::min<Clock::TimePoint::duration>(left / 5, kAnswerMargin);
  return Clock::Real().Now() + left -
         std::max<Clock::TimePoint::duration>(margin, Clock::TimePoint::duration(0));
}

StatusOr<std::map<std::string, dra::PrepareResult>> DraMode::Prepare(
    const std::vector<dra::Claim>& claims, const dra::CallContext& call) {
  std::map<std::string, dra::PrepareResult> out;
  for (const dra::Claim& c : claims) {
    if (call.cancelled() || stopping_) {
      return Status(StatusCode::kCancelled, "the call was cancelled");
    }
    const auto start = std::chrono::steady_clock::now();
    StatusOr<hdra::PrepareAnswer> answer =
        preparer_->Prepare({c.namespace_name, c.name, c.uid}, GetDeadline(call));
    if (DaemonMetrics* m = DaemonMetrics::Active()) {
      m->ObservePrepare(answer.ok() && answer->error.empty(),
                        std::chrono::steady_clock::now() - start);
    }
    if (!answer.ok()) {
      LOG(WARNING) << "NodePrepareResources " << c.namespace_name << "/" << c.name << " (" << c.uid
                   << "): " << answer.status().ToString();
      return answer.status().WithContext("ResourceClaim " + c.namespace_name + "/" + c.name);
    }
    dra::PrepareResult& r = out[c.uid];
    r.error = std::move(answer->error);
    if (!r.error.empty()) {
      LOG(WARNING) << "NodePrepareResources " << c.namespace_name << "/" << c.name
                   << ": will be retried: " << r.error;
    }
    for (hdra::PreparedDeviceAnswer& d : answer->devices) {
      dra::PreparedDevice p;
      p.request_names = std::move(d.request_names);
      p.pool_name = std::move(d.pool_name);
      p.device_name = std::move(d.device_name);
      p.cdi_device_ids = std::move(d.cdi_device_ids);
      p.share_id = std::move(d.share_id);
      r.devices.push_back(std::move(p));
    }
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
    Status st = preparer_->Unprepare({c.namespace_name, c.name, c.uid});
    if (DaemonMetrics* m = DaemonMetrics::Active()) {
      m->ObserveUnprepare(st.ok(), std::chrono::steady_clock::now() - start);
    }
    if (!st.ok()) {
      LOG(WARNING) << "NodeUnprepareResources " << c.namespace_name << "/" << c.name << " ("
                   << c.uid << "): will be retried: " << st.ToString();
    }
    out[c.uid] = st.ok() ? "" : st.message();
  }
  {
    MutexLock lock(mu_);
    trim_requested_ = true;
  }
  cv_.notify_all();
  return out;
}

void DraMode::TickLoop() {
  Clock& clock = Clock::Real();
  Clock::TimePoint next_tick = clock.Now() + kTickPeriod;
  for (;;) {
    bool trim = false;
    {
      MutexLock lock(mu_);
      WaitUntil(clock, mu_, cv_, next_tick,
                [this]() HCUDP_REQUIRES(mu_) { return tick_stop_ || trim_requested_; });
      if (tick_stop_) return;
      trim = std::exchange(trim_requested_, false);
    }
    // An Unprepare ended a claim's work (its GET, the vHCU's destroy, the
    // spec and checkpoint rewrites): what it allocated is free again but
    // scattered between live chunks, and glibc gives only a heap's top back
    // to the kernel by itself. malloc_trim returns every whole free page of
    // every arena; here, not on the call's thread, as it takes ~0.7 ms
    // (BENCHMARKS.md, "Private memory, re-measured").
    if (trim) malloc_trim(0);
    if (clock.Now() < next_tick) continue;
    next_tick = clock.Now() + kTickPeriod;
    // The vHCU destroys a failed Unprepare queued: nothing else drives that
    // queue in DRA mode (the HAMi agent's sweeper does in HAMi mode).
    vhcus_->Tick();
    hdra::RecoverResult r = preparer_->Tick();
    if (r.unprepared > 0 || r.rolled_back > 0) {
      LOG(INFO) << "DRA: " << r.unprepared << " deleted claim(s) unprepared, " << r.pending
                << " to check again";
    }
  }
}

}  // namespace hcudp::daemon
