// The host-wide vHCU lock (hcudp/vhcu_lock.h).
#include "hcudp/vhcu_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <memory>
#include <utility>

#include "hcudp/backend.h"
#include "hcudp/clock.h"
#include "hcudp_internal/file_util.h"
#include "hcudp_internal/host_fs.h"

namespace hcudp {
namespace {

constexpr std::chrono::milliseconds kPollInterval{20};
constexpr size_t kMaxHolderText = 300;

// Holds per thread: lock path -> depth.
thread_local std::map<std::string, int> t_depth;

std::string Parent(const std::string& path) { return path.substr(0, path.find_last_of('/')); }

// "pid 123 (hcuctl vhcu create --card 0 ...)"
std::string SelfDescription() {
  StatusOr<std::string> read = file_util::ReadFile("/proc/self/cmdline");
  std::string raw = read.ok() ? std::move(read).value() : std::string();
  while (!raw.empty() && raw.back() == '\0') raw.pop_back();
  for (char& c : raw) {
    if (c == '\0' || c == '\n') c = ' ';
  }
  if (raw.size() > kMaxHolderText) raw = raw.substr(0, kMaxHolderText) + "...";
  return "pid " + std::to_string(::getpid()) + " (" + (raw.empty() ? "unknown command" : raw) + ")";
}

std::string ReadHolder(int fd) {
  char buf[kMaxHolderText + 64];
  ssize_t n = ::pread(fd, buf, sizeof(buf) - 1, 0);
  std::string text = n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text.empty() ? "a process that has not written its name yet" : text;
}

}  // namespace

std::string VhcuLockPath(const std::string& host_root) {
  return internal::HostFs(host_root).VhcuLockFile();
}

// One hold of the lock: the file descriptor that holds the flock, or a
// nested hold of a thread that already has it (fd -1).
class VhcuHostLock::Hold {
 public:
  Hold(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  ~Hold() {
    auto it = t_depth.find(path_);
    if (it != t_depth.end() && --it->second <= 0) t_depth.erase(it);
    if (fd_ >= 0) {
      if (::ftruncate(fd_, 0) != 0) {
        // A stale name is harmless: it is read only while the lock is held.
      }
      ::flock(fd_, LOCK_UN);
      ::close(fd_);
    }
  }
  Hold(const Hold&) = delete;
  Hold& operator=(const Hold&) = delete;

 private:
  const std::string path_;
  const int fd_;
};

StatusOr<VhcuHostLock> VhcuHostLock::Acquire(
    const std::string& host_root, std::chrono::milliseconds timeout,
    const std::function<void(const std::string& holder)>& on_wait) {
  Clock& clock = Clock::Real();  // see the header: the holder lets go in real time
  std::string path = VhcuLockPath(host_root);
  auto nested = t_depth.find(path);
  if (nested != t_depth.end() && nested->second > 0) {
    ++nested->second;
    return VhcuHostLock(std::make_unique<Hold>(path, -1));
  }
  HCUDP_RETURN_IF_ERROR(
      file_util::MakeDirs(Parent(path), 0755, file_util::Durability::kSyncFileAndDirectory));
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    return UnavailableError("cannot open the vHCU lock " + path + ": " + std::strerror(errno));
  }
  const Clock::TimePoint deadline = clock.Now() + timeout;
  bool told = false;
  while (true) {
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) break;
    const int err = errno;
    if (err == EINTR) continue;
    if (err != EWOULDBLOCK) {
      ::close(fd);
      return UnavailableError("cannot lock " + path + ": " + std::strerror(err));
    }
    const std::string holder = ReadHolder(fd);
    if (!told && on_wait) on_wait(holder);
    told = true;
    const Clock::TimePoint now = clock.Now();
    if (now >= deadline) {
      ::close(fd);
      return UnavailableError("the vHCU lock " + path + " is held by " + holder +
                              "; gave up after " + std::to_string(timeout.count()) + " ms");
    }
    // Waiting to take the lock; nothing of ours is held here.
    clock.SleepUntil(std::min(deadline, now + kPollInterval));
  }
  const std::string me = SelfDescription() + "\n";
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, me.data(), me.size(), 0) < 0) {
    // Only the holder's name is lost; the lock itself is held.
  }
  t_depth[path] = 1;
  return VhcuHostLock(std::make_unique<Hold>(path, fd));
}

VhcuHostLock::VhcuHostLock(std::unique_ptr<Hold> hold) : hold_(std::move(hold)) {}
VhcuHostLock::VhcuHostLock(VhcuHostLock&& other) noexcept = default;
VhcuHostLock& VhcuHostLock::operator=(VhcuHostLock&& other) noexcept = default;
VhcuHostLock::~VhcuHostLock() = default;

}  // namespace hcudp
