// Device-plugin socket files, shared by hcu-dp-daemon (which creates them)
// and hcuctl (which finds and judges them). DESIGN.md §4.1:
//
//   hygon.com_<last-name>@<tag>
//
// The name starts with hygon.com_<last-name> (other tools match that prefix);
// '@' cannot occur in a resource name, so the resource is the text between
// "hygon.com_" and '@'. <tag> is 7 characters of [0-9a-v] derived from the
// daemon's pid and its start time (/proc/<pid>/stat), so
//   - an old and a new instance never share a path, even when both run as
//     pid 1 of their containers (kubelet-contract.md §3), and
//   - anyone in the daemon's pid namespace can tell which sockets belong to
//     a live hcu-dp-daemon (hcuctl plugins --check) without a state file.
// The tag is short on purpose: a unix socket path has at most 107 bytes, and
// microk8s's plugin directory alone takes 57. Names of earlier versions
// (hygon.com_<last-name>@<pid>-<hex ms>.sock) are still recognised.
#ifndef HCUDP_PLUGIN_SOCKET_H_
#define HCUDP_PLUGIN_SOCKET_H_

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "hcudp/export.h"
#include "hcudp/status.h"

namespace hcudp {

inline constexpr std::string_view kPluginSocketPrefix = "hygon.com_";
// sizeof(sockaddr_un::sun_path) - 1: the longest path a unix socket can have.
inline constexpr size_t kMaxUnixSocketPath = 107;
inline constexpr size_t kInstanceTagLength = 7;

// The tag of the process `pid` that started at `start_ticks` (field 22 of
// /proc/<pid>/stat, clock ticks since boot).
HCUDP_EXPORT std::string InstanceTag(int64_t pid, uint64_t start_ticks);

// Start time of `pid` in clock ticks since boot, from /proc/<pid>/stat.
HCUDP_EXPORT StatusOr<uint64_t> ProcessStartTicks(int64_t pid);

// "hygon.com_<last_name>@<tag>".
HCUDP_EXPORT std::string PluginSocketName(std::string_view last_name, std::string_view tag);

struct PluginSocketParts {
  std::string last_name;  // "hcu-share-15c-8g"
  std::string tag;        // "@"-part without a legacy ".sock": "0k3v9qa", "123-18c"
};
// Parses a name made by PluginSocketName (or an earlier version's); nullopt
// for any other file.
HCUDP_EXPORT std::optional<PluginSocketParts> ParsePluginSocketName(std::string_view file_name);

// What a non-blocking connect() to a unix socket says about its listener.
enum class SocketProbe {
  kLive,     // connected: someone listens
  kStale,    // refused: nobody listens (or not a socket)
  kUnknown,  // cannot tell in time (backlog full, path too long, ...): leave it alone
};
// Never blocks longer than `timeout`. `why` (optional) gets a reason for
// kUnknown.
HCUDP_EXPORT SocketProbe ProbeUnixSocket(const std::string& path, std::chrono::milliseconds timeout,
                                         std::string* why = nullptr);

}  // namespace hcudp

#endif  // HCUDP_PLUGIN_SOCKET_H_
