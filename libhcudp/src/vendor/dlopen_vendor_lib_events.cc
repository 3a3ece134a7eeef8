// DlopenVendorLib: RSMI event notification (reference/hcu-hardware.md §1.3:
// rsmi_event_notification_init / mask_set / get / stop; §5: the KFD SMI
// events — VM fault, thermal throttle, GPU pre/post reset).

#include <cstring>

#include "hcudp_internal/log.h"
#include "vendor/dlopen_vendor_lib_impl.h"
#include "vendor/vendor_status.h"

namespace hcudp::vendor {
namespace {

// Events fetched per rsmi_event_notification_get call.
constexpr uint32_t kEventBatch = 16;

}  // namespace

Status DlopenVendorLib::OpenEventsLocked(uint64_t mask) {
  const RsmiApi& r = api_->rsmi;
  HCUDP_ASSIGN_OR_RETURN(int cards, RsmiCountLocked());
  std::vector<uint32_t> opened;
  Status failed;
  for (uint32_t i = 0; i < static_cast<uint32_t>(cards); ++i) {
    Status st = Rsmi(r.event_init(i), "rsmi_event_notification_init");
    if (st.ok()) {
      st = Rsmi(r.event_mask_set(i, mask), "rsmi_event_notification_mask_set");
      if (!st.ok()) r.event_stop(i);
    }
    if (!st.ok()) {
      if (failed.ok()) failed = st.WithContext("card " + std::to_string(i));
      continue;
    }
    opened.push_back(i);
  }
  // Some cards without events still leave the others evented; none is the
  // caller's cue to poll.
  if (opened.empty() && cards > 0) return failed;
  if (!failed.ok()) LOG(WARNING) << "card events: " << failed.ToString() << "; that card is polled";
  MutexLock lock(events_mu_);
  events_mask_ = mask;
  events_open_ = std::move(opened);
  return OkStatus();
}

Status DlopenVendorLib::OpenEvents(uint64_t mask) {
  const RsmiApi& r = api_->rsmi;
  if (r.event_init == nullptr || r.event_mask_set == nullptr || r.event_get == nullptr ||
      r.event_stop == nullptr) {
    return UnimplementedError(
        "librocm_smi64 has no rsmi_event_notification_* (an older runtime); health is polled");
  }
  ReaderLock lock(mu_);
  HCUDP_RETURN_IF_ERROR(CheckInitializedLocked());
  return OpenEventsLocked(mask);
}

StatusOr<std::vector<VendorEvent>> DlopenVendorLib::WaitEvents(std::chrono::milliseconds timeout) {
  uint64_t mask = 0;
  {
    MutexLock lock(events_mu_);
    mask = events_mask_;
  }
  if (mask == 0) return FailedPreconditionError("card events are not open (OpenEvents)");
  ReaderLock lock(mu_);
  HCUDP_RETURN_IF_ERROR(CheckInitializedLocked());
  rsmi_evt_notification_data_t data[kEventBatch];
  std::memset(data, 0, sizeof(data));
  uint32_t count = kEventBatch;
  rsmi_status_t code = api_->rsmi.event_get(static_cast<int>(timeout.count()), &count, data);
  if (code == RSMI_STATUS_NO_DATA) return std::vector<VendorEvent>{};
  Status st = Rsmi(code, "rsmi_event_notification_get");
  if (!st.ok()) {
    // A re-initialised library (count mismatch) has forgotten the cards
    // opened before: open them again for the next wait.
    // Events of the time in between reached nobody: the failure is still
    // reported, so the caller knows to look (CardEvents' resume event).
    Status reopened = OpenEventsLocked(mask);
    if (!reopened.ok()) return st;
    return st.WithContext("re-opened the cards' events");
  }
  std::vector<VendorEvent> out;
  for (uint32_t i = 0; i < std::min(count, kEventBatch); ++i) {
    VendorEvent e;
    e.card = static_cast<int>(data[i].dv_ind);
    e.type = data[i].event;
    e.message.assign(data[i].message, strnlen(data[i].message, sizeof(data[i].message)));
    out.push_back(std::move(e));
  }
  return out;
}

void DlopenVendorLib::CloseEvents() {
  std::vector<uint32_t> open;
  {
    MutexLock lock(events_mu_);
    open.swap(events_open_);
    events_mask_ = 0;
  }
  if (open.empty() || api_->rsmi.event_stop == nullptr) return;
  ReaderLock lock(mu_);
  if (!initialized_) return;
  for (uint32_t i : open) api_->rsmi.event_stop(i);
}

}  // namespace hcudp::vendor
