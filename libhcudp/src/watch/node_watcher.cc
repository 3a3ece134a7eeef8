#include "hcudp/node_watcher.h"

#include <algorithm>

#include "hcudp/cdi.h"
#include "hcudp_internal/clock_wait.h"
#include "hcudp_internal/leave_behind.h"
#include "hcudp_internal/log.h"
#include "watch/node_watcher_impl.h"

namespace hcudp {
namespace {

// The longest single wait: a "never" deadline still wakes now and then.
constexpr std::chrono::hours kLongestWait{1};

}  // namespace

NodeWatcher::NodeWatcher(const Options& options, Backend* backend, NodeState* state, Clock* clock)
    : impl_(std::make_unique<Impl>(options, *backend, *state,
                                   clock != nullptr ? *clock : Clock::Real())) {}

NodeWatcher::~NodeWatcher() { Stop(); }

Status NodeWatcher::Start() {
  if (!impl_) return FailedPreconditionError("the node watcher was stopped");
  return impl_->Start();
}

bool NodeWatcher::Stop() {
  if (!impl_) return false;  // an earlier Stop left its thread running
  if (impl_->Stop()) return true;
  LeaveBehind(impl_);  // the thread still uses it
  return false;
}

void NodeWatcher::set_restart_handler(std::function<void()> handler) {
  impl_->on_restart = std::move(handler);
}

void NodeWatcher::set_health_listener(HealthListener listener) {
  impl_->on_health = std::move(listener);
}

void NodeWatcher::set_inventory_listener(InventoryListener listener) {
  impl_->on_inventory = std::move(listener);
}

bool NodeWatcher::restart_requested() const { return impl_ && impl_->restart_requested; }

namespace {

// The CDI spec's view of the flags: node files under host-root, the vendor
// runtime, the by-path hook and the opt-in debug access.
AllocationBuilderOptions CdiBuilderOptions(const Options& options, const std::string& host_root) {
  AllocationBuilderOptions o(host_root, options.hyhal_path);
  o.cdi_hook_path = options.cdi_hook_path;
  o.cdi_debug_access = options.cdi_debug_access;
  return o;
}

}  // namespace

NodeWatcher::Impl::Impl(const Options& options, Backend& backend, NodeState& state, Clock& clock)
    : options_(options),
      backend_(backend),
      state_(state),
      builder_(CdiBuilderOptions(options, backend.host_root())),
      vhcus_(/*warn=*/options.strategy != Strategy::kHcu && options.strategy != Strategy::kMig),
      clock_(clock) {}

NodeWatcher::Impl::~Impl() { Stop(); }

Status NodeWatcher::Impl::Start() {
  // Watch before the first look, so a change made during it is not missed.
  watcher_ = std::make_unique<PathWatcher>(backend_.WatchPaths());
  Status watching = watcher_->Open();
  if (!watching.ok()) {
    LOG(WARNING) << watching.ToString() << "; node changes follow --pulse only";
  }
  // The runtime's card events (RSMI) wake the watcher like a path change:
  // a look now and a confirming one a second later. The poll stays. Also
  // subscribed before the first look: the driver queues an event only on
  // the event files open when it happens, so a card that failed between the
  // look and a later subscription would be reported to nobody.
  Status events = backend_.StartEvents([this](const BackendEvent&) { NoteChange(); });
  if (events.ok()) {
    LOG(INFO) << "card health events: on (RSMI event notification)";
  } else {
    LOG(INFO) << "card health events: off (" << events.message() << "); health follows --pulse";
  }
  if (Status st = Refresh(/*initial=*/true); !st.ok()) {
    backend_.StopEvents();
    return st;
  }
  vhcus_.Log(last_inventory_.vhcu_gaps, clock_.Now());
  poller_ = std::make_unique<FdPoller>(watcher_->fd(), [this] {
    if (watcher_->ReadEvents()) NoteChange();
  });
  Status polling = poller_->Start();
  if (!polling.ok()) LOG(WARNING) << polling.ToString() << "; node changes follow --pulse only";
  thread_ = std::thread([this] { Loop(); });
  return OkStatus();
}

bool NodeWatcher::Impl::Stop() {
  if (!thread_.joinable()) return true;
  // Real time: a bound on a thread's exit, not a schedule of the watcher.
  Clock& real = Clock::Real();
  const Clock::TimePoint deadline = real.Now() + kStopBudget;
  {
    MutexLock lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  backend_.StopEvents();  // bounded: Backend::kEventStopBound
  {
    MutexLock lock(mu_);
    if (!WaitUntil(real, mu_, cv_, deadline, [this]() HCUDP_REQUIRES(mu_) { return loop_done_; })) {
      LOG(WARNING) << "the node watcher is still inside a look at the node after "
                   << kStopBudget.count() << " ms; not waiting for it";
      thread_.detach();
      return false;
    }
  }
  thread_.join();
  poller_->Stop();
  return true;
}

void NodeWatcher::Impl::NoteChange() {
  {
    MutexLock lock(mu_);
    changed_ = true;
  }
  cv_.notify_all();
}

bool NodeWatcher::Impl::WaitForChange(Clock::TimePoint deadline) {
  deadline = std::min(deadline, clock_.Now() + kLongestWait);
  MutexLock lock(mu_);
  WaitUntil(clock_, mu_, cv_, deadline,
            [this]() HCUDP_REQUIRES(mu_) { return changed_ || stopping_; });
  const bool changed = changed_;
  changed_ = false;
  return changed;
}

void NodeWatcher::Impl::Loop() {
  const bool periodic = options_.pulse_seconds > 0;
  const auto pulse = std::chrono::seconds(std::max(options_.pulse_seconds, 1));
  Clock::TimePoint next_pulse = clock_.Now() + pulse;
  Clock::TimePoint confirm_at = Clock::TimePoint::max();
  Clock::TimePoint restart_check_at = CheckRestart(clock_.Now());
  Clock::TimePoint cdi_retry_at = RetryCdiSpec(clock_.Now());
  for (;;) {
    Clock::TimePoint deadline = std::min({confirm_at, restart_check_at, cdi_retry_at});
    if (periodic) deadline = std::min(deadline, next_pulse);
    const bool event = WaitForChange(deadline);
    {
      MutexLock lock(mu_);
      if (stopping_) break;
    }
    const auto now = clock_.Now();
    // Whatever else is due: a pulse every second must not keep postponing it.
    if (now >= cdi_retry_at) cdi_retry_at = RetryCdiSpec(now);
    bool due_pulse = periodic && now >= next_pulse;
    bool due_confirm = now >= confirm_at;
    if (!event && !due_pulse && !due_confirm) {
      if (now >= restart_check_at) restart_check_at = CheckRestart(now);
      continue;
    }
    if (event) VLOG(2) << "node files changed; re-discovering";
    Status st = Refresh(/*initial=*/false);
    if (!st.ok()) LOG(WARNING) << "refresh: " << st.ToString();
    // After the publish, so a test that sees the log line sees the list too.
    vhcus_.Log(last_inventory_.vhcu_gaps, clock_.Now());
    restart_check_at = CheckRestart(clock_.Now());
    if (cdi_pending_.empty()) {
      cdi_retry_at = Clock::TimePoint::max();
    } else if (cdi_retry_at == Clock::TimePoint::max()) {
      cdi_retry_at = clock_.Now() + kCdiRetry;  // this look's write failed
    }
    if (due_pulse) next_pulse = now + pulse;
    // An event or an unconfirmed disagreement gets one re-read a second later.
    if (event || tracker_.AnyPending()) {
      confirm_at = clock_.Now() + kConfirmDelay;
    } else {
      confirm_at = Clock::TimePoint::max();
    }
  }
  {
    MutexLock lock(mu_);
    loop_done_ = true;
  }
  cv_.notify_all();
}

Clock::TimePoint NodeWatcher::Impl::CheckRestart(Clock::TimePoint now) {
  if (restart_requested) return Clock::TimePoint::max();
  Status restart = backend_.RestartRequired();
  if (restart.ok()) {
    if (restart_since_ != Clock::TimePoint::max()) LOG(WARNING) << "restart no longer required";
    restart_since_ = Clock::TimePoint::max();
    // Checked even when idle: a vHCU operation on a gRPC thread may be the
    // call that meets the condition. The check makes no vendor call.
    return now + kRestartCheck;
  }
  if (restart_since_ == Clock::TimePoint::max()) {
    restart_since_ = now;
    LOG(WARNING) << "the node backend needs a restart of the daemon: " << restart.message()
                 << "; serving the last good state, exiting in "
                 << std::chrono::seconds(kRestartGrace).count() << " s if it persists";
  }
  if (now - restart_since_ < kRestartGrace) return now + kRestartCheck;
  LOG(ERROR) << "exiting (code 1) so that the DaemonSet restarts the plugin: " << restart.message();
  restart_requested = true;
  if (on_restart) on_restart();
  return Clock::TimePoint::max();
}

Status NodeWatcher::Impl::WriteSpec(std::string json) {
  Status st = WriteCdiSpec(options_.cdi_spec_dir, json);
  if (st.ok()) {
    cdi_pending_.clear();
  } else {
    cdi_pending_ = std::move(json);
  }
  return st;
}

Clock::TimePoint NodeWatcher::Impl::RetryCdiSpec(Clock::TimePoint now) {
  if (cdi_pending_.empty()) return Clock::TimePoint::max();
  if (!WriteSpec(cdi_pending_).ok()) return now + kCdiRetry;
  LOG(INFO) << "CDI spec written to " << options_.cdi_spec_dir << " after an earlier failure";
  return Clock::TimePoint::max();
}

}  // namespace hcudp
