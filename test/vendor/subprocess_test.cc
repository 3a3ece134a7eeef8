// RunCommand: a vendor tool run with a deadline that holds whatever the tool
// does — exits, hangs, ignores SIGTERM, closes its output and lingers, or
// leaves a grandchild holding the pipe — and CancelCommands for a shutdown.
#include "vendor/subprocess.h"

#include <sys/wait.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include "testing/testutil.h"

namespace hcudp::vendor {
namespace {

using SteadyClock = std::chrono::steady_clock;
using std::chrono::milliseconds;

StatusOr<CommandResult> Sh(const std::string& script, int timeout_ms,
                           size_t max_output_bytes = 1 << 20) {
  return RunCommand({"/bin/sh", "-c", script}, timeout_ms, max_output_bytes);
}

// True once `pid` is gone or a zombie (killed, waiting for init to reap it).
bool Dead(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("State:", 0) == 0) return line.find('Z') != std::string::npos;
  }
  return true;
}

BOOST_AUTO_TEST_SUITE(RunCommandSuite)

BOOST_AUTO_TEST_CASE(CapturesStdoutAndStderrAndTheExitCode) {
  StatusOr<CommandResult> r = Sh("echo out; echo err >&2; exit 3", 5000);
  BOOST_REQUIRE_MESSAGE(r.ok(), r.status().ToString());
  BOOST_CHECK_EQUAL(r->exit_code, 3);
  BOOST_CHECK_EQUAL(r->output, "out\nerr\n");
}

BOOST_AUTO_TEST_CASE(OutputBeyondTheLimitIsDropped) {
  StatusOr<CommandResult> r = Sh("head -c 100000 /dev/zero", 5000, 1000);
  BOOST_REQUIRE_MESSAGE(r.ok(), r.status().ToString());
  BOOST_CHECK_EQUAL(r->exit_code, 0);
  BOOST_CHECK_EQUAL(r->output.size(), 1000u);
}

BOOST_AUTO_TEST_CASE(AMissingProgramIsNotFound) {
  StatusOr<CommandResult> r = RunCommand({"/nonexistent/hy-smi", "--healthcheck"}, 1000);
  BOOST_CHECK(r.status().code() == StatusCode::kNotFound);
  BOOST_CHECK(RunCommand({}, 1000).status().code() == StatusCode::kInvalidArgument);
}

// Each way a tool can outlive its deadline ends in DeadlineExceeded soon
// after the deadline, never in a wait for the tool.
BOOST_AUTO_TEST_CASE(EveryWayOfHangingEndsAtTheDeadline) {
  for (const char* script : {
           "sleep 30",                      // hangs
           "trap '' TERM; sleep 30",        // and ignores SIGTERM
           "exec >&- 2>&-; sleep 30",       // closes its output, then lingers
           "sleep 30 & echo started; wait"  // a grandchild holds the pipe
       }) {
    BOOST_TEST_CONTEXT(script) {
      const auto start = SteadyClock::now();
      StatusOr<CommandResult> r = Sh(script, 300);
      const auto took = std::chrono::duration_cast<milliseconds>(SteadyClock::now() - start);
      BOOST_CHECK(r.status().code() == StatusCode::kDeadlineExceeded);
      BOOST_CHECK_MESSAGE(r.status().message().find("killed") != std::string::npos,
                          r.status().message());
      BOOST_CHECK_GE(took.count(), 250);
      BOOST_CHECK_MESSAGE(took < milliseconds(3000), took.count() << " ms");
    }
  }
}

BOOST_AUTO_TEST_CASE(ATimeoutKillsTheWholeProcessGroup) {
  testing::TempDir dir;
  const std::string pid_file = dir.Join("grandchild");
  StatusOr<CommandResult> r = Sh("sleep 30 & echo $! > " + pid_file + "; wait", 300);
  BOOST_REQUIRE(r.status().code() == StatusCode::kDeadlineExceeded);
  const pid_t grandchild = std::stoi(testing::ReadFile(pid_file));
  const auto deadline = SteadyClock::now() + milliseconds(3000);
  while (!Dead(grandchild) && SteadyClock::now() < deadline)
    std::this_thread::sleep_for(milliseconds(20));
  BOOST_CHECK_MESSAGE(Dead(grandchild), "grandchild " << grandchild << " still runs");
}

BOOST_AUTO_TEST_CASE(AChildThatClosesItsOutputEarlyIsStillWaitedForItsExit) {
  StatusOr<CommandResult> r = Sh("exec >&- 2>&-; sleep 0.2; exit 4", 5000);
  BOOST_REQUIRE_MESSAGE(r.ok(), r.status().ToString());
  BOOST_CHECK_EQUAL(r->exit_code, 4);
}

// CancelCommands is for a process that is shutting down and cannot be
// undone, so it runs in a child process of the test.
BOOST_AUTO_TEST_CASE(CancelEndsARunningCommandAtOnceAndRefusesLaterOnes) {
  const pid_t child = fork();
  BOOST_REQUIRE(child >= 0);
  if (child == 0) {
    int failures = 0;
    std::thread canceller([] {
      std::this_thread::sleep_for(milliseconds(200));
      CancelCommands();
    });
    const auto start = SteadyClock::now();
    StatusOr<CommandResult> running = Sh("trap '' TERM; sleep 30", 20000);
    const auto took = SteadyClock::now() - start;
    canceller.join();
    if (running.status().code() != StatusCode::kCancelled) failures |= 1;
    if (took > milliseconds(3000)) failures |= 2;
    if (Sh("exit 0", 5000).status().code() != StatusCode::kCancelled) failures |= 4;
    _exit(failures);
  }
  int status = 0;
  BOOST_REQUIRE_EQUAL(waitpid(child, &status, 0), child);
  BOOST_REQUIRE(WIFEXITED(status));
  // 1: not Cancelled; 2: took longer than 3 s; 4: a later call ran.
  BOOST_CHECK_EQUAL(WEXITSTATUS(status), 0);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp::vendor
