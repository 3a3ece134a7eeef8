// RetryPolicy: the process's one backoff ladder and retry budget.
#include "hcudp/retry_policy.h"

#include <algorithm>
#include <random>

#include "hcudp/kube_client.h"
#include "hcudp_internal/thread_annotations.h"

namespace hcudp {

class RetryPolicy::Impl {
 public:
  explicit Impl(RetryPolicyOptions options)
      : options_(options),
        clock_(options_.clock != nullptr ? *options_.clock : Clock::Real()),
        rng_(options_.seed != 0 ? options_.seed : std::random_device{}()),
        step_(options_.initial_backoff),
        tokens_(options_.budget_burst),
        tokens_at_(clock_.Now()) {}

  const RetryPolicyOptions& options() const { return options_; }

  std::chrono::milliseconds Pause(const std::optional<int>& retry_after_s) {
    using std::chrono::milliseconds;
    MutexLock lock(mu_);
    const Clock::TimePoint now = clock_.Now();
    ResetIfStable(now);
    const milliseconds step = step_;
    step_ = std::min(step_ * 2, options_.max_backoff);
    const double keep = 1.0 - options_.jitter * std::uniform_real_distribution<double>(0, 1)(rng_);
    milliseconds pause(static_cast<int64_t>(static_cast<double>(step.count()) * keep));
    pause = PauseForRetryAfter(pause, retry_after_s, options_.max_retry_after);
    // The budget: refill what is due, take one token; without one, the
    // retry waits for the next token (later callers queue behind it).
    const double refill_ms = static_cast<double>(options_.budget_refill.count());
    const double elapsed_ms = std::chrono::duration<double, std::milli>(now - tokens_at_).count();
    tokens_ = std::min<double>(options_.budget_burst, tokens_ + elapsed_ms / refill_ms);
    tokens_at_ = now;
    tokens_ -= 1;
    if (tokens_ < 0) {
      pause = std::max(pause, milliseconds(static_cast<int64_t>(-tokens_ * refill_ms + 0.5)));
    }
    quiet_from_ = std::max(quiet_from_, now + pause);
    return pause;
  }

  std::chrono::milliseconds NextStep() {
    MutexLock lock(mu_);
    ResetIfStable(clock_.Now());
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

  const RetryPolicyOptions options_;
  Clock& clock_;
  Mutex mu_;
  std::mt19937_64 rng_ HCUDP_GUARDED_BY(mu_);
  std::chrono::milliseconds step_ HCUDP_GUARDED_BY(mu_);
  // When the last failure's pause ended: the stable period counts from here.
  Clock::TimePoint quiet_from_ HCUDP_GUARDED_BY(mu_);
  double tokens_ HCUDP_GUARDED_BY(mu_);
  Clock::TimePoint tokens_at_ HCUDP_GUARDED_BY(mu_);
};

StatusOr<std::shared_ptr<RetryPolicy>> RetryPolicy::New(RetryPolicyOptions options) {
  if (options.initial_backoff.count() <= 0 || options.max_backoff < options.initial_backoff) {
    return InvalidArgumentError(
        "retry policy: initial_backoff must be > 0 and max_backoff >= initial_backoff");
  }
  if (!(options.jitter >= 0 && options.jitter <= 1)) {
    return InvalidArgumentError("retry policy: jitter must lie in [0, 1]");
  }
  if (options.stable_period.count() < 0 || options.max_retry_after.count() < 0) {
    return InvalidArgumentError("retry policy: stable_period and max_retry_after must be >= 0");
  }
  if (options.budget_burst < 1 || options.budget_refill.count() <= 0) {
    return InvalidArgumentError("retry policy: budget_burst must be >= 1 and budget_refill > 0");
  }
  return std::shared_ptr<RetryPolicy>(new RetryPolicy(std::make_unique<Impl>(options)));
}

RetryPolicy::RetryPolicy(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
RetryPolicy::~RetryPolicy() = default;

std::chrono::milliseconds RetryPolicy::Pause(const std::optional<int>& retry_after_s) {
  return impl_->Pause(retry_after_s);
}
std::chrono::milliseconds RetryPolicy::NextStep() const { return impl_->NextStep(); }
const RetryPolicyOptions& RetryPolicy::options() const { return impl_->options(); }

}  // namespace hcudp
