#include "hcudp_internal/fd_poller.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "hcudp_internal/log.h"

namespace hcudp {

FdPoller::FdPoller(int fd, std::function<void()> on_readable)
    : fd_(fd), on_readable_(std::move(on_readable)) {}

FdPoller::~FdPoller() {
  Stop();
  if (stop_fd_ >= 0) ::close(stop_fd_);
}

Status FdPoller::Start() {
  if (fd_ < 0 || thread_.joinable()) return OkStatus();
  stop_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (stop_fd_ < 0) return InternalError(std::string("eventfd: ") + std::strerror(errno));
  thread_ = std::thread([this] { Run(); });
  return OkStatus();
}

void FdPoller::Stop() {
  if (!thread_.joinable()) return;
  uint64_t one = 1;
  if (::write(stop_fd_, &one, sizeof one) < 0) PLOG(WARNING) << "wake fd poller";
  thread_.join();
}

void FdPoller::Run() {
  for (;;) {
    // Blocks until an event or Stop(): an event wait, not a schedule.
    pollfd fds[2] = {{stop_fd_, POLLIN, 0}, {fd_, POLLIN, 0}};
    int n = ::poll(fds, 2, -1);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      PLOG(ERROR) << "poll";
      return;
    }
    if (fds[0].revents != 0) return;
    if (fds[1].revents & POLLIN) {
      on_readable_();
    } else if (fds[1].revents != 0) {
      LOG(ERROR) << "fd " << fd_ << " failed (poll revents " << fds[1].revents << "); not watched";
      return;
    }
  }
}

}  // namespace hcudp
