#include "hcudp_internal/reconcile_loop.h"

#include <utility>

#include "hcudp_internal/clock_wait.h"

namespace hcudp {

ReconcileLoop::ReconcileLoop(Clock& clock, Pass pass) : clock_(clock), pass_(std::move(pass)) {}

ReconcileLoop::~ReconcileLoop() { Stop(); }

Status ReconcileLoop::Start(int fd, std::function<bool()> drain) {
  Status polling = OkStatus();
  if (fd >= 0 && drain) {
    poller_ = std::make_unique<FdPoller>(fd, [this, drain = std::move(drain)] {
      if (drain()) Wake();
    });
    polling = poller_->Start();
  }
  thread_ = std::thread([this] { Run(); });
  return polling;
}

void ReconcileLoop::Wake() {
  {
    MutexLock lock(mu_);
    woken_ = true;
  }
  cv_.notify_all();
}

void ReconcileLoop::Stop() {
  {
    MutexLock lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (poller_) poller_->Stop();
}

void ReconcileLoop::Run() {
  for (;;) {
    {
      MutexLock lock(mu_);
      if (stop_) return;
      woken_ = false;  // this pass sees whatever woke it
    }
    const Clock::TimePoint next = pass_();
    MutexLock lock(mu_);
    WaitUntil(clock_, mu_, cv_, next, [this]() HCUDP_REQUIRES(mu_) { return woken_ || stop_; });
  }
}

}  // namespace hcudp
