// Registrar: the HAMi node registration and its handshake (hami_agent.h),
// on a thread of its own that never waits for vHCU work: a slow destroy or a
// busy host-wide vHCU lock on the sweep thread does not delay the handshake.
// Internal to the agent.
#ifndef HCUDP_SRC_HAMI_REGISTRAR_H_
#define HCUDP_SRC_HAMI_REGISTRAR_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <thread>

#include "hami/agent_context.h"
#include "hami/wakeup.h"

namespace hcudp::internal {

class Registrar {
 public:
  // `on_first` is called (on the registration thread) after the first
  // registration that went through.
  Registrar(AgentContext& ctx, std::function<void()> on_first);
  ~Registrar();  // Stop()s
  Registrar(const Registrar&) = delete;
  Registrar& operator=(const Registrar&) = delete;

  void Start();
  void Stop();
  // Registers soon: the lists when they changed, the handshake when due.
  // Nothing is registered before the agent is ready (AgentContext::ready):
  // the scheduler must not place a pod that Allocate cannot serve yet.
  void Request() { wake_.Request(1); }
  // The first registration went through.
  bool registered() const { return registered_.load(); }

 private:
  void Run();
  // When the next registration is due without a request.
  Clock::TimePoint NextDue() const;
  void RegisterIfDue(bool requested);
  Status Register(bool lists_only_if_changed);
  void ReportHcumem(const NodeInventory& inventory, const NodeObject& node);
  void ReportTopology(const NodeInventory& inventory);

  AgentContext& ctx_;
  const std::function<void()> on_first_;
  Wakeup wake_;
  std::atomic<bool> registered_{false};
  std::thread thread_;
  // The registration loop's own ladder (retry_policy.h).
  const std::unique_ptr<Backoff> backoff_;

  // The registration thread only.
  bool last_servable_ = false;  // the cards were last registered as servable
  std::string last_full_;
  std::string last_remaining_;
  Clock::TimePoint last_handshake_{};
  Clock::TimePoint next_retry_{};
  std::optional<int> retry_after_s_;  // of the last refused handshake
  std::optional<uint64_t> last_hcumem_mib_;
  std::string last_topology_;
};

}  // namespace hcudp::internal

#endif  // HCUDP_SRC_HAMI_REGISTRAR_H_
