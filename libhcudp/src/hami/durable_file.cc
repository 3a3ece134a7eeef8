#include "hami/durable_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

namespace hcudp::internal {
namespace {

Status ErrnoError(const std::string& what, const std::string& path, int err) {
  std::string message = what + " " + path + ": " + std::strerror(err);
  if (err == ENOENT) return NotFoundError(message);
  if (err == EACCES || err == EPERM) return PermissionDeniedError(message);
  return InternalError(message);
}

std::string Parent(const std::string& path) {
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

Status WriteAndSync(const std::string& path, const std::string& content, mode_t mode) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) return ErrnoError("create", path, errno);
  size_t done = 0;
  while (done < content.size()) {
    ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ::close(fd);
      return ErrnoError("write", path, err);
    }
    done += static_cast<size_t>(n);
  }
  if (::fchmod(fd, mode) != 0 || ::fsync(fd) != 0) {
    int err = errno;
    ::close(fd);
    return ErrnoError("sync", path, err);
  }
  if (::close(fd) != 0) return ErrnoError("close", path, errno);
  return OkStatus();
}

}  // namespace

Status EnsureDirectory(const std::string& dir, mode_t mode) {
  struct stat st;
  if (::stat(dir.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return OkStatus();
    return FailedPreconditionError(dir + " exists and is not a directory");
  }
  if (dir != "/" && dir != ".") HCUDP_RETURN_IF_ERROR(EnsureDirectory(Parent(dir), mode));
  if (::mkdir(dir.c_str(), mode) != 0 && errno != EEXIST) {
    return ErrnoError("mkdir", dir, errno);
  }
  ::chmod(dir.c_str(), mode);  // exact mode whatever the umask
  return SyncDirectory(Parent(dir));
}

Status WriteFileDurably(const std::string& path, const std::string& content, mode_t mode) {
  HCUDP_RETURN_IF_ERROR(WriteAndSync(path, content, mode));
  return SyncDirectory(Parent(path));
}

Status ReplaceFileAtomically(const std::string& path, const std::string& content, mode_t mode) {
  std::string tmp = path + ".tmp";
  HCUDP_RETURN_IF_ERROR(WriteAndSync(tmp, content, mode));
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    return ErrnoError("rename to", path, err);
  }
  return OkStatus();
}

Status ReplaceFileDurably(const std::string& path, const std::string& content, mode_t mode) {
  HCUDP_RETURN_IF_ERROR(ReplaceFileAtomically(path, content, mode));
  return SyncDirectory(Parent(path));
}

Status RemoveFile(const std::string& path) {
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) return ErrnoError("remove", path, errno);
  return OkStatus();
}

Status RemoveFileDurably(const std::string& path) {
  if (::unlink(path.c_str()) != 0)
    return errno == ENOENT ? OkStatus() : ErrnoError("remove", path, errno);
  return SyncDirectory(Parent(path));
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
    std::string path = dir;
    path += '/';
    path += name;
    struct stat st;
    if (::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
      names.push_back(name);
    }
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

StatusOr<std::string> ReadSmallFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoError("open", path, errno);
  std::string content;
  char buf[4096];
  while (content.size() < (1u << 20)) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ::close(fd);
      return ErrnoError("read", path, err);
    }
    if (n == 0) break;
    content.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return content;
}

bool FileExists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

}  // namespace hcudp::internal
