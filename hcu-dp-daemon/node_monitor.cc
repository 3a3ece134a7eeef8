#include "node_monitor.h"

#include <glog/logging.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "hcudp/cdi.h"
#include "hcudp_internal/clock_wait.h"

namespace hcudp::daemon {
namespace {

// The longest single wait: a "never" deadline still wakes now and then.
constexpr std::chrono::hours kLongestWait{1};

NamingParams ParamsOf(const Options& o) {
  NamingParams p;
  p.strategy = o.strategy;
  p.policy = o.naming_policy;
  p.device_split_count = o.device_split_count;
  p.resource_multiple = o.resource_multiple;
  return p;
}

bool SameDevices(const Resource& a, const Resource& b) {
  if (a.devices.size() != b.devices.size()) return false;
  for (size_t i = 0; i < a.devices.size(); ++i) {
    const auto& x = a.devices[i];
    const auto& y = b.devices[i];
    if (x.id != y.id || x.health != y.health || x.numa_node != y.numa_node || x.card != y.card ||
        x.vhcu_id != y.vhcu_id || x.mig_index != y.mig_index) {
      return false;
    }
  }
  return true;
}

// What Allocate and the CDI spec take from the inventory beyond the device
// lists: a card's /dev/dri nodes (udev may make them after the first look,
// a driver reload may renumber them), /dev/kfd and /dev/mkfd, conf paths.
bool AllocationInputsDiffer(const NodeInventory& a, const NodeInventory& b) {
  if (a.has_kfd != b.has_kfd || a.has_mkfd != b.has_mkfd || a.cards.size() != b.cards.size() ||
      a.vhcus.size() != b.vhcus.size() || a.mig_instances.size() != b.mig_instances.size()) {
    return true;
  }
  for (size_t i = 0; i < a.cards.size(); ++i) {
    if (a.cards[i].index != b.cards[i].index || a.cards[i].dri_nodes != b.cards[i].dri_nodes) {
      return true;
    }
  }
  for (size_t i = 0; i < a.vhcus.size(); ++i) {
    if (a.vhcus[i].conf_path != b.vhcus[i].conf_path) return true;
  }
  for (size_t i = 0; i < a.mig_instances.size(); ++i) {
    if (a.mig_instances[i].conf_path != b.mig_instances[i].conf_path) return true;
  }
  return false;
}

}  // namespace

bool DraInventoryDiffers(const NodeInventory& a, const NodeInventory& b) {
  if (a.cards.size() != b.cards.size() || a.vhcus.size() != b.vhcus.size() ||
      a.mig_instances.size() != b.mig_instances.size() || a.mig_enabled != b.mig_enabled ||
      a.vhcu_gaps.size() != b.vhcu_gaps.size() || a.driver_version != b.driver_version) {
    return true;
  }
  for (size_t i = 0; i < a.cards.size(); ++i) {
    const Card& x = a.cards[i];
    const Card& y = b.cards[i];
    if (x.index != y.index || x.bdf != y.bdf || x.health != y.health ||
        x.numa_node != y.numa_node || x.compute_units != y.compute_units ||
        x.memory_bytes != y.memory_bytes || x.model != y.model || x.serial != y.serial) {
      return true;
    }
  }
  for (size_t i = 0; i < a.vhcus.size(); ++i) {
    const Vhcu& x = a.vhcus[i];
    const Vhcu& y = b.vhcus[i];
    if (x.id != y.id || x.card != y.card || x.compute_units != y.compute_units ||
        x.memory_mib != y.memory_mib) {
      return true;
    }
  }
  for (size_t i = 0; i < a.mig_instances.size(); ++i) {
    const MigInstance& x = a.mig_instances[i];
    const MigInstance& y = b.mig_instances[i];
    if (x.card != y.card || x.gpu_instance != y.gpu_instance ||
        x.compute_instance != y.compute_instance || x.profile != y.profile) {
      return true;
    }
  }
  for (size_t i = 0; i < a.vhcu_gaps.size(); ++i) {
    if (a.vhcu_gaps[i].vhcu_id != b.vhcu_gaps[i].vhcu_id ||
        a.vhcu_gaps[i].card != b.vhcu_gaps[i].card) {
      return true;
    }
  }
  return false;
}

bool ResourcesDiffer(const std::vector<Resource>& a, const std::vector<Resource>& b) {
  if (a.size() != b.size()) return true;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].name != b[i].name || !SameDevices(a[i], b[i])) return true;
  }
  return false;
}

NodeMonitor::NodeMonitor(const Options& options, Backend& backend, NodeState& state,
                         const AllocationBuilder& builder, Clock& clock)
    : options_(options),
      backend_(backend),
      state_(state),
      builder_(builder),
      vhcus_(/*warn=*/options.strategy != Strategy::kHcu && options.strategy != Strategy::kMig),
      clock_(clock) {}

NodeMonitor::~NodeMonitor() { Stop(); }

Status NodeMonitor::Start() {
  // Watch before the first look, so a change made during it is not missed.
  watcher_ = std::make_unique<PathWatcher>(backend_.WatchPaths());
  Status watching = watcher_->Open();
  if (!watching.ok()) {
    LOG(WARNING) << watching.ToString() << "; node changes follow --pulse only";
  }
  // The runtime's card events (RSMI) wake the monitor like a path change:
  // a look now and a confirming one a second later. The poll stays. Also
  // subscribed before the first look: the driver queues an event only on
  // the event files open when it happens, so a card that failed between the
  // look and a later subscription would be reported to nobody.
  Status events = backend_.StartEvents([this](const BackendEvent&) {
    {
      MutexLock lock(mu_);
      changed_ = true;
    }
    cv_.notify_all();
  });
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
    if (!watcher_->ReadEvents()) return;
    {
      MutexLock lock(mu_);
      changed_ = true;
    }
    cv_.notify_all();
  });
  Status polling = poller_->Start();
  if (!polling.ok()) LOG(WARNING) << polling.ToString() << "; node changes follow --pulse only";
  thread_ = std::thread([this] { Loop(); });
  return OkStatus();
}

bool NodeMonitor::Stop() {
  if (!thread_.joinable()) return true;
  // Real time: a bound on a thread's exit, not a schedule of the monitor.
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
      LOG(WARNING) << "the node monitor is still inside a look at the node after "
                   << kStopBudget.count() << " ms; not waiting for it";
      thread_.detach();
      return false;
    }
  }
  thread_.join();
  poller_->Stop();
  return true;
}

bool NodeMonitor::WaitForChange(Clock::TimePoint deadline) {
  deadline = std::min(deadline, clock_.Now() + kLongestWait);
  MutexLock lock(mu_);
  WaitUntil(clock_, mu_, cv_, deadline,
            [this]() HCUDP_REQUIRES(mu_) { return changed_ || stopping_; });
  const bool changed = changed_;
  changed_ = false;
  return changed;
}

void NodeMonitor::Loop() {
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

Clock::TimePoint NodeMonitor::CheckRestart(Clock::TimePoint now) {
  if (restart_requested_) return Clock::TimePoint::max();
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
  restart_requested_ = true;
  if (on_restart_) on_restart_();
  return Clock::TimePoint::max();
}

Status NodeMonitor::WriteSpec(std::string json) {
  Status st = WriteCdiSpec(options_.cdi_spec_dir, json);
  if (st.ok()) {
    cdi_pending_.clear();
  } else {
    cdi_pending_ = std::move(json);
  }
  return st;
}

Clock::TimePoint NodeMonitor::RetryCdiSpec(Clock::TimePoint now) {
  if (cdi_pending_.empty()) return Clock::TimePoint::max();
  if (!WriteSpec(cdi_pending_).ok()) return now + kCdiRetry;
  LOG(INFO) << "CDI spec written to " << options_.cdi_spec_dir << " after an earlier failure";
  return Clock::TimePoint::max();
}

Status NodeMonitor::Refresh(bool initial) {
  // The one health query of this look (hy-smi on a real node), first, so
  // that Discover's cards carry its verdicts; Discover never runs it.
  auto health = backend_.QueryHealth();
  auto discovered = backend_.Discover();
  // A backend that needs a restart answers nothing trustworthy: its cards
  // may all fail. Serve the last good state until the daemon exits.
  if (Status restart = backend_.RestartRequired(); !restart.ok() && discovered.ok()) {
    discovered = restart;
  }
  NodeInventory inventory;
  if (discovered.ok()) {
    inventory = std::move(discovered).value();
    // Unreadable vHCU state keeps its last good value.
    VhcuKeeper::Apply(last_inventory_.vhcus, &inventory);
  } else if (initial) {
    return discovered.status().WithContext("discover the node");
  } else {
    LOG(WARNING) << "discovery failed, keeping the last known devices: "
                 << discovered.status().ToString();
    inventory = last_inventory_;
  }

  std::set<std::string> present;
  for (const Card& c : inventory.cards) {
    present.insert(c.bdf);
    tracker_.Seed(c.bdf, c.health);
  }
  tracker_.Retain(present);
  if (health.ok()) {
    for (const CardHealthReport& r : *health) {
      if (!present.count(r.bdf)) continue;
      Health before = tracker_.Reported(r.bdf, r.health);
      if (tracker_.Record(r.bdf, r.health)) {
        LOG(WARNING) << "card " << r.bdf << " is now " << HealthName(r.health) << " (was "
                     << HealthName(before) << ")" << (r.reason.empty() ? "" : ": " + r.reason);
        const Card* card = inventory.FindCardByBdf(r.bdf);
        if (on_health_ && card != nullptr) on_health_(*card, r.health, r.reason);
      }
    }
  } else {
    LOG(WARNING) << "health query failed, keeping previous health: " << health.status().ToString();
  }
  for (Card& c : inventory.cards) c.health = tracker_.Reported(c.bdf, c.health);

  auto built = BuildResources(inventory, ParamsOf(options_));
  if (!built.ok()) {
    if (initial) return built.status();
    LOG(WARNING) << "resources: " << built.status().ToString();
    return OkStatus();
  }
  std::vector<Resource> resources = std::move(built).value();
  // vHCUs, MIG instances and hcunum IDs follow their card; hcucores ID i
  // (no card of its own, as the vendor lists them) follows card i / per-card
  // share, so every ID derived from a failed card turns Unhealthy (KEP-4680).
  for (Resource& r : resources) {
    const size_t cards = inventory.cards.size();
    const size_t share = cards == 0 ? 0 : r.devices.size() / cards;
    for (size_t i = 0; i < r.devices.size(); ++i) {
      ResourceDevice& d = r.devices[i];
      if (const Card* c = inventory.FindCard(d.card)) {
        d.health = c->health;
      } else if (r.kind == DeviceKind::kHamiCores && share > 0 && i / share < cards) {
        d.health = inventory.cards[i / share].health;
      }
    }
  }
  // Keep every resource ever served, so a vanished one serves an empty list.
  for (const Resource& r : resources) {
    if (std::find(known_resources_.begin(), known_resources_.end(), r.name) ==
        known_resources_.end()) {
      known_resources_.push_back(r.name);
    }
  }
  std::vector<Resource> ordered;
  for (const std::string& name : known_resources_) {
    auto it = std::find_if(resources.begin(), resources.end(),
                           [&](const Resource& r) { return r.name == name; });
    if (it != resources.end()) {
      ordered.push_back(*it);
    } else {
      const Resource* old = state_.Current()->FindResource(name);
      Resource empty;
      empty.name = name;
      if (old != nullptr) {
        empty.last_name = old->last_name;
        empty.kind = old->kind;
      }
      ordered.push_back(empty);
    }
  }

  auto current = state_.Current();
  // DRA mode has no resources: what it publishes (slices, the whole-card
  // spec, health) follows the inventory itself.
  const bool dra = options_.strategy == Strategy::kDra;
  bool changed = initial || ResourcesDiffer(current->resources, ordered) ||
                 AllocationInputsDiffer(current->inventory, inventory) ||
                 (dra && DraInventoryDiffers(current->inventory, inventory));
  last_inventory_ = inventory;
  if (on_inventory_) on_inventory_(inventory);
  // In DRA mode the claim preparer writes the CDI specs (dra.hygon.com kinds).
  // Built at every look: a device left out for a conf file that was not
  // ready (an empty vdevN.conf being written) joins the spec once the file
  // is, though no device list changed.
  if (!dra && options_.device_list_strategy != DeviceListStrategy::kDevices) {
    CdiSpec spec = BuildCdiSpec(inventory, ordered, builder_);
    if (changed || spec.json != cdi_built_) {
      for (const auto& s : spec.skipped) LOG(WARNING) << "CDI spec leaves out " << s;
      cdi_built_ = spec.json;
      Status st = WriteSpec(std::move(spec.json));
      if (!st.ok()) {
        if (initial) return st.WithContext("--cdi-spec-dir");
        LOG(ERROR) << "CDI spec: " << st.ToString() << "; retrying every " << kCdiRetry.count()
                   << " ms";
      }
    }
  }
  if (!changed) return OkStatus();
  for (const Resource& r : ordered) {
    size_t healthy = std::count_if(r.devices.begin(), r.devices.end(),
                                   [](const auto& d) { return d.health == Health::kHealthy; });
    VLOG(2) << r.name << ": " << r.devices.size() << " devices, " << healthy << " healthy";
  }
  state_.Publish(std::move(inventory), std::move(ordered));
  return OkStatus();
}

}  // namespace hcudp::daemon
