#include "hcudp_internal/socket_dir.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "hcudp/plugin_socket.h"
#include "hcudp_internal/file_util.h"
#include "hcudp_internal/log.h"

namespace hcudp {

std::string JoinPath(const std::string& dir, const std::string& name) {
  if (!dir.empty() && dir.back() == '/') return dir + name;
  return dir + "/" + name;
}

Status PrepareSocketDir(const std::string& dir, std::string_view flag_view) {
  const std::string flag(flag_view);
  if (dir.empty()) return InvalidArgumentError(flag + ": empty");
  Status made = file_util::MakeDirs(dir, 0750);
  if (!made.ok()) return InvalidArgumentError(flag + ": " + made.message());
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) {
    return InvalidArgumentError(flag + ": " + dir + ": " + std::strerror(errno));
  }
  if (!S_ISDIR(st.st_mode)) return InvalidArgumentError(flag + ": " + dir + ": not a directory");
  if (::access(dir.c_str(), W_OK | X_OK) != 0) {
    return InvalidArgumentError(flag + ": " + dir +
                                ": cannot create sockets here: " + std::strerror(errno));
  }
  return OkStatus();
}

Status CheckSocketPath(const std::string& path, std::string_view flag) {
  if (path.size() <= kMaxUnixSocketPath) return OkStatus();
  return InvalidArgumentError(
      std::string(flag) + ": the socket path " + path + " is " + std::to_string(path.size()) +
      " bytes, over the " + std::to_string(kMaxUnixSocketPath) +
      "-byte limit of unix sockets (a shorter " + std::string(flag) + " fits)");
}

std::string InstanceId() {
  static const std::string id = [] {
    const int64_t pid = ::getpid();
    auto ticks = ProcessStartTicks(pid);
    if (ticks.ok()) return InstanceTag(pid, *ticks);
    // No /proc: the tag stays unique per process start, but hcuctl cannot
    // match it to this process.
    LOG(WARNING) << ticks.status().ToString() << "; socket names use the wall clock instead";
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                  std::chrono::system_clock::now().time_since_epoch())
                  .count();
    return InstanceTag(pid, static_cast<uint64_t>(ms));
  }();
  return id;
}

int RemoveDeadSockets(const std::string& dir,
                      const std::function<bool(const std::string&)>& matches, std::string_view what,
                      const std::function<void(const std::string& path)>& on_live) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return 0;
  int removed = 0;
  while (dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (!matches(name)) continue;
    const std::string path = JoinPath(dir, name);
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0 || !S_ISSOCK(st.st_mode)) continue;
    std::string why;
    switch (ProbeUnixSocket(path, kStaleProbeTimeout, &why)) {
      case SocketProbe::kLive:
        if (on_live) on_live(path);
        break;
      case SocketProbe::kUnknown:
        LOG(WARNING) << "leaving " << path << " alone: " << why;
        break;
      case SocketProbe::kStale:
        if (::unlink(path.c_str()) == 0) {
          ++removed;
          LOG(INFO) << "removed the " << what << " " << path;
        }
        break;
    }
  }
  ::closedir(d);
  return removed;
}

}  // namespace hcudp
