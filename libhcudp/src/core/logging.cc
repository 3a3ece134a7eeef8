// The library's log (hcudp/logging.h) and the macros' line writer
// (hcudp_internal/log.h).
#include "hcudp/logging.h"

#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <memory>
#include <string>

#include "hcudp_internal/log.h"
#include "hcudp_internal/thread_annotations.h"

namespace hcudp {
namespace {

std::atomic<int> g_min_severity{static_cast<int>(LogSeverity::kInfo)};
std::atomic<int> g_verbosity{0};

// The sink, swapped whole: a writer takes a reference under the lock and
// calls it without the lock, so a sink may log, and SetLogSink never waits
// for a line being written. Never destroyed: threads may log while the
// process exits.
struct SinkSlot {
  Mutex mu;
  std::shared_ptr<const LogSink> sink HCUDP_GUARDED_BY(mu);  // null: stderr
};

SinkSlot& Slot() {
  static SinkSlot* const slot = new SinkSlot;
  return *slot;
}

std::shared_ptr<const LogSink> CurrentSink() {
  SinkSlot& slot = Slot();
  MutexLock lock(slot.mu);
  return slot.sink;
}

char SeverityLetter(LogSeverity severity) {
  switch (severity) {
    case LogSeverity::kInfo:
      return 'I';
    case LogSeverity::kWarning:
      return 'W';
    case LogSeverity::kError:
      return 'E';
  }
  return 'I';
}

// glog's prefix: "I1208 00:02:33.006656 3985 file.cc:12] ".
std::string Prefix(const LogLine& line) {
  timeval now{};
  gettimeofday(&now, nullptr);
  tm local{};
  localtime_r(&now.tv_sec, &local);
  char buf[96];
  std::snprintf(buf, sizeof buf, "%c%02d%02d %02d:%02d:%02d.%06ld %5ld %s:%d] ",
                SeverityLetter(line.severity), local.tm_mon + 1, local.tm_mday, local.tm_hour,
                local.tm_min, local.tm_sec, static_cast<long>(now.tv_usec),  // NOLINT(runtime/int)
                static_cast<long>(syscall(SYS_gettid)), line.file, line.line);  // NOLINT
  return buf;
}

void WriteToStderr(const LogLine& line) {
  std::string text = Prefix(line);
  text.append(line.message.data(), line.message.size());
  text.push_back('\n');
  // One write per line, so that lines of several threads never interleave;
  // a short write (a full pipe) is finished, an error is dropped.
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(STDERR_FILENO, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

const char* BaseName(const char* path) {
  const char* slash = std::strrchr(path, '/');
  return slash == nullptr ? path : slash + 1;
}

}  // namespace

void SetLogLevel(LogSeverity min_severity, int verbosity) {
  g_min_severity.store(static_cast<int>(min_severity), std::memory_order_relaxed);
  g_verbosity.store(verbosity, std::memory_order_relaxed);
}

LogSink SetLogSink(LogSink sink) {
  auto next = sink ? std::make_shared<const LogSink>(std::move(sink)) : nullptr;
  std::shared_ptr<const LogSink> previous;
  {
    SinkSlot& slot = Slot();
    MutexLock lock(slot.mu);
    previous = std::move(slot.sink);
    slot.sink = std::move(next);
  }
  return previous ? *previous : LogSink();
}

bool LogEnabled(LogSeverity severity) {
  return static_cast<int>(severity) >= g_min_severity.load(std::memory_order_relaxed);
}

bool VerboseLogEnabled(int level) {
  return g_min_severity.load(std::memory_order_relaxed) == static_cast<int>(LogSeverity::kInfo) &&
         level <= g_verbosity.load(std::memory_order_relaxed);
}

void WriteLog(const LogLine& line) {
  const std::shared_ptr<const LogSink> sink = CurrentSink();
  if (sink) {
    (*sink)(line);
  } else {
    WriteToStderr(line);
  }
}

namespace log_internal {

void Message::Finish() {
  if (errno_ >= 0) {
    char buf[128];
    // The GNU strerror_r: returns the text, in buf or static.
    const char* text = strerror_r(errno_, buf, sizeof buf);
    stream_ << ": " << text << " [" << errno_ << "]";
  }
  const std::string message = stream_.str();
  LogLine line;
  line.severity = severity_;
  line.file = BaseName(file_);
  line.line = line_;
  line.message = message;
  WriteLog(line);
}

}  // namespace log_internal
}  // namespace hcudp
