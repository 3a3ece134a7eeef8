#include "logging.h"

#include <gflags/gflags.h>
#include <glog/logging.h>

namespace hcudp::daemon {

void ApplyLogFlags(int log_level, LogSeverity severity) {
  FLAGS_logtostderr = true;
  FLAGS_alsologtostderr = false;
  FLAGS_stderrthreshold = 0;
  FLAGS_colorlogtostderr = false;
  switch (severity) {
    case LogSeverity::kInfo:
      FLAGS_minloglevel = google::GLOG_INFO;
      FLAGS_v = log_level;
      break;
    case LogSeverity::kWarning:
      FLAGS_minloglevel = google::GLOG_WARNING;
      FLAGS_v = 0;
      break;
    case LogSeverity::kError:
      FLAGS_minloglevel = google::GLOG_ERROR;
      FLAGS_v = 0;
      break;
  }
}

void InitLogging(const char* argv0, int log_level, LogSeverity severity) {
  ApplyLogFlags(log_level, severity);
  google::InitGoogleLogging(argv0);
}

}  // namespace hcudp::daemon
