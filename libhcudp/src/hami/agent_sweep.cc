// Sweeper: the first sync, Reconcile and Tick of the HAMi agent (sweeper.h).

#include <algorithm>

#include "hami/sweeper.h"
#include "hcudp_internal/log.h"

namespace hcudp::internal {
namespace {

constexpr std::chrono::milliseconds kTickPeriod{1000};
// How often the pod cache is looked at until it has synced.
constexpr std::chrono::milliseconds kSyncPoll{50};
// The next try after a failed Recover.
constexpr std::chrono::milliseconds kRecoverRetry{5000};

}  // namespace

Sweeper::Sweeper(AgentContext& ctx, std::function<void()> on_ready, std::function<void()> on_change)
    : ctx_(ctx),
      on_ready_(std::move(on_ready)),
      on_change_(std::move(on_change)),
      wake_(ctx.clock),
      stale_lock_(ctx),
      evictor_(ctx) {}

Sweeper::~Sweeper() { Stop(); }

void Sweeper::Start() {
  if (!thread_.joinable()) thread_ = std::thread([this] { Run(); });
}

void Sweeper::Stop() {
  wake_.Stop();
  if (thread_.joinable()) thread_.join();
}

bool Sweeper::SyncAndRecover() {
  if (!ctx_.pods->HasSynced()) return false;
  // First: a lock left by an earlier process fails its pod, so that the
  // journal replay below does not adopt a vHCU for it.
  stale_lock_.Release(/*first=*/!stale_lock_.inherited_known());
  // The node could not be read: the earlier lock, if any, is not known yet.
  if (!stale_lock_.inherited_known()) return false;
  auto recovered =
      ctx_.vhcus.Recover([this](const std::string& uid) { return ctx_.IsAllocating(uid); });
  if (!recovered.ok()) {
    LOG(ERROR) << "HAMi: vHCU journal recovery failed: " << recovered.status().ToString();
    return false;
  }
  LOG(INFO) << "HAMi: recovered: " << recovered->destroyed << " vHCUs destroyed, "
            << recovered->adopted << " adopted, " << recovered->left_alone << " left alone";
  if (ctx_.options.on_recovered) ctx_.options.on_recovered(*recovered);
  ctx_.ready = true;
  return true;
}

void Sweeper::Run() {
  Clock::TimePoint next_recover_try = ctx_.clock.Now();
  while (true) {
    const Clock::TimePoint now = ctx_.clock.Now();
    Clock::TimePoint deadline;
    std::function<bool()> poll;
    if (ctx_.ready) {
      deadline = std::min(now + kTickPeriod, next_sweep_);
    } else if (!ctx_.pods->HasSynced()) {
      deadline = now + kSyncPoll;
      poll = [this] { return ctx_.pods->HasSynced(); };
    } else {
      deadline = next_recover_try;
    }
    bool sweep = wake_.WaitUntil(deadline, poll) != 0;
    if (wake_.stopped() || ctx_.stopping) return;
    if (!ctx_.ready) {
      const Clock::TimePoint at = ctx_.clock.Now();
      if (at >= next_recover_try && !SyncAndRecover()) {
        next_recover_try = at + (ctx_.pods->HasSynced() ? kRecoverRetry : kSyncPoll);
      }
      if (!ctx_.ready) continue;
      sweep = true;
      if (on_ready_) on_ready_();
    }
    if (ctx_.stopping) return;
    bool changed = false;
    if (sweep || ctx_.clock.Now() >= next_sweep_) {
      Sweep(/*pod_event=*/sweep);
      next_sweep_ = ctx_.clock.Now() + ctx_.options.sweep_interval;
      changed = true;
    }
    if (ctx_.vhcus.Tick().destroyed > 0) changed = true;
    // The pod cache lost or regained its footing: registration says so.
    const bool servable = ctx_.Servable();
    if (servable != last_servable_) {
      last_servable_ = servable;
      changed = true;
    }
    if (changed && on_change_) on_change_();
  }
}

void Sweeper::Sweep(bool pod_event) {
  stale_lock_.Release(/*first=*/false, /*fresh=*/pod_event);
  stale_lock_.MarkUnmarkedFailures();
  const std::set<std::string> live = ctx_.LivePodUids();
  auto result = ctx_.vhcus.Reconcile(
      [this, &live](const std::string& uid) { return ctx_.IsLive(uid, live); });
  if (!result.ok()) {
    LOG(WARNING) << "HAMi: reconcile failed: " << result.status().ToString();
    return;
  }
  if (result->destroyed > 0 || result->marks_removed > 0) {
    LOG(INFO) << "HAMi: reclaimed " << result->destroyed << " vHCUs, " << result->marks_removed
              << " mark files";
  }
  if (ctx_.options.evict_unaccounted_pods) {
    auto marks = ListMarkFiles(ctx_.options.host_root, nullptr);
    if (marks.ok()) evictor_.EvictUnaccountedPods(*marks);
  }
}

}  // namespace hcudp::internal
