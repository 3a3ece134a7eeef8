#include "sim/sim_files.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace hcudp::sim {
namespace fs = std::filesystem;
namespace {

constexpr std::uintmax_t kMaxSmallFileBytes = 1 << 20;

std::string ErrnoText() { return std::strerror(errno); }

}  // namespace

std::string StateDir(const std::string& host_root) { return host_root + "/.hcudp-sim"; }

Status MakeDirs(const std::string& path) {
  std::error_code ec;
  fs::create_directories(path, ec);
  if (ec) return InternalError("cannot create directory " + path + ": " + ec.message());
  return OkStatus();
}

StatusOr<std::string> ReadSmallFile(const std::string& path) {
  std::error_code ec;
  std::uintmax_t size = fs::file_size(path, ec);
  if (ec) return NotFoundError(path + ": " + ec.message());
  if (size > kMaxSmallFileBytes) return InvalidArgumentError(path + " is larger than 1 MiB");
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFoundError(path + ": cannot open");
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

Status WriteFileAtomic(const std::string& host_root, const std::string& path,
                       const std::string& content) {
  StatusOr<std::string> current = ReadSmallFile(path);
  if (current.ok() && *current == content) return OkStatus();
  HCUDP_RETURN_IF_ERROR(MakeDirs(fs::path(path).parent_path().string()));
  std::string tmp_dir = StateDir(host_root) + "/tmp";
  HCUDP_RETURN_IF_ERROR(MakeDirs(tmp_dir));
  static std::atomic<unsigned> counter{0};
  std::string tmp = tmp_dir + "/" + std::to_string(getpid()) + "-" +
                    std::to_string(counter.fetch_add(1)) + ".tmp";
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return InternalError("cannot create " + tmp + ": " + ErrnoText());
  size_t done = 0;
  while (done < content.size()) {
    ssize_t n = write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      Status s = InternalError("cannot write " + tmp + ": " + ErrnoText());
      close(fd);
      unlink(tmp.c_str());
      return s;
    }
    done += static_cast<size_t>(n);
  }
  if (close(fd) != 0 || rename(tmp.c_str(), path.c_str()) != 0) {
    Status s = InternalError("cannot write " + path + ": " + ErrnoText());
    unlink(tmp.c_str());
    return s;
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

HostRootLock::HostRootLock(const std::string& host_root, std::chrono::milliseconds timeout) {
  status_ = MakeDirs(StateDir(host_root));
  if (!status_.ok()) return;
  std::string path = StateDir(host_root) + "/lock";
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
