// File-system helpers for the simulated node's host-root. Writes are atomic
// (temp file in <host_root>/.hcudp-sim/tmp, then rename), so a reader never
// sees a half-written file or a stray temp name in a directory it scans.
#ifndef HCUDP_SRC_SIM_SIM_FILES_H_
#define HCUDP_SRC_SIM_SIM_FILES_H_

#include <chrono>
#include <string>
#include <vector>

#include "hcudp/status.h"

namespace hcudp::sim {

// <host_root>/.hcudp-sim: the sim's own bookkeeping, outside the node tree.
std::string StateDir(const std::string& host_root);

// Writes `content` to `path` (parents created) unless it already holds it.
Status WriteFileAtomic(const std::string& host_root, const std::string& path,
                       const std::string& content);
Status MakeDirs(const std::string& path);
// Reads a whole (small) file; NotFound when it does not exist.
StatusOr<std::string> ReadSmallFile(const std::string& path);
// Names of the entries of `dir` (empty when it does not exist).
std::vector<std::string> ListDir(const std::string& dir);
// Removes `path` recursively; OK when it did not exist.
Status RemoveAll(const std::string& path);

// An exclusive flock on <host_root>/.hcudp-sim/lock for the lifetime of the
// object: serialises vHCU changes and the first render across processes
// (hcuctl and the daemon share a host-root). Check status() after building:
// Unavailable, naming the lock, when another holder keeps it for `timeout`
// (a stopped hcuctl must not freeze the daemon).
class HostRootLock {
 public:
  static constexpr std::chrono::milliseconds kDefaultTimeout{10000};
  explicit HostRootLock(const std::string& host_root,
                        std::chrono::milliseconds timeout = kDefaultTimeout);
  ~HostRootLock();
  HostRootLock(const HostRootLock&) = delete;
  HostRootLock& operator=(const HostRootLock&) = delete;
  const Status& status() const { return status_; }

 private:
  int fd_ = -1;
  Status status_;
};

}  // namespace hcudp::sim

#endif  // HCUDP_SRC_SIM_SIM_FILES_H_
