#include "vendor/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/eventfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "hcudp_internal/log.h"
#include "hcudp_internal/thread_annotations.h"

extern char** environ;

namespace hcudp::vendor {
namespace {

using Clock = std::chrono::steady_clock;

// After SIGKILL, how long a child gets to be reaped before it is left.
constexpr std::chrono::milliseconds kReapGrace{1000};

std::atomic<bool> g_cancelled{false};

// Readable once CancelCommands() ran; every RunCommand polls it.
int CancelFd() {
  static const int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  return fd;
}

Mutex g_unreaped_mu;  // a leaf
std::vector<pid_t> g_unreaped HCUDP_GUARDED_BY(g_unreaped_mu);

// Reaps what earlier calls had to leave, without waiting.
void ReapLeftovers() {
  MutexLock lock(g_unreaped_mu);
  g_unreaped.erase(std::remove_if(g_unreaped.begin(), g_unreaped.end(),
                                  [](pid_t pid) {
                                    int st = 0;
                                    const pid_t r = waitpid(pid, &st, WNOHANG);
                                    return r == pid || (r < 0 && errno == ECHILD);
                                  }),
                   g_unreaped.end());
}

// waitpid with a deadline; true when reaped (status in *wstatus).
bool WaitUntil(pid_t pid, Clock::time_point deadline, int* wstatus) {
  for (;;) {
    const pid_t r = waitpid(pid, wstatus, WNOHANG);
    if (r == pid) return true;
    if (r < 0 && errno != EINTR) return errno == ECHILD;
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

// Kills the child's process group and reaps it within kReapGrace, else
// leaves it (logged) for a later call to reap.
void KillAndReap(pid_t pid, const std::string& what, int* wstatus) {
  kill(-pid, SIGKILL);
  kill(pid, SIGKILL);
  if (WaitUntil(pid, Clock::now() + kReapGrace, wstatus)) return;
  LOG(WARNING) << what << " (pid " << pid << ") did not exit " << kReapGrace.count()
               << " ms after SIGKILL; leaving it unreaped";
  MutexLock lock(g_unreaped_mu);
  g_unreaped.push_back(pid);
}

}  // namespace

void CancelCommands() {
  g_cancelled = true;
  const uint64_t one = 1;
  if (write(CancelFd(), &one, sizeof(one)) < 0) {
    // The flag alone still stops calls that have not started yet.
  }
}

StatusOr<CommandResult> RunCommand(const std::vector<std::string>& argv, int timeout_ms,
                                   size_t max_output_bytes) {
  if (argv.empty()) return InvalidArgumentError("RunCommand: empty argv");
  if (g_cancelled) return Status(StatusCode::kCancelled, argv[0] + ": not run, shutting down");
  if (access(argv[0].c_str(), F_OK) != 0) return NotFoundError(argv[0] + ": not found");
  if (access(argv[0].c_str(), X_OK) != 0) return InternalError(argv[0] + ": not executable");
  ReapLeftovers();

  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);

  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return InternalError(std::string("pipe: ") + strerror(errno));

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
  pid_t pid = -1;
  const int spawned = posix_spawn(&pid, args[0], &actions, &attr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  close(fds[1]);
  if (spawned != 0) {
    close(fds[0]);
    return InternalError(argv[0] + ": cannot be started: " + strerror(spawned));
  }

  CommandResult result;
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  bool timed_out = false;
  bool cancelled = false;
  char buf[4096];
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd p[2] = {{fds[0], POLLIN, 0}, {CancelFd(), POLLIN, 0}};
    const int r = poll(p, CancelFd() >= 0 ? 2 : 1, static_cast<int>(left.count()));
    if (r < 0 && errno == EINTR) continue;
    if (g_cancelled) {
      cancelled = true;
      break;
    }
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
  int wstatus = 0;
  // Output closed is not exit: the child still has until the deadline.
  if (!timed_out && !cancelled && !WaitUntil(pid, deadline, &wstatus)) timed_out = true;
  if (timed_out || cancelled) {
    KillAndReap(pid, argv[0], &wstatus);
    if (cancelled) return Status(StatusCode::kCancelled, argv[0] + ": stopped, shutting down");
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
