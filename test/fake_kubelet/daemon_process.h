// A child process under test (the hcu-dp-daemon binary): started with
// fork/exec, stdout and stderr captured to a file for diagnostics, stopped
// with signals, reaped with a timeout. The destructor SIGKILLs and reaps a
// child that is still running, so a failing test never leaks a daemon.
#ifndef HCUDP_TEST_FAKE_KUBELET_DAEMON_PROCESS_H_
#define HCUDP_TEST_FAKE_KUBELET_DAEMON_PROCESS_H_

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace hcudp::testing {

// How a child ended.
struct ExitStatus {
  bool exited = false;  // exited normally; `code` is valid
  int code = -1;
  int signal = 0;       // the terminating signal when !exited
  std::string ToString() const;
};

class DaemonProcess {
 public:
  // `argv[0]` is the binary path. The child's environment is this process's
  // minus the variables listed in `unset_env`, plus `env` ("K=V"). Output
  // (stdout and stderr) goes to `log_path`, truncated. Stdin is /dev/null.
  // Returns "" or why the process could not be started. A process that has
  // ended and been reaped may be started again.
  std::string Start(const std::vector<std::string>& argv, const std::string& log_path,
                    const std::vector<std::string>& env = {},
                    const std::vector<std::string>& unset_env = {});

  DaemonProcess() = default;
  ~DaemonProcess();
  DaemonProcess(const DaemonProcess&) = delete;
  DaemonProcess& operator=(const DaemonProcess&) = delete;

  pid_t pid() const { return pid_; }
  // True while started and not yet reaped (a zombie counts as running until
  // WaitForExit or Running reaps it).
  bool Running();
  bool Signal(int signal);
  // Waits up to `timeout` for the child to end and reaps it; nullopt on
  // timeout (the child keeps running). Returns the cached status once reaped.
  std::optional<ExitStatus> WaitForExit(std::chrono::milliseconds timeout);
  // SIGTERM, wait `grace`, then SIGKILL if needed; returns how it ended.
  ExitStatus Stop(std::chrono::milliseconds grace = std::chrono::seconds(5));
  // The captured output so far.
  std::string Log() const;
  // Waits until the output holds `text` at least `count` times; false at
  // the deadline.
  bool WaitForLog(const std::string& text, std::chrono::milliseconds timeout, int count = 1) const;
  const std::string& log_path() const { return log_path_; }

 private:
  bool TryReap();

  pid_t pid_ = -1;
  std::optional<ExitStatus> status_;
  std::string log_path_;
};

}  // namespace hcudp::testing

#endif  // HCUDP_TEST_FAKE_KUBELET_DAEMON_PROCESS_H_
