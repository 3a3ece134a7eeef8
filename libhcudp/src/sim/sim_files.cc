#include "sim/sim_files.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <thread>

#include "hcudp_internal/file_util.h"

namespace hcudp::sim {
namespace fs = std::filesystem;
namespace {

constexpr mode_t kDirMode = 0755;
constexpr mode_t kFileMode = 0644;

std::string ErrnoText() { return std::strerror(errno); }

std::atomic<uint64_t> g_link_counter{0};  // temporary link names of this process

}  // namespace

std::string StateDir(const internal::HostFs& fs) { return fs.SimStateDir(); }

Status MakeDirs(const std::string& path) { return file_util::MakeDirs(path, kDirMode); }

Status WriteFileIfChanged(const std::string& path, const std::string& content) {
  StatusOr<std::string> current = file_util::ReadFile(path);
  if (current.ok() && *current == content) return OkStatus();
  HCUDP_RETURN_IF_ERROR(MakeDirs(file_util::ParentDir(path)));
  return file_util::WriteFileAtomic(path, content, kFileMode, file_util::Durability::kNoSync);
}

Status WriteSymlinkIfChanged(const std::string& path, const std::string& target) {
  char buf[4096];
  ssize_t n = ::readlink(path.c_str(), buf, sizeof buf);
  if (n >= 0 && std::string(buf, static_cast<size_t>(n)) == target) return OkStatus();
  HCUDP_RETURN_IF_ERROR(MakeDirs(file_util::ParentDir(path)));
  // Made beside it and renamed over it: a reader sees the old link or the new.
  // The temporary name is this process's and this call's own: the daemon and
  // hcuctl render one host-root at once, and a shared name let one remove or
  // rename the other's link.
  const std::string dir = file_util::ParentDir(path);
  const std::string base = path.substr(path.find_last_of('/') + 1);
  std::string tmp;
  for (int attempt = 0;; ++attempt) {
    tmp = dir + "/." + base + "." + std::to_string(::getpid()) + "." +
          std::to_string(g_link_counter.fetch_add(1)) + ".link.tmp";
    if (::symlink(target.c_str(), tmp.c_str()) == 0) break;
    // A leftover of a dead process with our pid is skipped, never removed.
    if (errno != EEXIST || attempt >= 100) {
      return InternalError("cannot make the link " + tmp + ": " + ErrnoText());
    }
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    Status st = InternalError("cannot rename " + tmp + " to " + path + ": " + ErrnoText());
    ::unlink(tmp.c_str());
    return st;
  }
  return OkStatus();
}

std::vector<std::string> ListDir(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    names.push_back(it->path().filename().string());
  }
  return names;
}

Status RemoveAll(const std::string& path) {
  std::error_code ec;
  fs::remove_all(path, ec);
  if (ec) return InternalError("cannot remove " + path + ": " + ec.message());
  return OkStatus();
}

HostRootLock::HostRootLock(const internal::HostFs& fs, std::chrono::milliseconds timeout) {
  status_ = MakeDirs(StateDir(fs));
  if (!status_.ok()) return;
  std::string path = StateDir(fs) + "/lock";
  fd_ = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    status_ = InternalError("cannot open lock " + path + ": " + ErrnoText());
    return;
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EINTR) continue;
    if (errno != EWOULDBLOCK) {
      status_ = InternalError("cannot lock " + path + ": " + ErrnoText());
    } else if (std::chrono::steady_clock::now() >= deadline) {
      status_ =
          UnavailableError("the sim's host-root lock " + path + " is held by another " +
                           "process; gave up after " + std::to_string(timeout.count()) + " ms");
    } else {
      // Waiting to take the lock; nothing is held here.
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      continue;
    }
    close(fd_);
    fd_ = -1;
    return;
  }
}

HostRootLock::~HostRootLock() {
  if (fd_ >= 0) close(fd_);  // releases the lock
}

}  // namespace hcudp::sim
