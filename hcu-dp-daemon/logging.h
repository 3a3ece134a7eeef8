// Logging (hcudp/logging.h: glog's line format, to stderr only) with the
// vendor plugin's semantics: --log-level is the VLOG verbosity;
// --log-severity the minimum severity, and anything above INFO also
// silences VLOG.
#ifndef HCU_DP_DAEMON_LOGGING_H_
#define HCU_DP_DAEMON_LOGGING_H_

#include "hcudp/options.h"

namespace hcudp::daemon {

// Sets the library's log level (minimum severity, verbosity); InitLogging
// calls it.
void ApplyLogFlags(int log_level, LogSeverity severity);

// Call once, before any other thread starts.
void InitLogging(const char* argv0, int log_level, LogSeverity severity);

}  // namespace hcudp::daemon

#endif  // HCU_DP_DAEMON_LOGGING_H_
