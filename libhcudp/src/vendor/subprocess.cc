#include "vendor/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

namespace hcudp::vendor {

StatusOr<CommandResult> RunCommand(const std::vector<std::string>& argv, int timeout_ms,
                                   size_t max_output_bytes) {
  if (argv.empty()) return InvalidArgumentError("RunCommand: empty argv");
  if (access(argv[0].c_str(), F_OK) != 0) return NotFoundError(argv[0] + ": not found");
  if (access(argv[0].c_str(), X_OK) != 0) return InternalError(argv[0] + ": not executable");

  // Everything the child needs is prepared before fork: between fork and
  // exec only async-signal-safe calls are allowed.
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);

  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return InternalError(std::string("pipe: ") + strerror(errno));
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return InternalError(std::string("fork: ") + strerror(errno));
  }
  if (pid == 0) {
    const int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, 0);
    dup2(fds[1], 1);
    dup2(fds[1], 2);
    execv(args[0], args.data());
    _exit(127);
  }
  close(fds[1]);

  CommandResult result;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  bool timed_out = false;
  char buf[4096];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    const int r = poll(&p, 1, static_cast<int>(left.count()));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      timed_out = r == 0;
      break;
    }
    const ssize_t n = read(fds[0], buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // EOF: the child closed its output
    if (result.output.size() < max_output_bytes) {
      result.output.append(
          buf, std::min(static_cast<size_t>(n), max_output_bytes - result.output.size()));
    }
  }
  close(fds[0]);
  if (timed_out) kill(pid, SIGKILL);
  int wstatus = 0;
  while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) {
    return DeadlineExceededError(argv[0] + ": no answer within " + std::to_string(timeout_ms) +
                                 " ms, killed");
  }
  if (WIFEXITED(wstatus)) {
    result.exit_code = WEXITSTATUS(wstatus);
    if (result.exit_code == 127 && result.output.empty()) {
      return InternalError(argv[0] + ": cannot be executed");
    }
  } else {
    result.exit_code = -1;
  }
  return result;
}

}  // namespace hcudp::vendor
