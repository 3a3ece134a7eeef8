// RetryPolicy and Backoff: how a process that talks to the API server waits
// after a failure. As in client-go there is one backoff *type* and one
// ladder per loop: each reflector there has its own backoff manager, shared
// by that reflector's LIST and WATCH, and no reflector's failures move
// another's.
//
//   auto policy = RetryPolicy::New({});                 // one per process
//   std::unique_ptr<Backoff> ladder = policy->NewBackoff();  // one per loop
//   ... a request of the loop failed:
//   clock.SleepFor(ladder->Pause(retry_after_s));
//
// What the code does:
//   - a Backoff is one loop's ladder (the pod cache, the slice publisher,
//     HAMi registration, Events, node labels: one each). A failure moves
//     that ladder one step: initial_backoff, doubled per failure, capped at
//     max_backoff. The same ladder serves every attempt of the loop (a
//     failed LIST and a failed WATCH step the same ladder), so a loop that
//     tries again continues its ladder, it never restarts it. As in
//     client-go, whose REST client retries apart from a reflector's
//     backoff, the retries the kube client makes inside one call wait a
//     fresh ladder of that call (unless the caller hands it one in
//     CallOptions::backoff): the loop's ladder steps once per failed loop
//     attempt;
//   - the pause is drawn uniformly from [(1 - jitter) * step, step], so a
//     fleet of nodes spreads out instead of retrying together;
//   - the ladder goes back to `initial_backoff` only once the loop has seen
//     no failure for `stable_period` (counted from the end of its last
//     pause), never because one request succeeded;
//   - a Retry-After (a 429 or 503 that says when to come back, in seconds or
//     as an HTTP-date) raises the pause to what it asked for, up to
//     max_retry_after;
//   - the RetryPolicy holds the one thing the loops share: a token bucket
//     that caps the retries of the whole process (`budget_burst` tokens, one
//     more every `budget_refill`). A retry with no token left waits until
//     one is due, but a loop's first retry (its ladder at its first step)
//     waits at most `first_retry_budget_wait` (1 s) for one: one loop's
//     failures never hold back another loop's first retry by more than
//     that. Later retries of a loop that keeps failing queue behind the
//     others (for at most the longer of max_backoff and max_retry_after).
//
// A caller with its own short deadline (kubelet's Allocate, Prepare) uses no
// loop's ladder: see CallOptions::within_deadline (kube_client.h). A one-off
// call without a ladder gets a fresh one for its own retries.
//
// Thread-safety: RetryPolicy may be used from any thread. A Backoff belongs
// to its loop, but is safe to call from any thread too.
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
  // The first step of every ladder, and the doubling's cap. Defaults 1 s / 30 s.
  std::chrono::milliseconds initial_backoff{1000};
  std::chrono::milliseconds max_backoff{30000};
  // The share of a step taken off at random: a pause lies in
  // [(1 - jitter) * step, step]. 0 to 1; default 0.5.
  double jitter = 0.5;
  // No failure of a loop for this long resets its ladder to initial_backoff.
  // Default 60 s.
  std::chrono::milliseconds stable_period{60000};
  // The longest Retry-After honoured (a longer one is cut to it). Default 60 s.
  std::chrono::milliseconds max_retry_after{60000};
  // The process's retry budget: this many retries at once, one more every
  // budget_refill. Defaults 6 and 5 s.
  int budget_burst = 6;
  std::chrono::milliseconds budget_refill{5000};
  // The longest a loop's first retry waits for a token. Default 1 s.
  std::chrono::milliseconds first_retry_budget_wait{1000};
  // What stable periods and the budget are timed on. Not owned; must outlive
  // the policy and its ladders. Default (null): Clock::Real().
  Clock* clock = nullptr;
  // Seeds the jitter; 0 draws a seed from the system (every process of a
  // fleet differs). Tests give a fixed one.
  uint64_t seed = 0;
};

class RetryPolicy;

// One loop's ladder. Made by RetryPolicy::NewBackoff; keeps the policy's
// shared state alive.
class HCUDP_EXPORT Backoff {
 public:
  ~Backoff();
  Backoff(const Backoff&) = delete;
  Backoff& operator=(const Backoff&) = delete;

  // A request of this loop failed: returns how long to wait before the next
  // one, moves this ladder one step and takes a token from the process's
  // budget. The pause is the jittered step, raised to `retry_after_s` (the
  // server's Retry-After, up to max_retry_after) and to the time the next
  // budget token is due (at most first_retry_budget_wait later for the
  // loop's first retry).
  std::chrono::milliseconds Pause(const std::optional<int>& retry_after_s = std::nullopt);

  // The un-jittered step the next Pause() starts from (initial_backoff after
  // a stable period), without taking it. For logs and tests.
  std::chrono::milliseconds NextStep() const;

  class Impl;

 private:
  friend class RetryPolicy;
  explicit Backoff(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

class HCUDP_EXPORT RetryPolicy {
 public:
  // InvalidArgument for a non-positive backoff, max < initial, jitter outside
  // [0, 1], a negative stable period or wait, a burst < 1 or a non-positive
  // refill.
  static StatusOr<std::shared_ptr<RetryPolicy>> New(RetryPolicyOptions options = {});
  ~RetryPolicy();
  RetryPolicy(const RetryPolicy&) = delete;
  RetryPolicy& operator=(const RetryPolicy&) = delete;

  // A new ladder, at its first step, for one loop. Its jitter is seeded from
  // the policy's seed and the number of ladders made before it.
  std::unique_ptr<Backoff> NewBackoff() const;

  // A caller's own fixed period (Events' retry_delay, say), spread at random
  // over [period, (1 + jitter) * period], so that the same period on every
  // node of a fleet does not bring their retries back together. Moves no
  // ladder and takes no token.
  std::chrono::milliseconds Spread(std::chrono::milliseconds period);

  const RetryPolicyOptions& options() const;

  class Shared;

 private:
  explicit RetryPolicy(std::shared_ptr<Shared> shared);
  std::shared_ptr<Shared> shared_;
};

}  // namespace hcudp

#endif  // HCUDP_RETRY_POLICY_H_
