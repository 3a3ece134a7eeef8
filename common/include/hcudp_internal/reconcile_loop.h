// ReconcileLoop: the thread of a reconciler that trusts no single event, as
// kubelet's socket directories demand (kubelet-contract.md §11). It runs
// `pass` at once, then again whenever Wake() is called (an inotify event, a
// call that ended, a new snapshot) or the time the last pass returned comes,
// whichever is first; the pass keeps that time within its stat backstop.
// The wait is on an hcudp::Clock, so a test drives backoffs and backstops in
// simulated time. The daemon's device-plugin manager and its DRA plugin
// both run on one.
//
// Thread-safety: Wake() from any thread, never blocking; Start() and Stop()
// from the owner's. `pass` runs on the loop's thread only.
#ifndef HCUDP_INTERNAL_RECONCILE_LOOP_H_
#define HCUDP_INTERNAL_RECONCILE_LOOP_H_

#include <condition_variable>
#include <functional>
#include <memory>
#include <thread>

#include "hcudp/clock.h"
#include "hcudp/status.h"
#include "hcudp_internal/fd_poller.h"
#include "hcudp_internal/thread_annotations.h"

namespace hcudp {

class ReconcileLoop {
 public:
  // One pass; returns when the next must run at the latest.
  using Pass = std::function<Clock::TimePoint()>;

  // `clock` must outlive the loop.
  ReconcileLoop(Clock& clock, Pass pass);
  ~ReconcileLoop();  // Stop()
  ReconcileLoop(const ReconcileLoop&) = delete;
  ReconcileLoop& operator=(const ReconcileLoop&) = delete;

  // Starts the loop's thread. With `fd` >= 0, a poller thread also calls
  // `drain` (which must read what fd holds) whenever fd is readable, and
  // wakes the loop when it returns true. The loop runs whatever the
  // poller's fate: its error is returned for the caller to log (the
  // backstop then does the work alone).
  Status Start(int fd = -1, std::function<bool()> drain = nullptr);
  // Asks for a pass soon.
  void Wake();
  // Ends the wait, joins the thread once the pass in progress is done, then
  // stops the poller. Idempotent.
  void Stop();

 private:
  void Run();

  Clock& clock_;
  const Pass pass_;
  Mutex mu_;  // a leaf
  std::condition_variable cv_;
  bool woken_ HCUDP_GUARDED_BY(mu_) = false;
  bool stop_ HCUDP_GUARDED_BY(mu_) = false;
  std::unique_ptr<FdPoller> poller_;
  std::thread thread_;
};

}  // namespace hcudp

#endif  // HCUDP_INTERNAL_RECONCILE_LOOP_H_
