#include "socket_names.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>

#include "hcudp/plugin_socket.h"
#include "hcudp_internal/log.h"

namespace hcudp::daemon {

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

std::string SocketFileName(std::string_view last_name, std::string_view instance) {
  return PluginSocketName(last_name, instance);
}

std::optional<std::string> LastNameFromSocketFile(std::string_view file_name) {
  auto parts = ParsePluginSocketName(file_name);
  if (!parts) return std::nullopt;
  return parts->last_name;
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
    std::string why;
    switch (ProbeUnixSocket(path, kStaleProbeTimeout, &why)) {
      case SocketProbe::kLive:
        break;
      case SocketProbe::kUnknown:
        LOG(WARNING) << "leaving " << path << " alone: " << why;
        break;
      case SocketProbe::kStale:
        if (::unlink(path.c_str()) == 0) {
          ++removed;
          LOG(INFO) << "removed stale socket " << path;
        }
        break;
    }
  }
  ::closedir(d);
  return removed;
}

}  // namespace hcudp::daemon
