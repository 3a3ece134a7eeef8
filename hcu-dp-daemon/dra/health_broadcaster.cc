#include "dra/health_broadcaster.h"

#include "hcudp_internal/clock_wait.h"
#include "hcudp_internal/log.h"

namespace hcudp::daemon::dra {
namespace {

// The list as sent: messages cut as kubelet would, and a check time for
// devices the driver gave none.
std::shared_ptr<const HealthList> Stamp(HealthList list, Clock& clock) {
  const int64_t now =
      std::chrono::duration_cast<std::chrono::seconds>(clock.WallNow().time_since_epoch()).count();
  for (DeviceHealth& d : list) {
    if (d.last_updated_unix_seconds == 0) d.last_updated_unix_seconds = now;
    if (d.message.size() > HealthBroadcaster::kMaxMessageChars) {
      d.message.resize(HealthBroadcaster::kMaxMessageChars - 3);
      d.message += "...";
    }
  }
  return std::make_shared<const HealthList>(std::move(list));
}

}  // namespace

HealthBroadcaster::HealthBroadcaster(DraHandler& handler, Clock& clock)
    : handler_(handler), clock_(clock) {}

HealthBroadcaster::~HealthBroadcaster() { Stop(); }

void HealthBroadcaster::Start() {
  MutexLock lock(mu_);
  if (started_ || stopping_) return;
  started_ = true;
  next_resend_ = clock_.Now() + kResendPeriod;
  thread_ = std::thread([this] { Run(); });
}

void HealthBroadcaster::Stop() {
  {
    MutexLock lock(mu_);
    stopping_ = true;
    for (Sink* s : sinks_) s->Close();
    for (Sink* s : new_sinks_) s->Close();
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void HealthBroadcaster::NotifyChanged() {
  {
    MutexLock lock(mu_);
    changed_ = true;
  }
  cv_.notify_all();
}

bool HealthBroadcaster::Add(Sink* sink) {
  {
    MutexLock lock(mu_);
    if (stopping_) return false;
    new_sinks_.insert(sink);
  }
  cv_.notify_all();
  return true;
}

void HealthBroadcaster::Remove(Sink* sink) {
  MutexLock lock(mu_);
  sinks_.erase(sink);
  new_sinks_.erase(sink);
}

int HealthBroadcaster::active_streams() const {
  MutexLock lock(mu_);
  return static_cast<int>(sinks_.size() + new_sinks_.size());
}

uint64_t HealthBroadcaster::pushes() const {
  MutexLock lock(mu_);
  return pushes_;
}

void HealthBroadcaster::Run() {
  for (;;) {
    bool resend = false;
    {
      MutexLock lock(mu_);
      WaitUntil(clock_, mu_, cv_, next_resend_, [this]() HCUDP_REQUIRES(mu_) {
        return stopping_ || changed_ || !new_sinks_.empty();
      });
      if (stopping_) return;
      resend = clock_.Now() >= next_resend_;
      if (!changed_ && new_sinks_.empty() && !resend) continue;
      changed_ = false;
      if (resend) next_resend_ = clock_.Now() + kResendPeriod;
    }
    // The driver's own lock is taken here, never under ours.
    HealthList raw = handler_.HealthSnapshot();
    MutexLock lock(mu_);
    if (stopping_) return;
    const bool differs = !last_raw_ || *last_raw_ != raw;
    auto list = Stamp(raw, clock_);
    if (differs || resend) {
      VLOG(2) << "health: sending " << list->size() << " device(s) to " << sinks_.size()
              << " stream(s)" << (differs ? "" : " (periodic resend)");
      for (Sink* s : sinks_) s->Push(list);
      pushes_ += sinks_.size();
      next_resend_ = clock_.Now() + kResendPeriod;
    }
    for (Sink* s : new_sinks_) {
      s->Push(list);
      sinks_.insert(s);
      ++pushes_;
    }
    new_sinks_.clear();
    last_raw_ = std::make_unique<HealthList>(std::move(raw));
  }
}

}  // namespace hcudp::daemon::dra
