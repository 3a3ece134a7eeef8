// The node lock hami.io/mutex.lock (§5.5).
// Part of the HAMi codec (hcudp/hami/*.h; the rules for all of it are in
// hcudp/hami/keys.h).
#ifndef HCUDP_HAMI_NODE_LOCK_H_
#define HCUDP_HAMI_NODE_LOCK_H_

#include <chrono>
#include <string>
#include <string_view>

#include "hcudp/export.h"
#include "hcudp/status.h"

namespace hcudp::hami {

// hami.io/mutex.lock = "<RFC3339 time>,<namespace>,<pod name>".
struct NodeLock {
  std::chrono::system_clock::time_point time;  // whole seconds
  std::string time_text;                       // as written, e.g. "...+08:00"
  std::string pod_namespace;
  std::string pod_name;
};

// Time in UTC ("2026-03-01T02:00:00Z"), as Go formats a UTC time.
HCUDP_EXPORT StatusOr<std::string> FormatNodeLock(std::chrono::system_clock::time_point time,
                                                  std::string_view pod_namespace,
                                                  std::string_view pod_name);
// Exactly three comma fields; the time is RFC3339 (offset Z or ±hh:mm,
// optional fraction); namespace and name non-empty.
HCUDP_EXPORT StatusOr<NodeLock> ParseNodeLock(std::string_view value);
// True only when both namespace and name are equal (never a substring test:
// pod "a" does not hold "ab"'s lock, nor "a" in another namespace).
HCUDP_EXPORT bool NodeLockHeldBy(const NodeLock& lock, std::string_view pod_namespace,
                                 std::string_view pod_name);

}  // namespace hcudp::hami

#endif  // HCUDP_HAMI_NODE_LOCK_H_
