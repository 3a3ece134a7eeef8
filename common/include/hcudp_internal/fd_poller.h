// FdPoller: a thread that waits in poll(2) for file descriptors (inotify)
// and calls a handler when one is readable. It lets a loop that also keeps a
// schedule wait on an hcudp::Clock (which a test can drive) instead of in
// poll's real-time timeout: the handler drains the descriptor and wakes the
// loop's condition variable.
#ifndef HCUDP_INTERNAL_FD_POLLER_H_
#define HCUDP_INTERNAL_FD_POLLER_H_

#include <functional>
#include <thread>

#include "hcudp/status.h"

namespace hcudp {

class FdPoller {
 public:
  // `on_readable` runs on the poller thread whenever `fd` is readable; it
  // must read what is there (else it is called again at once).
  FdPoller(int fd, std::function<void()> on_readable);
  ~FdPoller();  // Stop()
  FdPoller(const FdPoller&) = delete;
  FdPoller& operator=(const FdPoller&) = delete;

  // Starts the thread; nothing happens for fd < 0.
  Status Start();
  // Wakes and joins the thread; on_readable is not called after it returns.
  void Stop();

 private:
  void Run();

  const int fd_;
  const std::function<void()> on_readable_;
  int stop_fd_ = -1;
  std::thread thread_;
};

}  // namespace hcudp

#endif  // HCUDP_INTERNAL_FD_POLLER_H_
