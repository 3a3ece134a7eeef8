#include "dra/dra_sockets.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "hcudp/plugin_socket.h"
#include "hcudp_internal/log.h"
#include "hcudp_internal/socket_dir.h"

namespace hcudp::daemon::dra {
namespace {

bool IsTagChar(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'v'); }

}  // namespace

std::string RegistrationSocketName(std::string_view driver, std::string_view instance) {
  return std::string(driver) + "-" + std::string(instance) + std::string(kRegistrationSuffix);
}

bool IsRegistrationSocketOf(std::string_view name, std::string_view driver) {
  if (driver.empty() || name.size() < driver.size() + kRegistrationSuffix.size() ||
      name.substr(0, driver.size()) != driver ||
      name.substr(name.size() - kRegistrationSuffix.size()) != kRegistrationSuffix) {
    return false;
  }
  std::string_view middle =
      name.substr(driver.size(), name.size() - driver.size() - kRegistrationSuffix.size());
  if (middle.empty()) return true;  // <driver>-reg.sock
  if (middle.size() != 1 + kInstanceTagLength || middle[0] != '-') return false;
  for (char c : middle.substr(1)) {
    if (!IsTagChar(c)) return false;
  }
  return true;
}

int RemoveDeadRegistrationSockets(const std::string& dir, std::string_view driver,
                                  std::string_view own_name) {
  return RemoveDeadSockets(
      dir,
      [&](const std::string& name) {
        return name != own_name && IsRegistrationSocketOf(name, driver);
      },
      "dead registration socket (kubelet holds its endpoint until it goes)",
      [&](const std::string& path) {
        LOG(WARNING) << "another plugin of " << driver << " is registered through " << path
                     << "; leaving it alone";
      });
}

std::set<std::string> OtherRegistrationSockets(const std::string& dir, std::string_view driver,
                                               std::string_view own_name) {
  std::set<std::string> names;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return names;
  while (dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    // <driver>-reg.sock, or <driver>-<anything>-reg.sock.
    const bool loose = name.size() >= driver.size() + kRegistrationSuffix.size() &&
                       name.compare(0, driver.size(), driver) == 0 && name[driver.size()] == '-' &&
                       name.compare(name.size() - kRegistrationSuffix.size(),
                                    kRegistrationSuffix.size(), kRegistrationSuffix) == 0;
    if (name != own_name && loose) names.insert(std::move(name));
  }
  ::closedir(d);
  return names;
}

Status ClearServiceSocketPath(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return OkStatus();
    return FailedPreconditionError(path + ": " + std::strerror(errno));
  }
  if (S_ISDIR(st.st_mode)) return FailedPreconditionError(path + ": is a directory");
  if (S_ISSOCK(st.st_mode)) {
    std::string why;
    switch (ProbeUnixSocket(path, kStaleProbeTimeout, &why)) {
      case SocketProbe::kLive:
        return FailedPreconditionError(
            path + ": another process serves this socket (a second hcu-dp-daemon on this node?)");
      case SocketProbe::kUnknown:
        return FailedPreconditionError(path + ": cannot tell whether someone serves it: " + why);
      case SocketProbe::kStale:
        break;
    }
  }
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
    return FailedPreconditionError("cannot remove " + path + ": " + std::strerror(errno));
  }
  LOG(INFO) << "removed " << path << ", left by an instance that no longer runs";
  return OkStatus();
}

}  // namespace hcudp::daemon::dra
