// Helpers for the bounds suites (issue 10): a listener that accepts nothing,
// directories of an exact path length, and the daemon's fd/thread counts.
#ifndef HCUDP_TEST_DAEMON_BOUNDS_BOUNDS_UTIL_H_
#define HCUDP_TEST_DAEMON_BOUNDS_BOUNDS_UTIL_H_

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

#include "fake_kubelet/daemon_process.h"

namespace hcudp::testing {

// A unix socket at `path` that listens with backlog 0 and whose backlog is
// then filled by connections nobody accepts: a frozen process. connect() to
// it blocks (or fails with EAGAIN when non-blocking).
class FrozenListener {
 public:
  explicit FrozenListener(const std::string& path);
  ~FrozenListener();
  FrozenListener(const FrozenListener&) = delete;
  FrozenListener& operator=(const FrozenListener&) = delete;
  // Stops listening (wakes anyone blocked in connect) and frees the backlog.
  void Close();

 private:
  int listen_fd_ = -1;
  std::vector<int> queued_;
};

// Creates and returns a directory under `base` whose path, with a trailing
// '/', is exactly `length` bytes (returned without the slash).
std::string MakeDirOfLength(const std::string& base, size_t length);

// Entries of /proc/<pid>/fd and /proc/<pid>/task; -1 when unreadable.
int CountFds(pid_t pid);
int CountThreads(pid_t pid);
// readlink of every /proc/<pid>/fd entry, for diagnostics.
std::string DescribeFds(pid_t pid);

// The one SIGTERM check of issue 10 item 2: SIGTERM, then the daemon must
// exit with code 0 within `limit` (5 s). Fails the test (BOOST_TEST) with the
// state's name, the time taken and the daemon's output otherwise; a daemon
// still running at the limit is SIGKILLed. Returns the time it took.
std::chrono::milliseconds CheckSigtermExit(
    DaemonProcess& daemon, const std::string& state,
    std::chrono::milliseconds limit = std::chrono::milliseconds(5000));

// Waits until `pid` blocks SIGTERM (SigBlk in /proc/<pid>/status): the
// daemon's main has started and will handle it.
bool WaitForBlockedSigterm(pid_t pid, std::chrono::milliseconds timeout);

}  // namespace hcudp::testing

#endif  // HCUDP_TEST_DAEMON_BOUNDS_BOUNDS_UTIL_H_
