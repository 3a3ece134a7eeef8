#include "logging.h"

#include "hcudp/logging.h"

namespace hcudp::daemon {

void ApplyLogFlags(int log_level, LogSeverity severity) {
  SetLogLevel(severity, severity == LogSeverity::kInfo ? log_level : 0);
}

void InitLogging(const char* /*argv0*/, int log_level, LogSeverity severity) {
  ApplyLogFlags(log_level, severity);
}

}  // namespace hcudp::daemon
