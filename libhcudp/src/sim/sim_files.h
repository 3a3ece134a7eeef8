// File-system helpers for the simulated node's host-root, on the library's
// file module (hcudp_internal/file_util.h). Writes are atomic (a hidden "*.tmp" file in
// the target's directory, then rename), so a reader never sees a
// half-written file; they are not fsync-ed (a simulated node need not
// survive a power cut).
#ifndef HCUDP_SRC_SIM_SIM_FILES_H_
#define HCUDP_SRC_SIM_SIM_FILES_H_

#include <chrono>
#include <string>
#include <vector>

#include "hcudp/status.h"
#include "hcudp_internal/host_fs.h"

namespace hcudp::sim {

// <host-root>/.hcudp-sim: the sim's own bookkeeping, outside the node tree.
std::string StateDir(const internal::HostFs& fs);

// Writes `content` to `path` (mode 0644; parents created 0755) unless it
// already holds it.
Status WriteFileIfChanged(const std::string& path, const std::string& content);
// Makes `path` a symbolic link to `target` (atomically: link beside it, then
// rename; the temporary name is unique to the process and call, so any
// number of processes may render one host-root) unless it already is one;
// `path` must not be a directory.
Status WriteSymlinkIfChanged(const std::string& path, const std::string& target);
// "mkdir -p" with mode 0755.
Status MakeDirs(const std::string& path);
// Names of the entries of `dir` (empty when it does not exist).
std::vector<std::string> ListDir(const std::string& dir);
// Removes `path` recursively; OK when it did not exist.
Status RemoveAll(const std::string& path);

// An exclusive flock on <host-root>/.hcudp-sim/lock for the lifetime of the
// object: serialises vHCU changes and the first render across processes
// (hcuctl and the daemon share a host-root). Check status() after building:
// Unavailable, naming the lock, when another holder keeps it for `timeout`
// (a stopped hcuctl must not freeze the daemon).
class HostRootLock {
 public:
  static constexpr std::chrono::milliseconds kDefaultTimeout{10000};
  explicit HostRootLock(const internal::HostFs& fs,
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
