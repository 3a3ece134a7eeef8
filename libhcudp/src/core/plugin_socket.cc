#include "hcudp/plugin_socket.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>

#include "core/fnv1a.h"
#include "hcudp_internal/file_util.h"

namespace hcudp {
namespace {

constexpr std::string_view kLegacySuffix = ".sock";

bool IsTagChar(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || c == '-'; }

}  // namespace

std::string InstanceTag(int64_t pid, uint64_t start_ticks) {
  static constexpr char kDigits[] = "0123456789abcdefghijklmnopqrstuv";
  uint64_t h = Fnv1a64(std::to_string(pid) + ":" + std::to_string(start_ticks));
  std::string tag(kInstanceTagLength, '0');
  for (size_t i = 0; i < kInstanceTagLength; ++i) {
    tag[i] = kDigits[h & 31];
    h >>= 5;
  }
  return tag;
}

StatusOr<uint64_t> ProcessStartTicks(int64_t pid) {
  const std::string path = "/proc/" + std::to_string(pid) + "/stat";
  StatusOr<std::string> text = file_util::ReadFile(path);
  if (!text.ok() || text->empty()) return NotFoundError(path + ": cannot be read");
  const std::string line = text->substr(0, text->find('\n'));
  // "pid (comm) state ppid ..." — comm may hold spaces and ')', so fields
  // are counted from the last ')'. starttime is field 22; field 3 is the
  // first after the ')'.
  size_t close = line.rfind(')');
  if (close == std::string::npos) return InternalError(path + ": no ')' in the stat line");
  std::istringstream fields(line.substr(close + 1));
  std::string field;
  for (int i = 3; i <= 22; ++i) {
    if (!(fields >> field)) return InternalError(path + ": fewer than 22 fields");
  }
  char* end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(field.c_str(), &end, 10);
  if (errno != 0 || end == field.c_str() || *end != '\0') {
    return InternalError(path + ": starttime \"" + field + "\" is not a number");
  }
  return static_cast<uint64_t>(v);
}

std::string PluginSocketName(std::string_view last_name, std::string_view tag) {
  return std::string(kPluginSocketPrefix) + std::string(last_name) + "@" + std::string(tag);
}

std::optional<PluginSocketParts> ParsePluginSocketName(std::string_view name) {
  if (name.substr(0, kPluginSocketPrefix.size()) != kPluginSocketPrefix) return std::nullopt;
  name.remove_prefix(kPluginSocketPrefix.size());
  size_t at = name.find('@');
  if (at == std::string_view::npos || at == 0) return std::nullopt;
  std::string_view tag = name.substr(at + 1);
  if (tag.size() > kLegacySuffix.size() &&
      tag.substr(tag.size() - kLegacySuffix.size()) == kLegacySuffix) {
    tag.remove_suffix(kLegacySuffix.size());
  }
  if (tag.empty()) return std::nullopt;
  for (char c : tag) {
    if (!IsTagChar(c)) return std::nullopt;
  }
  return PluginSocketParts{std::string(name.substr(0, at)), std::string(tag)};
}

SocketProbe ProbeUnixSocket(const std::string& path, std::chrono::milliseconds timeout,
                            std::string* why) {
  auto unknown = [why](std::string reason) {
    if (why != nullptr) *why = std::move(reason);
    return SocketProbe::kUnknown;
  };
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) return unknown("path longer than 107 bytes");
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return unknown(std::string("socket: ") + std::strerror(errno));
  int rc = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  int err = rc == 0 ? 0 : errno;
  if (err == EINPROGRESS) {
    // Not what Linux does for unix sockets today, but allowed: wait for the
    // outcome, never longer than the deadline.
    pollfd p{fd, POLLOUT, 0};
    int n;
    do {
      n = ::poll(&p, 1, static_cast<int>(timeout.count()));
    } while (n < 0 && errno == EINTR);
    if (n <= 0) {
      ::close(fd);
      return unknown("no answer within " + std::to_string(timeout.count()) + " ms");
    }
    socklen_t len = sizeof err;
    if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
  }
  ::close(fd);
  if (err == 0) return SocketProbe::kLive;
  if (err == ECONNREFUSED || err == ENOTSOCK) return SocketProbe::kStale;
  if (err == EAGAIN) return unknown("a listener that accepts nothing (backlog full)");
  return unknown(std::string("connect: ") + std::strerror(err));
}

}  // namespace hcudp
