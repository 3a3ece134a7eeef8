// Runs a vendor tool (hy-smi) directly — posix_spawn, no shell — with a
// deadline, capturing stdout and stderr together as the vendor plugin does.
//
// The child starts clean whatever the calling thread has: an empty signal
// mask and every signal at its default disposition (the daemon blocks
// SIGTERM and ignores SIGPIPE, which exec would otherwise pass on, leaving a
// tool that cannot be stopped). It runs in its own process group, so a
// timeout kills everything it started. A child that does not die even on
// SIGKILL (stuck in the kernel) is left behind with a log line, never waited
// for; it is reaped by a later call if it ever exits.
#ifndef HCUDP_VENDOR_SUBPROCESS_H_
#define HCUDP_VENDOR_SUBPROCESS_H_

#include <string>
#include <vector>

#include "hcudp/status.h"

namespace hcudp::vendor {

struct CommandResult {
  int exit_code = 0;
  std::string output;  // stdout and stderr interleaved
};

// argv[0] is an absolute path. Errors: NotFound when it does not exist,
// Internal when it cannot be started, DeadlineExceeded when it runs past
// `timeout_ms` (it is killed), Cancelled after CancelCommands(). A non-zero
// exit is not an error here; the caller decides. Output beyond
// `max_output_bytes` is dropped.
StatusOr<CommandResult> RunCommand(const std::vector<std::string>& argv, int timeout_ms,
                                   size_t max_output_bytes = 1 << 20);

// Ends every running RunCommand at once (its child is killed) and makes
// later calls return Cancelled: for a process that is shutting down.
void CancelCommands();

}  // namespace hcudp::vendor

#endif  // HCUDP_VENDOR_SUBPROCESS_H_
