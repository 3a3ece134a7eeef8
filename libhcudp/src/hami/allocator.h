// Allocator: HAMi Allocate for hcunum and hcucores (hami_agent.h), on the
// caller's (kubelet's) threads. Internal to the agent.
#ifndef HCUDP_SRC_HAMI_ALLOCATOR_H_
#define HCUDP_SRC_HAMI_ALLOCATOR_H_

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "hami/agent_context.h"
#include "hami/wakeup.h"
#include "hcudp/allocation.h"

namespace hcudp::internal {

class Allocator {
 public:
  // `stop` is stopped with the agent (it ends the waits between attempts to
  // find the pending pod); `on_done` runs after every AllocateCount (the
  // registration then reports the change).
  Allocator(AgentContext& ctx, Wakeup& stop, std::function<void()> on_done);

  StatusOr<std::vector<ContainerAllocation>> AllocateCount(const std::vector<int>& device_counts);
  StatusOr<std::vector<ContainerAllocation>> AllocateCores() const;

 private:
  struct PendingPod {
    Pod pod;
    std::string lock_value;  // the node lock, when this pod holds it
  };

  StatusOr<PendingPod> FindPendingPod(Clock::TimePoint deadline);
  std::optional<Pod> FreshestPod(const std::string& namespace_name, const std::string& name);
  StatusOr<ContainerAllocation> AllocateOne(int device_count, Clock::TimePoint work_deadline,
                                            Clock::TimePoint hard_deadline);
  Status ServeContainer(PendingPod& pending, int device_count, Clock::TimePoint work_deadline,
                        Clock::TimePoint hard_deadline, std::vector<hami::MarkFileName>* created,
                        ContainerAllocation* out);
  void FailPod(const PendingPod& pending, const std::vector<hami::MarkFileName>& created,
               const Status& why, Clock::TimePoint deadline);
  void ReleaseLock(const PendingPod& pending, Clock::TimePoint deadline);
  Status CheckDeadline(Clock::TimePoint deadline, std::string_view step) const;
  // The vHCU a mark of `owner` on the plan's card already holds, when it
  // has the planned size (a retried Allocate).
  std::optional<CreatedVhcu> MarkedVhcu(const VhcuOwner& owner, const hami::DevicePlan& plan);

  AgentContext& ctx_;
  Wakeup& stop_;
  const std::function<void()> on_done_;
};

}  // namespace hcudp::internal

#endif  // HCUDP_SRC_HAMI_ALLOCATOR_H_
