// RetryPolicy: the one backoff of a process that talks to the API server,
// shared by the kube client's own retries and by every loop built on it (pod
// cache, ResourceSlice publisher, HAMi registration, Events, node labels), as
// client-go's backoff manager is shared by a reflector's list and watch.
//
//   auto policy = RetryPolicy::New({});           // 1 s doubling to 30 s
//   ... a request failed:
//   clock.SleepFor(policy->Pause(retry_after_s));  // jittered, Retry-After raised
//
// Why one ladder and not one per call: a loop that retried a call which
// itself retried restarted the call's ladder from the bottom every time, so
// the backoff never grew, and every node retried in lockstep. Here:
//   - each failure anywhere in the process moves the shared ladder one step
//     (initial, doubled per failure, capped at max_backoff);
//   - the pause is drawn uniformly from [(1 - jitter) * step, step], so a
//     fleet of nodes spreads out instead of retrying together;
//   - the ladder goes back to `initial` only once no failure has been seen
//     for `stable_period`, never because one request succeeded;
//   - a Retry-After (a 429 or 503 that says when to come back) raises the
//     pause to what it asked for, up to max_retry_after;
//   - a budget bounds the retries of the whole process: a token per retry,
//     `budget_burst` of them, one more every `budget_refill`; a retry with no
//     token left waits until one is due, so several loops failing together
//     queue behind each other instead of multiplying their retries.
//
// A caller with its own short deadline (kubelet's Allocate, Prepare) does not
// use the shared ladder: see CallOptions::within_deadline (kube_client.h).
//
// Thread-safety: every method may be called from any thread.
#ifndef HCUDP_RETRY_POLICY_H_
#define HCUDP_RETRY_POLICY_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>

#include "hcudp/clock.h"
#include "hcudp/export.h"
#include "hcudp/status.h"

namespace hcudp {

struct RetryPolicyOptions {
  // The first step of the ladder, and the doubling's cap. Defaults 1 s / 30 s.
  std::chrono::milliseconds initial_backoff{1000};
  std::chrono::milliseconds max_backoff{30000};
  // The share of a step taken off at random: a pause lies in
  // [(1 - jitter) * step, step]. 0 to 1; default 0.5.
  double jitter = 0.5;
  // No failure for this long resets the ladder to initial_backoff.
  // Default 60 s.
  std::chrono::milliseconds stable_period{60000};
  // The longest Retry-After honoured (a longer one is cut to it). Default 60 s.
  std::chrono::milliseconds max_retry_after{60000};
  // The retry budget: this many retries at once, one more every
  // budget_refill. Defaults 6 and 5 s (at most 12 retries a minute for the
  // process once the burst is spent).
  int budget_burst = 6;
  std::chrono::milliseconds budget_refill{5000};
  // What the ladder's stable period and the budget are timed on. Not owned;
  // must outlive the policy. Default (null): Clock::Real().
  Clock* clock = nullptr;
  // Seeds the jitter; 0 draws a seed from the system (every process of a
  // fleet differs). Tests give a fixed one.
  uint64_t seed = 0;
};

class HCUDP_EXPORT RetryPolicy {
 public:
  // InvalidArgument for a non-positive backoff, max < initial, jitter outside
  // [0, 1], a negative stable period, a burst < 1 or a non-positive refill.
  static StatusOr<std::shared_ptr<RetryPolicy>> New(RetryPolicyOptions options = {});
  ~RetryPolicy();
  RetryPolicy(const RetryPolicy&) = delete;
  RetryPolicy& operator=(const RetryPolicy&) = delete;

  // A request failed: returns how long to wait before the next one, and
  // moves the ladder one step and takes a token from the budget. The pause
  // is the jittered step, raised to `retry_after_s` (the server's
  // Retry-After, up to max_retry_after) and to the time the next budget token
  // is due.
  std::chrono::milliseconds Pause(const std::optional<int>& retry_after_s = std::nullopt);

  // The un-jittered step the next Pause() starts from (initial_backoff after
  // a stable period), without taking it. For logs and tests.
  std::chrono::milliseconds NextStep() const;

  const RetryPolicyOptions& options() const;

 private:
  class Impl;
  explicit RetryPolicy(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace hcudp

#endif  // HCUDP_RETRY_POLICY_H_
