// The library's log. By default each line goes to stderr in glog's format
// ("I1208 00:02:33.006656 3985 file.cc:12] text"), as the daemon and hcuctl
// print it; an embedder can keep fewer lines, or take them into its own log.
#ifndef HCUDP_LOGGING_H_
#define HCUDP_LOGGING_H_

#include <functional>
#include <string_view>

#include "hcudp/export.h"
#include "hcudp/options.h"  // LogSeverity

namespace hcudp {

// One line, as the library wrote it (`message` without the prefix or the
// newline). `file` is the source file's base name.
struct LogLine {
  LogSeverity severity = LogSeverity::kInfo;
  const char* file = "";
  int line = 0;
  std::string_view message;
};

// Which lines are kept: those of `min_severity` and above, and the verbose
// (VLOG) lines of level <= `verbosity` while `min_severity` is kInfo.
// Default: kInfo, 0. Thread-safe; takes effect at once in every thread.
HCUDP_EXPORT void SetLogLevel(LogSeverity min_severity, int verbosity);

// Where kept lines go: `sink` is called on the logging thread, with no lock
// of the library's held, possibly from several threads at once. Null: stderr,
// one write(2) per line. Returns the sink it replaces.
using LogSink = std::function<void(const LogLine&)>;
HCUDP_EXPORT LogSink SetLogSink(LogSink sink);

// For the logging macros (and an embedder's own lines): whether a line of
// that severity / verbose level is kept, and writing one.
HCUDP_EXPORT bool LogEnabled(LogSeverity severity);
HCUDP_EXPORT bool VerboseLogEnabled(int level);
HCUDP_EXPORT void WriteLog(const LogLine& line);

}  // namespace hcudp

#endif  // HCUDP_LOGGING_H_
