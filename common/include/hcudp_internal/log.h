// LOG(INFO|WARNING|ERROR), VLOG(n), PLOG(...) and LOG_EVERY_N(..., n) for the
// product's code: glog's macros and line format, written through
// hcudp/logging.h. glog kept a 30 KiB message buffer in every thread's
// static TLS, which every thread of the daemon paid for whether it logged or
// not (0.7 MiB across DRA mode's 24 threads; BENCHMARKS.md, "Footprint").
// A line is formatted on the logging thread's stack and heap, and only when
// it is kept.
#ifndef HCUDP_INTERNAL_LOG_H_
#define HCUDP_INTERNAL_LOG_H_

#include <atomic>
#include <cerrno>
#include <sstream>

#include "hcudp/logging.h"

namespace hcudp::log_internal {

// One line being written: the stream collects it, the destructor writes it.
class HCUDP_EXPORT Message {
 public:
  Message(const char* file, int line, LogSeverity severity, int errno_value = -1)
      : file_(file), line_(line), severity_(severity), errno_(errno_value) {}
  Message(const Message&) = delete;
  Message& operator=(const Message&) = delete;
  ~Message() { Finish(); }

  std::ostream& stream() { return stream_; }

 private:
  void Finish();

  const char* file_;
  int line_;
  LogSeverity severity_;
  int errno_;  // PLOG: the errno to name; -1 none
  std::ostringstream stream_;
};

// Makes `cond ? (void)0 : Voidify() & stream << ...` one void expression.
struct Voidify {
  void operator&(std::ostream&) {}
};

}  // namespace hcudp::log_internal

#define HCUDP_LOG_SEVERITY_INFO ::hcudp::LogSeverity::kInfo
#define HCUDP_LOG_SEVERITY_WARNING ::hcudp::LogSeverity::kWarning
#define HCUDP_LOG_SEVERITY_ERROR ::hcudp::LogSeverity::kError

#define HCUDP_LOG_WITH(cond, severity, errno_value)      \
  !(cond) ? (void)0                                      \
          : ::hcudp::log_internal::Voidify() &           \
                ::hcudp::log_internal::Message(__FILE__, __LINE__, severity, errno_value).stream()

#define LOG(sev) \
  HCUDP_LOG_WITH(::hcudp::LogEnabled(HCUDP_LOG_SEVERITY_##sev), HCUDP_LOG_SEVERITY_##sev, -1)
#define VLOG(level) \
  HCUDP_LOG_WITH(::hcudp::VerboseLogEnabled(level), ::hcudp::LogSeverity::kInfo, -1)
// errno is read before the line is formatted.
#define PLOG(sev) \
  HCUDP_LOG_WITH(::hcudp::LogEnabled(HCUDP_LOG_SEVERITY_##sev), HCUDP_LOG_SEVERITY_##sev, errno)
// The 1st, (n+1)th, ... time this line is reached (counted kept or not).
#define LOG_EVERY_N(sev, n)                                                             \
  HCUDP_LOG_WITH(([]() -> std::atomic<unsigned>& {                                      \
                   static std::atomic<unsigned> count{0};                               \
                   return count;                                                        \
                 }().fetch_add(1, std::memory_order_relaxed) % (n) == 0) &&             \
                     ::hcudp::LogEnabled(HCUDP_LOG_SEVERITY_##sev),                     \
                 HCUDP_LOG_SEVERITY_##sev, -1)

#endif  // HCUDP_INTERNAL_LOG_H_
