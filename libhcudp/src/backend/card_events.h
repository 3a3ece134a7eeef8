// CardEvents: the thread that turns the vendor runtime's event notification
// (rsmi_event_notification_*, reference/hcu-hardware.md §1.3, §5) into
// BackendEvents for HostBackend::StartEvents.
//
// It asks for the events that say a card's health may have changed: VM
// fault, thermal throttle, GPU pre- and post-reset. Each wait is
// rsmi_event_notification_get with a short timeout (kWaitSlice), so Stop()
// returns within one slice plus the close, inside Backend::kEventStopBound.
// A failing wait is logged (rate-limited) and retried after a pause; the
// caller's poll is the backstop either way. The first good wait after failed
// ones reports a BackendEvent of kind kEventsResumed (card -1): events raised
// in between reached nobody, so the caller looks at every card.
#ifndef HCUDP_SRC_BACKEND_CARD_EVENTS_H_
#define HCUDP_SRC_BACKEND_CARD_EVENTS_H_

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "hcudp/backend.h"
#include "hcudp/vendor_lib.h"

namespace hcudp {

// RSMI event types (rsmi_evt_notification_type_t) and their mask bits.
inline constexpr uint32_t kRsmiEvtVmFault = 1;
inline constexpr uint32_t kRsmiEvtThermalThrottle = 2;
inline constexpr uint32_t kRsmiEvtGpuPreReset = 3;
inline constexpr uint32_t kRsmiEvtGpuPostReset = 4;
inline constexpr uint64_t RsmiEventBit(uint32_t type) { return uint64_t{1} << (type - 1); }
inline constexpr uint64_t kHealthEventMask =
    RsmiEventBit(kRsmiEvtVmFault) | RsmiEventBit(kRsmiEvtThermalThrottle) |
    RsmiEventBit(kRsmiEvtGpuPreReset) | RsmiEventBit(kRsmiEvtGpuPostReset);

// "VM_FAULT", "THERMAL_THROTTLE", "GPU_PRE_RESET", "GPU_POST_RESET", or
// "EVENT_<n>".
std::string RsmiEventName(uint32_t type);

// The kind of the BackendEvent that follows failed waits.
inline constexpr char kEventsResumed[] = "EVENTS_RESUMED";

class CardEvents {
 public:
  static constexpr std::chrono::milliseconds kWaitSlice{200};
  static constexpr std::chrono::milliseconds kErrorPause{200};

  // `vendor` must outlive this object.
  explicit CardEvents(VendorLib& vendor) : vendor_(vendor) {}
  ~CardEvents() { Stop(); }

  // Opens the notification (Unimplemented/NotSupported etc. from the
  // library when it has none) and starts the thread.
  Status Start(std::function<void(const BackendEvent&)> on_event);
  void Stop();

 private:
  void Loop();

  VendorLib& vendor_;
  std::function<void(const BackendEvent&)> on_event_;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace hcudp

#endif  // HCUDP_SRC_BACKEND_CARD_EVENTS_H_
