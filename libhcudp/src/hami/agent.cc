// HamiAgent: construction, the background thread and pod-cache events.
#include <glog/logging.h>

#include "hcudp/hami/pending_pod.h"
#include "hcudp/hami_agent.h"

namespace hcudp {
namespace {

constexpr std::chrono::milliseconds kTickPeriod{1000};

bool Terminal(const Pod& pod) { return pod.phase == "Succeeded" || pod.phase == "Failed"; }

VhcuManagerOptions ManagerOptions(const HamiAgentOptions& o) {
  VhcuManagerOptions m;
  m.host_root = o.host_root;
  m.now = o.now;
  m.crash_after = o.crash_after;
  return m;
}

}  // namespace

HamiAgent::HamiAgent(Backend* backend, KubeClient* client, HamiAgentOptions options)
    : backend_(backend),
      client_(client),
      options_(std::move(options)),
      vhcus_(backend, ManagerOptions(options_)) {}

HamiAgent::~HamiAgent() { Stop(); }

std::chrono::system_clock::time_point HamiAgent::Now() const {
  return options_.now ? options_.now() : std::chrono::system_clock::now();
}

Status HamiAgent::Start() {
  if (options_.node_name.empty()) {
    return InvalidArgumentError("HAMi agent: node name is required (--node-name)");
  }
  if (options_.host_root.empty()) return InvalidArgumentError("HAMi agent: host_root is required");
  if (options_.split_count < 1) {
    return InvalidArgumentError("HAMi agent: split count must be >= 1");
  }
  if (started_) return OkStatus();
  started_ = true;
  PodCacheOptions cache;
  cache.field_selector = "spec.nodeName=" + options_.node_name;
  cache.on_event = [this](const PodEvent& e) { OnPodEvent(e); };
  pods_ = std::make_unique<PodCache>(client_, std::move(cache));
  pods_->Start();
  thread_ = std::thread([this] { Loop(); });
  {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, options_.start_wait, [this] { return stop_ || settled(); });
    if (stop_) return Status(StatusCode::kCancelled, "HAMi agent stopped while starting");
  }
  if (!ready_ && options_.start_wait.count() > 0) {
    LOG(WARNING) << "HAMi: pod cache of node " << options_.node_name
                 << " not synced yet; Allocate is refused until it is";
  }
  return OkStatus();
}

void HamiAgent::Stop() {
  stopping_ = true;  // aborts API calls in flight
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (pods_) pods_->Stop();
}

void HamiAgent::RequestRegister() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    register_requested_ = true;
  }
  cv_.notify_all();
}

void HamiAgent::OnPodEvent(const PodEvent& event) {
  bool reclaim = event.type == PodEvent::Type::kDeleted;
  if (event.type == PodEvent::Type::kUpdated && event.new_pod && Terminal(*event.new_pod) &&
      !(event.old_pod && Terminal(*event.old_pod))) {
    reclaim = true;
  }
  if (!reclaim) return;
  const auto& gone = event.new_pod ? event.new_pod : event.old_pod;
  if (gone) {
    vhcus_.ForgetFresh(gone->metadata.uid);
    std::lock_guard<std::mutex> lock(pods_mu_);
    failed_uids_.erase(gone->metadata.uid);
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    sweep_requested_ = true;
  }
  cv_.notify_all();
}

std::set<std::string> HamiAgent::LivePodUids() const {
  std::set<std::string> live;
  for (const Pod& pod : pods_->List()) {
    if (!Terminal(pod)) live.insert(pod.metadata.uid);
  }
  return live;
}

bool HamiAgent::IsLive(const std::string& uid, const std::set<std::string>& live) const {
  if (!live.count(uid)) return false;
  std::lock_guard<std::mutex> lock(pods_mu_);
  return failed_uids_.count(uid) == 0;
}

CallOptions HamiAgent::BackgroundCall() const {
  return CallBy(std::chrono::steady_clock::now() + options_.background_call_deadline);
}

CallOptions HamiAgent::CallBy(std::chrono::steady_clock::time_point deadline) const {
  CallOptions call;
  call.deadline = deadline;
  call.cancel = &stopping_;
  return call;
}

bool HamiAgent::WaitForStop(std::chrono::milliseconds delay) {
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_for(lock, delay, [this] { return stop_; });
}

bool HamiAgent::IsAllocating(const std::string& uid) const {
  {
    std::lock_guard<std::mutex> lock(pods_mu_);
    if (failed_uids_.count(uid)) return false;
  }
  for (const Pod& pod : pods_->List()) {
    if (pod.metadata.uid == uid && !Terminal(pod) &&
        hami::IsAllocatingOn(pod.metadata.annotations, options_.node_name)) {
      return true;
    }
  }
  return false;
}

bool HamiAgent::SyncAndRecover() {
  if (!pods_->HasSynced()) return false;
  // First: a lock left by an earlier process fails its pod, so that the
  // journal replay below does not adopt a vHCU for it.
  ReleaseStaleLock(/*first=*/!inherited_known_);
  auto recovered = vhcus_.Recover([this](const std::string& uid) { return IsAllocating(uid); });
  if (!recovered.ok()) {
    LOG(ERROR) << "HAMi: vHCU journal recovery failed: " << recovered.status().ToString();
    return false;
  }
  LOG(INFO) << "HAMi: recovered: " << recovered->destroyed << " vHCUs destroyed, "
            << recovered->adopted << " adopted, " << recovered->left_alone << " left alone";
  ready_ = true;
  return true;
}

void HamiAgent::Loop() {
  auto next_recover_try = std::chrono::steady_clock::now();
  while (true) {
    bool force_register = false;
    bool sweep = false;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait_for(lock, ready_ ? kTickPeriod : std::chrono::milliseconds(50),
                   [this] { return stop_ || register_requested_ || sweep_requested_; });
      if (stop_) return;
      force_register = register_requested_;
      sweep = sweep_requested_;
      register_requested_ = false;
      sweep_requested_ = false;
    }
    auto now = std::chrono::steady_clock::now();
    if (!ready_) {
      if (now >= next_recover_try && !SyncAndRecover()) {
        next_recover_try = now + (pods_->HasSynced() ? std::chrono::milliseconds(5000)
                                                     : std::chrono::milliseconds(50));
      }
      if (ready_) {
        sweep = true;
        force_register = true;
      }
    }
    if (stopping_) return;
    if (ready_ && (sweep || now >= next_sweep_)) {
      Sweep();
      next_sweep_ = std::chrono::steady_clock::now() + options_.sweep_interval;
      force_register = true;
    }
    if (ready_) {
      VhcuSweepResult ticked = vhcus_.Tick();
      if (ticked.destroyed > 0) force_register = true;
    }
    const bool was_settled = settled();
    RegisterIfDue(force_register);
    if (!was_settled && settled()) cv_.notify_all();  // Start() waits for it
  }
}

void HamiAgent::Sweep() {
  ReleaseStaleLock(/*first=*/false);
  MarkUnmarkedFailures();
  const std::set<std::string> live = LivePodUids();
  auto result =
      vhcus_.Reconcile([this, &live](const std::string& uid) { return IsLive(uid, live); });
  if (!result.ok()) {
    LOG(WARNING) << "HAMi: reconcile failed: " << result.status().ToString();
    return;
  }
  if (result->destroyed > 0 || result->marks_removed > 0) {
    LOG(INFO) << "HAMi: reclaimed " << result->destroyed << " vHCUs, " << result->marks_removed
              << " mark files";
  }
  if (options_.evict_unaccounted_pods) {
    auto marks = ListMarkFiles(options_.host_root, nullptr);
    if (marks.ok()) EvictUnaccountedPods(*marks);
  }
}

}  // namespace hcudp
