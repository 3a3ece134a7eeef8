// hami.io/mutex.lock (§5.5).
#include "hcudp/hami/node_lock.h"

#include "hami/text_util.h"
#include "hcudp/hami/rfc3339.h"

namespace hcudp::hami {

using internal::Quote;
using internal::Split;

StatusOr<std::string> FormatNodeLock(std::chrono::system_clock::time_point time,
                                     std::string_view pod_namespace, std::string_view pod_name) {
  for (std::string_view part : {pod_namespace, pod_name}) {
    if (part.empty() || part.find(',') != std::string_view::npos) {
      return InvalidArgumentError(
          "node lock: namespace and pod name must be non-empty and "
          "free of ',', got " +
          Quote(part));
    }
  }
  return FormatRfc3339Utc(time) + "," + std::string(pod_namespace) + "," + std::string(pod_name);
}

StatusOr<NodeLock> ParseNodeLock(std::string_view value) {
  std::vector<std::string_view> f = Split(value, ',');
  if (f.size() != 3) {
    return InvalidArgumentError("node lock " + Quote(value) + " has " + std::to_string(f.size()) +
                                " comma fields, want 3 (<RFC3339>,<namespace>,<pod>)");
  }
  StatusOr<std::chrono::system_clock::time_point> time = ParseRfc3339(f[0]);
  if (!time.ok()) return time.status().WithContext("node lock");
  if (f[1].empty()) return InvalidArgumentError("node lock " + Quote(value) + ": empty namespace");
  if (f[2].empty()) return InvalidArgumentError("node lock " + Quote(value) + ": empty pod name");
  NodeLock lock;
  lock.time = *time;
  lock.time_text = std::string(f[0]);
  lock.pod_namespace = std::string(f[1]);
  lock.pod_name = std::string(f[2]);
  return lock;
}

bool NodeLockHeldBy(const NodeLock& lock, std::string_view pod_namespace,
                    std::string_view pod_name) {
  return lock.pod_namespace == pod_namespace && lock.pod_name == pod_name;
}

}  // namespace hcudp::hami
