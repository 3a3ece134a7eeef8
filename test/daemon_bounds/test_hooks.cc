#include "test_hooks.h"

#include <chrono>
#include <thread>

#include "hcudp_internal/log.h"

namespace hcudp::testing {

void HoldAllocateIfAsked(const v1beta1::AllocateRequest& request) {
  for (const auto& req : request.container_requests()) {
    for (const auto& id : req.devices_ids()) {
      if (id == "test-hook:hold") {
        LOG(WARNING) << "test hook: holding Allocate";
        for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
      }
    }
  }
}

}  // namespace hcudp::testing
