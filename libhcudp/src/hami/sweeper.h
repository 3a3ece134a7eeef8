// Sweeper: the vHCU lifecycle of the HAMi agent (hami_agent.h) on a thread
// of its own: the first sync (stale node lock, VhcuManager::Recover), then
// Reconcile on pod events and every sweep_interval, and VhcuManager::Tick
// every second for busy-destroy retries. Internal to the agent.
#ifndef HCUDP_SRC_HAMI_SWEEPER_H_
#define HCUDP_SRC_HAMI_SWEEPER_H_

#include <functional>
#include <thread>

#include "hami/agent_context.h"
#include "hami/evictor.h"
#include "hami/stale_lock.h"
#include "hami/wakeup.h"

namespace hcudp::internal {

class Sweeper {
 public:
  // `on_ready` runs (on the sweep thread) once the first sync and Recover
  // went through; `on_change` after every pass that may have changed the
  // vHCUs (the registration then reports them).
  Sweeper(AgentContext& ctx, std::function<void()> on_ready, std::function<void()> on_change);
  ~Sweeper();  // Stop()s
  Sweeper(const Sweeper&) = delete;
  Sweeper& operator=(const Sweeper&) = delete;

  void Start();
  void Stop();
  // Sweeps soon (a pod was deleted or ended).
  void Request() { wake_.Request(1); }

 private:
  void Run();
  bool SyncAndRecover();
  // `pod_event`: asked for by a pod event (the stale-lock check reads the
  // Node itself), not the periodic sweep.
  void Sweep(bool pod_event);

  AgentContext& ctx_;
  const std::function<void()> on_ready_;
  bool last_servable_ = false;  // the sweep thread's: AgentContext::Servable at the last tick
  const std::function<void()> on_change_;
  Wakeup wake_;
  StaleLock stale_lock_;
  Evictor evictor_;
  std::thread thread_;
  Clock::TimePoint next_sweep_{};  // the sweep thread only
};

}  // namespace hcudp::internal

#endif  // HCUDP_SRC_HAMI_SWEEPER_H_
