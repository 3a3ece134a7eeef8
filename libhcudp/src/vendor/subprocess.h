// Runs a vendor tool (hy-smi) directly — fork/exec, no shell — with a
// deadline, capturing stdout and stderr together as the vendor plugin does.
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
// `timeout_ms` (it is killed and reaped). A non-zero exit is not an error
// here; the caller decides. Output beyond `max_output_bytes` is dropped.
StatusOr<CommandResult> RunCommand(const std::vector<std::string>& argv, int timeout_ms,
                                   size_t max_output_bytes = 1 << 20);

}  // namespace hcudp::vendor

#endif  // HCUDP_VENDOR_SUBPROCESS_H_
