#include "backend/card_events.h"
#include "hcudp_internal/log.h"

namespace hcudp {

std::string RsmiEventName(uint32_t type) {
  switch (type) {
    case kRsmiEvtVmFault:
      return "VM_FAULT";
    case kRsmiEvtThermalThrottle:
      return "THERMAL_THROTTLE";
    case kRsmiEvtGpuPreReset:
      return "GPU_PRE_RESET";
    case kRsmiEvtGpuPostReset:
      return "GPU_POST_RESET";
    default:
      return "EVENT_" + std::to_string(type);
  }
}

Status CardEvents::Start(std::function<void(const BackendEvent&)> on_event) {
  if (thread_.joinable()) return OkStatus();
  HCUDP_RETURN_IF_ERROR(vendor_.OpenEvents(kHealthEventMask));
  on_event_ = std::move(on_event);
  stopping_ = false;
  thread_ = std::thread([this] { Loop(); });
  return OkStatus();
}

void CardEvents::Stop() {
  if (!thread_.joinable()) return;
  stopping_ = true;
  thread_.join();
  vendor_.CloseEvents();
}

void CardEvents::Loop() {
  auto last_error_log = std::chrono::steady_clock::time_point{};
  bool missed = false;  // a wait failed: events may have gone unseen
  while (!stopping_) {
    StatusOr<std::vector<VendorEvent>> got = vendor_.WaitEvents(kWaitSlice);
    if (!got.ok()) {
      missed = true;
      const auto now = std::chrono::steady_clock::now();
      if (now - last_error_log >= std::chrono::minutes(10)) {
        LOG(WARNING) << "card events: " << got.status().ToString()
                     << "; health follows the --pulse poll until they recover";
        last_error_log = now;
      }
      // The pause is a slice of its own, so Stop() stays bounded.
      for (auto until = now + kErrorPause;
           !stopping_ && std::chrono::steady_clock::now() < until;) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
      continue;
    }
    if (missed) {
      // What happened while the waits failed was delivered to nobody: the
      // caller looks at every card once.
      missed = false;
      LOG(INFO) << "card events: waiting again; checking every card's health now";
      on_event_(BackendEvent{-1, kEventsResumed, "card events resumed after a failed wait"});
    }
    for (const VendorEvent& e : *got) {
      BackendEvent out;
      out.card = e.card;
      out.kind = RsmiEventName(e.type);
      out.message = e.message;
      LOG(INFO) << "card " << e.card << ": " << out.kind
                << (e.message.empty() ? "" : " (" + e.message + ")") << "; checking health now";
      on_event_(out);
    }
  }
}

}  // namespace hcudp
