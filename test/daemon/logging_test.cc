// The daemon's --log-level/--log-severity, as the vendor plugin reads them,
// and the line format: glog's, which operators' log pipelines parse.
#include "logging.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <cerrno>
#include <regex>
#include <string>
#include <vector>

#include "hcudp/logging.h"
#include "hcudp_internal/log.h"

namespace hcudp::daemon {
namespace {

// Takes the library's lines (not stderr) while it lives.
class Captured {
 public:
  Captured()
      : previous_(SetLogSink([this](const LogLine& line) {
          lines_.push_back(std::string(1, "IWE"[static_cast<int>(line.severity)]) + " " +
                           line.file + " " + std::string(line.message));
        })) {}
  ~Captured() {
    SetLogSink(previous_);
    SetLogLevel(LogSeverity::kInfo, 0);
  }
  const std::vector<std::string>& lines() const { return lines_; }

 private:
  std::vector<std::string> lines_;  // the test logs from one thread only
  LogSink previous_;
};

void LogOneOfEach() {
  LOG(INFO) << "info";
  LOG(WARNING) << "warning";
  LOG(ERROR) << "error";
  VLOG(1) << "v1";
  VLOG(5) << "v5";
}

BOOST_AUTO_TEST_SUITE(logging)

BOOST_AUTO_TEST_CASE(severity_and_level_keep_what_the_vendor_plugin_keeps) {
  struct Case {
    int level;
    LogSeverity severity;
    std::vector<std::string> want;
  };
  const Case cases[] = {
      {0, LogSeverity::kInfo, {"info", "warning", "error"}},
      {2, LogSeverity::kInfo, {"info", "warning", "error", "v1"}},
      {7, LogSeverity::kInfo, {"info", "warning", "error", "v1", "v5"}},
      {5, LogSeverity::kWarning, {"warning", "error"}},  // WARNING drops VLOG too
      {5, LogSeverity::kError, {"error"}},
  };
  for (const auto& c : cases) {
    BOOST_TEST_CONTEXT("level " << c.level << " severity " << static_cast<int>(c.severity)) {
      Captured captured;
      ApplyLogFlags(c.level, c.severity);
      LogOneOfEach();
      std::vector<std::string> got;
      for (const std::string& line : captured.lines()) got.push_back(line.substr(line.rfind(' ') + 1));
      BOOST_TEST(got == c.want, boost::test_tools::per_element());
    }
  }
}

BOOST_AUTO_TEST_CASE(plog_names_errno_and_every_n_counts_per_line) {
  Captured captured;
  errno = ENOENT;
  PLOG(WARNING) << "open /etc/vdev";
  for (int i = 0; i < 7; ++i) LOG_EVERY_N(ERROR, 3) << "tick " << i;
  std::vector<std::string> want = {"W logging_test.cc open /etc/vdev: No such file or directory [2]",
                                   "E logging_test.cc tick 0", "E logging_test.cc tick 3",
                                   "E logging_test.cc tick 6"};
  BOOST_TEST(captured.lines() == want, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a_line_on_stderr_has_glogs_prefix) {
  // stderr into a pipe, one line written, stderr back.
  int fds[2];
  BOOST_REQUIRE(::pipe(fds) == 0);
  const int saved = ::dup(STDERR_FILENO);
  ::dup2(fds[1], STDERR_FILENO);
  LOG(WARNING) << "card 0000:0b:00.0 missed";
  ::dup2(saved, STDERR_FILENO);
  ::close(saved);
  ::close(fds[1]);
  char buf[512];
  const ssize_t n = ::read(fds[0], buf, sizeof buf);
  ::close(fds[0]);
  BOOST_REQUIRE(n > 0);
  const std::string line(buf, static_cast<size_t>(n));
  const std::regex glog(R"(W\d{4} \d\d:\d\d:\d\d\.\d{6} +(\d+) logging_test\.cc:\d+\] )"
                        R"(card 0000:0b:00\.0 missed\n)");
  std::smatch m;
  BOOST_TEST(std::regex_match(line, m, glog), line);
  if (!m.empty()) BOOST_TEST(std::stol(m[1]) == static_cast<long>(::syscall(SYS_gettid)));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp::daemon
