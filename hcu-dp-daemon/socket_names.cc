#include "socket_names.h"

#include <dirent.h>
#include <glog/logging.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>

namespace hcudp::daemon {
namespace {

constexpr std::string_view kPrefix = "hygon.com_";
constexpr std::string_view kSuffix = ".sock";

// True when connect() is refused: nobody listens (or the file is no socket).
bool IsStale(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) return false;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  int rc = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  int err = errno;
  ::close(fd);
  return rc != 0 && err == ECONNREFUSED;
}

}  // namespace

std::string InstanceId() {
  static const std::string id = [] {
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                  std::chrono::system_clock::now().time_since_epoch())
                  .count();
    char buf[64];
    std::snprintf(buf, sizeof buf, "%d-%llx", static_cast<int>(::getpid()),
                  static_cast<unsigned long long>(ms));
    return std::string(buf);
  }();
  return id;
}

std::string SocketFileName(std::string_view last_name, std::string_view instance) {
  return std::string(kPrefix) + std::string(last_name) + "@" + std::string(instance) +
         std::string(kSuffix);
}

std::optional<std::string> LastNameFromSocketFile(std::string_view file_name) {
  if (file_name.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
  size_t at = file_name.find('@');
  if (at == std::string_view::npos || at == kPrefix.size()) return std::nullopt;
  if (file_name.size() < kSuffix.size() ||
      file_name.substr(file_name.size() - kSuffix.size()) != kSuffix) {
    return std::nullopt;
  }
  return std::string(file_name.substr(kPrefix.size(), at - kPrefix.size()));
}

std::string JoinPath(const std::string& dir, const std::string& name) {
  if (!dir.empty() && dir.back() == '/') return dir + name;
  return dir + "/" + name;
}

int RemoveStaleSockets(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return 0;
  int removed = 0;
  while (dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (!LastNameFromSocketFile(name)) continue;
    std::string path = JoinPath(dir, name);
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0 || !S_ISSOCK(st.st_mode)) continue;
    if (!IsStale(path)) continue;
    if (::unlink(path.c_str()) == 0) {
      ++removed;
      LOG(INFO) << "removed stale socket " << path;
    }
  }
  ::closedir(d);
  return removed;
}

}  // namespace hcudp::daemon
