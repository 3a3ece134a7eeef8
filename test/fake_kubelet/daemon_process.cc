#include "fake_kubelet/daemon_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

extern char** environ;

namespace hcudp::testing {

std::string ExitStatus::ToString() const {
  if (exited) return "exit code " + std::to_string(code);
  return std::string("killed by signal ") + std::to_string(signal) + " (" + strsignal(signal) + ")";
}

std::string DaemonProcess::Start(const std::vector<std::string>& argv, const std::string& log_path,
                                 const std::vector<std::string>& env,
                                 const std::vector<std::string>& unset_env) {
  if (pid_ > 0 && !status_.has_value()) return "already running";
  if (argv.empty()) return "empty argv";
  log_path_ = log_path;
  int log_fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (log_fd < 0) return "cannot open " + log_path + ": " + strerror(errno);

  // Everything the child needs is built before fork: only async-signal-safe
  // calls happen in the child.
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string entry = *e;
    std::string name = entry.substr(0, entry.find('='));
    bool unset = std::find(unset_env.begin(), unset_env.end(), name) != unset_env.end();
    for (const std::string& extra : env) {
      if (extra.substr(0, extra.find('=')) == name) unset = true;
    }
    if (!unset) env_strings.push_back(entry);
  }
  env_strings.insert(env_strings.end(), env.begin(), env.end());
  std::vector<char*> envp;
  for (std::string& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = argv;
  std::vector<char*> argvp;
  for (std::string& a : args) argvp.push_back(a.data());
  argvp.push_back(nullptr);

  pid_t pid = fork();
  if (pid < 0) {
    close(log_fd);
    return std::string("fork: ") + strerror(errno);
  }
  if (pid == 0) {
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, 0);
    dup2(log_fd, 1);
    dup2(log_fd, 2);
    // Signals blocked or ignored by the test runner must not leak into the
    // daemon: it has to see SIGTERM.
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    signal(SIGTERM, SIG_DFL);
    signal(SIGINT, SIG_DFL);
    signal(SIGPIPE, SIG_DFL);
    execve(argvp[0], argvp.data(), envp.data());
    const char msg[] = "exec failed\n";
    (void)!write(2, msg, sizeof msg - 1);
    _exit(127);
  }
  close(log_fd);
  pid_ = pid;
  status_.reset();
  return "";
}

DaemonProcess::~DaemonProcess() {
  if (pid_ > 0 && !status_.has_value()) {
    kill(pid_, SIGKILL);
    WaitForExit(std::chrono::seconds(5));
  }
}

bool DaemonProcess::TryReap() {
  if (status_.has_value()) return true;
  if (pid_ <= 0) return false;
  int wstatus = 0;
  pid_t r;
  do {
    r = waitpid(pid_, &wstatus, WNOHANG);
  } while (r < 0 && errno == EINTR);
  if (r != pid_) return false;
  ExitStatus st;
  if (WIFEXITED(wstatus)) {
    st.exited = true;
    st.code = WEXITSTATUS(wstatus);
  } else if (WIFSIGNALED(wstatus)) {
    st.signal = WTERMSIG(wstatus);
  }
  status_ = st;
  return true;
}

bool DaemonProcess::Running() { return pid_ > 0 && !TryReap(); }

bool DaemonProcess::Signal(int sig) {
  if (!Running()) return false;
  return kill(pid_, sig) == 0;
}

std::optional<ExitStatus> DaemonProcess::WaitForExit(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto pause = std::chrono::milliseconds(1);
  while (!TryReap()) {
    if (pid_ <= 0 || std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(20));
  }
  return status_;
}

ExitStatus DaemonProcess::Stop(std::chrono::milliseconds grace) {
  if (pid_ <= 0) return ExitStatus{};
  if (Running()) kill(pid_, SIGTERM);
  std::optional<ExitStatus> st = WaitForExit(grace);
  if (!st.has_value()) {
    kill(pid_, SIGKILL);
    st = WaitForExit(std::chrono::seconds(5));
  }
  return st.value_or(ExitStatus{});
}

std::string DaemonProcess::Log() const {
  std::ifstream in(log_path_, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool DaemonProcess::WaitForLog(const std::string& text, std::chrono::milliseconds timeout,
                               int count) const {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    const std::string log = Log();
    int seen = 0;
    for (size_t at = log.find(text); at != std::string::npos; at = log.find(text, at + 1)) ++seen;
    if (seen >= count) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

}  // namespace hcudp::testing
