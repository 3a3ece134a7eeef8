// RFC3339 time, as Kubernetes and HAMi write it: the library's one RFC3339
// parser (the node lock, the handshake, and Kubernetes object metadata).
// Part of the HAMi codec (hcudp/hami/*.h; the rules for all of it are in
// hcudp/hami/keys.h).
#ifndef HCUDP_HAMI_RFC3339_H_
#define HCUDP_HAMI_RFC3339_H_

#include <chrono>
#include <string>
#include <string_view>

#include "hcudp/export.h"
#include "hcudp/status.h"

namespace hcudp::hami {

// RFC3339 with offset Z or ±hh:mm and an optional fraction (dropped); years
// 1900..2200 (what a system_clock holds).
HCUDP_EXPORT StatusOr<std::chrono::system_clock::time_point> ParseRfc3339(std::string_view text);
// "2026-03-01T02:00:00Z" (UTC, whole seconds).
HCUDP_EXPORT std::string FormatRfc3339Utc(std::chrono::system_clock::time_point time);

}  // namespace hcudp::hami

#endif  // HCUDP_HAMI_RFC3339_H_
