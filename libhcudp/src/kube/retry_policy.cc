// RetryPolicy and Backoff: one ladder per loop, one retry budget per process
// (retry_policy.h).
#include "hcudp/retry_policy.h"

#include <algorithm>
#include <random>

#include "hcudp/kube_client.h"
#include "hcudp_internal/thread_annotations.h"

namespace hcudp {

// What every ladder of a process shares: the options, the budget's tokens,
// and a generator for the ladders' seeds and for Spread.
class RetryPolicy::Shared {
 public:
  explicit Shared(RetryPolicyOptions options)
      : options_(options),
        clock_(options_.clock != nullptr ? *options_.clock : Clock::Real()),
        rng_(options_.seed != 0 ? options_.seed : std::random_device{}()),
        tokens_(options_.budget_burst),
        tokens_at_(clock_.Now()) {}

  const RetryPolicyOptions& options() const { return options_; }
  Clock& clock() const { return clock_; }

  uint64_t NextSeed() {
    MutexLock lock(mu_);
    return rng_();
  }

  std::chrono::milliseconds Spread(std::chrono::milliseconds period) {
    MutexLock lock(mu_);
    const double grow = 1.0 + options_.jitter * std::uniform_real_distribution<double>(0, 1)(rng_);
    return std::chrono::milliseconds(
        static_cast<int64_t>(static_cast<double>(period.count()) * grow));
  }

  // Takes a token at `now`: returns how long the retry must wait for it (0
  // when one was there), at most `max_wait`. A retry that is let through
  // early (its wait capped) still owes its token, so the bucket's deficit
  // stays a true count of the retries made.
  std::chrono::milliseconds TakeToken(Clock::TimePoint now, std::chrono::milliseconds max_wait) {
    MutexLock lock(mu_);
    const double refill_ms = static_cast<double>(options_.budget_refill.count());
    const double elapsed_ms = std::chrono::duration<double, std::milli>(now - tokens_at_).count();
    tokens_ =
        std::min<double>(options_.budget_burst, tokens_ + std::max(0.0, elapsed_ms) / refill_ms);
    tokens_at_ = now;
    tokens_ -= 1;
    if (tokens_ >= 0) return std::chrono::milliseconds(0);
    const std::chrono::milliseconds wait(static_cast<int64_t>(-tokens_ * refill_ms + 0.5));
    return std::min(wait, max_wait);
  }

 private:
  const RetryPolicyOptions options_;
  Clock& clock_;
  Mutex mu_;
  std::mt19937_64 rng_ HCUDP_GUARDED_BY(mu_);
  double tokens_ HCUDP_GUARDED_BY(mu_);
  Clock::TimePoint tokens_at_ HCUDP_GUARDED_BY(mu_);
};

class Backoff::Impl {
 public:
  Impl(std::shared_ptr<RetryPolicy::Shared> shared, uint64_t seed)
      : shared_(std::move(shared)),
        options_(shared_->options()),
        rng_(seed),
        step_(options_.initial_backoff) {}

  std::chrono::milliseconds Pause(const std::optional<int>& retry_after_s) {
    using std::chrono::milliseconds;
    const Clock::TimePoint now = shared_->clock().Now();
    milliseconds pause;
    bool first;
    {
      MutexLock lock(mu_);
      ResetIfStable(now);
      const milliseconds step = step_;
      first = step == options_.initial_backoff;
      step_ = std::min(step_ * 2, options_.max_backoff);
      const double keep =
          1.0 - options_.jitter * std::uniform_real_distribution<double>(0, 1)(rng_);
      pause = milliseconds(static_cast<int64_t>(static_cast<double>(step.count()) * keep));
    }
    pause = PauseForRetryAfter(pause, retry_after_s, options_.max_retry_after);
    // A later retry queues behind the others for its token (bounded, so a
    // deep deficit never parks a loop for long).
    const milliseconds max_wait = first ? options_.first_retry_budget_wait
                                        : std::max(options_.max_backoff, options_.max_retry_after);
    pause = std::max(pause, shared_->TakeToken(now, max_wait));
    MutexLock lock(mu_);
    quiet_from_ = std::max(quiet_from_, now + pause);
    return pause;
  }

  std::chrono::milliseconds NextStep() {
    MutexLock lock(mu_);
    ResetIfStable(shared_->clock().Now());
    return step_;
  }

 private:
  // A stable period without failures (counted from the end of the last
  // pause) puts the ladder back at its first step.
  void ResetIfStable(Clock::TimePoint now) HCUDP_REQUIRES(mu_) {
    if (quiet_from_ != Clock::TimePoint{} && now - quiet_from_ >= options_.stable_period) {
      step_ = options_.initial_backoff;
      quiet_from_ = Clock::TimePoint{};
    }
  }

  const std::shared_ptr<RetryPolicy::Shared> shared_;
  const RetryPolicyOptions& options_;  // shared_'s
  Mutex mu_;
  std::mt19937_64 rng_ HCUDP_GUARDED_BY(mu_);
  std::chrono::milliseconds step_ HCUDP_GUARDED_BY(mu_);
  // When the last failure's pause ended: the stable period counts from here.
  Clock::TimePoint quiet_from_ HCUDP_GUARDED_BY(mu_);
};

Backoff::Backoff(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Backoff::~Backoff() = default;

std::chrono::milliseconds Backoff::Pause(const std::optional<int>& retry_after_s) {
  return impl_->Pause(retry_after_s);
}
std::chrono::milliseconds Backoff::NextStep() const { return impl_->NextStep(); }

StatusOr<std::shared_ptr<RetryPolicy>> RetryPolicy::New(RetryPolicyOptions options) {
  if (options.initial_backoff.count() <= 0 || options.max_backoff < options.initial_backoff) {
    return InvalidArgumentError(
        "retry policy: initial_backoff must be > 0 and max_backoff >= initial_backoff");
  }
  if (!(options.jitter >= 0 && options.jitter <= 1)) {
    return InvalidArgumentError("retry policy: jitter must lie in [0, 1]");
  }
  if (options.stable_period.count() < 0 || options.max_retry_after.count() < 0 ||
      options.first_retry_budget_wait.count() < 0) {
    return InvalidArgumentError(
        "retry policy: stable_period, max_retry_after and first_retry_budget_wait must be >= 0");
  }
  if (options.budget_burst < 1 || options.budget_refill.count() <= 0) {
    return InvalidArgumentError("retry policy: budget_burst must be >= 1 and budget_refill > 0");
  }
  return std::shared_ptr<RetryPolicy>(new RetryPolicy(std::make_shared<Shared>(options)));
}

RetryPolicy::RetryPolicy(std::shared_ptr<Shared> shared) : shared_(std::move(shared)) {}
RetryPolicy::~RetryPolicy() = default;

std::unique_ptr<Backoff> RetryPolicy::NewBackoff() const {
  return std::unique_ptr<Backoff>(
      new Backoff(std::make_unique<Backoff::Impl>(shared_, shared_->NextSeed())));
}

std::chrono::milliseconds RetryPolicy::Spread(std::chrono::milliseconds period) {
  return shared_->Spread(period);
}

const RetryPolicyOptions& RetryPolicy::options() const { return shared_->options(); }

}  // namespace hcudp
