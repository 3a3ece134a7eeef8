// HAMi annotation keys and the fixed values written into them (§5.2-5.6).
//
// Part of the HAMi codec: the wire formats HAMi mode shares with the HCU
// scheduler, HAMi, hcu-exporter and the Hygon DRA driver
// (reference/seed-behaviour.md). Pure functions: no I/O, no clock unless
// passed in. Decoders are strict, name the bad record and field in an
// InvalidArgument message and never crash on any input; encoders refuse
// fields that would corrupt the separators (',', ':', ';', '_').
#ifndef HCUDP_HAMI_KEYS_H_
#define HCUDP_HAMI_KEYS_H_

#include <string_view>

namespace hcudp::hami {

// Node annotations.
inline constexpr std::string_view kNodeHandshakeAnnotation = "hami.io/node-handshake-hcu";
inline constexpr std::string_view kNodeRegisterAnnotation = "hami.io/node-hcu-register";
inline constexpr std::string_view kNodeRemainingAnnotation = "hygon.com/node-hcu-register";
inline constexpr std::string_view kNodeLockAnnotation = "hami.io/mutex.lock";
// Pod annotations.
inline constexpr std::string_view kBindPhaseAnnotation = "hami.io/bind-phase";
inline constexpr std::string_view kBindTimeAnnotation = "hami.io/bind-time";
inline constexpr std::string_view kVgpuNodeAnnotation = "hami.io/vgpu-node";
inline constexpr std::string_view kDevicesToAllocateAnnotation = "hami.io/hcu-devices-to-allocate";
inline constexpr std::string_view kDevicesAllocatedAnnotation = "hami.io/hcu-devices-allocated";
inline constexpr std::string_view kContainerIndexAnnotation = "hygon.com/container-index";
// hami.io/bind-phase values.
inline constexpr std::string_view kBindPhaseAllocating = "allocating";
inline constexpr std::string_view kBindPhaseSuccess = "success";
inline constexpr std::string_view kBindPhaseFailed = "failed";
// Prefix of HAMi card ids ("HCU-<serial>") and the pod device Type.
inline constexpr std::string_view kCardIdPrefix = "HCU-";
inline constexpr std::string_view kPodDeviceType = "HCU";
// Mode field of the 9-field node record we write, and the one HAMi assumes
// for the 7-field form.
inline constexpr std::string_view kNodeDeviceMode = "hami";
inline constexpr std::string_view kNodeDeviceModeSevenField = "hami-core";

}  // namespace hcudp::hami

#endif  // HCUDP_HAMI_KEYS_H_
