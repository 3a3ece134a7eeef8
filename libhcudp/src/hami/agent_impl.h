// HamiAgent::Impl: wires the parts of the HAMi agent (agent_context.h) and
// owns their threads. Internal to the agent.
#ifndef HCUDP_SRC_HAMI_AGENT_IMPL_H_
#define HCUDP_SRC_HAMI_AGENT_IMPL_H_

#include "hami/agent_context.h"
#include "hami/allocator.h"
#include "hami/registrar.h"
#include "hami/sweeper.h"
#include "hami/wakeup.h"
#include "hcudp/hami_agent.h"

namespace hcudp {

class HamiAgent::Impl {
 public:
  Impl(Backend* backend, KubeClient* client, HamiAgentOptions options, Clock& clock,
       internal::NodeAccess node);
  ~Impl();

  Status Start();
  void Stop();
  bool ready() const { return ctx_.Servable(); }
  bool settled() const { return ready() && registrar_.registered(); }
  internal::Allocator& allocator() { return allocator_; }
  const internal::Allocator& allocator() const { return allocator_; }
  void RequestRegister() { registrar_.Request(); }

 private:
  void OnPodEvent(const PodEvent& event);

  internal::AgentContext ctx_;
  // Stopped by Stop(): ends the waits of Allocate (between its attempts to
  // find the pending pod) at once.
  internal::Wakeup stop_;
  // Woken when the agent becomes ready or registered (Start() waits).
  internal::Wakeup progress_;
  internal::Registrar registrar_;
  internal::Sweeper sweeper_;
  internal::Allocator allocator_;
  bool started_ = false;  // Start() and Stop() are not called concurrently with Start()
};

}  // namespace hcudp

#endif  // HCUDP_SRC_HAMI_AGENT_IMPL_H_
