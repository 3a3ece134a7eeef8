#include "hcudp_internal/file_util.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>

namespace hcudp::file_util {
namespace {

Status ErrnoError(const std::string& what, const std::string& path, int err) {
  std::string message = what + " " + path + ": " + std::strerror(err);
  if (err == ENOENT) return NotFoundError(message);
  if (err == EACCES || err == EPERM) return PermissionDeniedError(message);
  return InternalError(message);
}

// Per-process sequence of temp names; with the pid it makes them unique.
std::atomic<uint64_t> g_temp_counter{0};

std::string TempPath(const std::string& path, uint64_t n) {
  const size_t slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "" : path.substr(0, slash + 1);
  const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  return dir + "." + base + "." + std::to_string(::getpid()) + "." + std::to_string(n) +
         std::string(kTempSuffix);
}

Status WriteAll(int fd, const std::string& path, std::string_view data) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoError("write", path, errno);
    done += static_cast<size_t>(n);
  }
  return OkStatus();
}

// Writes, sets the mode, fsyncs (when asked) and closes `fd` (always).
Status FinishFile(int fd, const std::string& path, std::string_view data, mode_t mode, bool sync) {
  Status st = WriteAll(fd, path, data);
  if (st.ok() && ::fchmod(fd, mode) != 0) st = ErrnoError("chmod", path, errno);
  if (st.ok() && sync && ::fsync(fd) != 0) st = ErrnoError("fsync", path, errno);
  if (::close(fd) != 0 && st.ok()) st = ErrnoError("close", path, errno);
  return st;
}

Status NotRegular(const std::string& path, mode_t mode) {
  const char* what = S_ISFIFO(mode)                   ? "a FIFO"
                     : S_ISDIR(mode)                  ? "a directory"
                     : S_ISLNK(mode)                  ? "a symbolic link"
                     : S_ISCHR(mode) || S_ISBLK(mode) ? "a device"
                     : S_ISSOCK(mode)                 ? "a socket"
                                                      : "of an unknown type";
  return FailedPreconditionError(path + ": " + what + ", not a regular file");
}

Status TooLarge(const std::string& path, size_t max_bytes) {
  return InvalidArgumentError(path + ": larger than " + std::to_string(max_bytes) + " bytes");
}

}  // namespace

std::string ParentDir(const std::string& path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

Status SyncDirectory(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return ErrnoError("open directory", dir, errno);
  int rc = ::fsync(fd);
  int err = errno;
  ::close(fd);
  if (rc != 0) return ErrnoError("fsync directory", dir, err);
  return OkStatus();
}

StatusOr<std::string> ReadFile(const std::string& path, size_t max_bytes) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoError("open", path, errno);
  std::string content;
  char buf[8192];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ::close(fd);
      return ErrnoError("read", path, err);
    }
    if (n == 0) break;
    content.append(buf, static_cast<size_t>(n));
    if (content.size() > max_bytes) {
      ::close(fd);
      return InvalidArgumentError(path + ": larger than " + std::to_string(max_bytes) + " bytes");
    }
  }
  ::close(fd);
  return content;
}

StatusOr<std::string> ReadRegularFile(const std::string& path, size_t max_bytes) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return ErrnoError("stat", path, errno);
  if (!S_ISREG(st.st_mode)) return NotRegular(path, st.st_mode);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
  if (fd < 0 && errno == ELOOP) return NotRegular(path, S_IFLNK);
  if (fd < 0) return ErrnoError("open", path, errno);
  Status problem;
  if (::fstat(fd, &st) != 0) {
    problem = ErrnoError("stat", path, errno);
  } else if (!S_ISREG(st.st_mode)) {
    problem = NotRegular(path, st.st_mode);
  } else if (static_cast<uint64_t>(st.st_size) > max_bytes) {
    problem = TooLarge(path, max_bytes);
  }
  std::string content;
  char buf[8192];
  while (problem.ok()) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) problem = ErrnoError("read", path, errno);
    if (n <= 0) break;
    content.append(buf, static_cast<size_t>(n));
    if (content.size() > max_bytes) problem = TooLarge(path, max_bytes);  // grew since fstat
  }
  ::close(fd);
  if (!problem.ok()) return problem;
  return content;
}

Status WriteFileAtomic(const std::string& path, std::string_view data, mode_t mode,
                       Durability durability) {
  std::string tmp;
  int fd = -1;
  // A name that exists (a crash leftover of a process with our pid, or
  // something planted) is skipped: O_EXCL never opens it, O_NOFOLLOW never
  // follows it.
  for (int attempt = 0; fd < 0; ++attempt) {
    tmp = TempPath(path, g_temp_counter.fetch_add(1));
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd < 0 && (errno != EEXIST || attempt >= 100)) return ErrnoError("create", tmp, errno);
  }
  Status st = FinishFile(fd, tmp, data, mode, durability != Durability::kNoSync);
  if (st.ok() && ::rename(tmp.c_str(), path.c_str()) != 0)
    st = ErrnoError("rename to", path, errno);
  if (!st.ok()) {
    ::unlink(tmp.c_str());
    return st;
  }
  if (durability == Durability::kSyncFileAndDirectory) return SyncDirectory(ParentDir(path));
  return OkStatus();
}

Status WriteFileInPlace(const std::string& path, std::string_view data, mode_t mode,
                        Durability durability) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, mode);
  if (fd < 0) return ErrnoError("create", path, errno);
  HCUDP_RETURN_IF_ERROR(FinishFile(fd, path, data, mode, durability != Durability::kNoSync));
  if (durability == Durability::kSyncFileAndDirectory) return SyncDirectory(ParentDir(path));
  return OkStatus();
}

Status MakeDirs(const std::string& path, mode_t mode, Durability durability) {
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return OkStatus();
    return FailedPreconditionError(path + " exists and is not a directory");
  }
  const std::string parent = ParentDir(path);
  if (path.empty()) return InvalidArgumentError("MakeDirs: empty path");
  if (parent != path) HCUDP_RETURN_IF_ERROR(MakeDirs(parent, mode, durability));
  if (::mkdir(path.c_str(), mode) != 0) {
    if (errno != EEXIST) return ErrnoError("mkdir", path, errno);
    // Made by someone else meanwhile, or a symbolic link stat() cannot
    // follow (its target is missing): check once, never loop.
    if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return OkStatus();
    return FailedPreconditionError(path +
                                   " exists and is not a directory (a dangling symbolic link?)");
  }
  if (::chmod(path.c_str(), mode) != 0) return ErrnoError("chmod", path, errno);
  if (durability == Durability::kSyncFileAndDirectory) return SyncDirectory(parent);
  return OkStatus();
}

Status RemoveFile(const std::string& path, Durability durability) {
  if (::unlink(path.c_str()) != 0) {
    return errno == ENOENT ? OkStatus() : ErrnoError("remove", path, errno);
  }
  if (durability == Durability::kSyncFileAndDirectory) return SyncDirectory(ParentDir(path));
  return OkStatus();
}

StatusOr<std::vector<std::string>> ListFileNames(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) {
    if (errno == ENOENT) return names;
    return ErrnoError("list", dir, errno);
  }
  while (struct dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    struct stat st;
    if (::stat((dir + "/" + name).c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
      names.push_back(name);
    }
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

std::string NextTempPathForTesting(const std::string& path) {
  return TempPath(path, g_temp_counter.load());
}

}  // namespace hcudp::file_util
