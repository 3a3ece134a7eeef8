// The unix-socket directories the daemon serves in (kubelet's device-plugin,
// plugins and plugins_registry directories), for both its kubelet sides: a
// directory made and checked as a flag's value, socket paths checked
// against the unix limit, the sockets a crashed instance left swept, and
// this process's instance tag that keeps an old and a new instance's socket
// names apart (hcudp/plugin_socket.h).
#ifndef HCUDP_INTERNAL_SOCKET_DIR_H_
#define HCUDP_INTERNAL_SOCKET_DIR_H_

#include <chrono>
#include <functional>
#include <string>
#include <string_view>

#include "hcudp/status.h"

namespace hcudp {

// dir + "/" + name, without doubling the slash.
std::string JoinPath(const std::string& dir, const std::string& name);

// Creates `dir` if needed (0750) and checks that sockets can be made there;
// InvalidArgument naming `flag` otherwise.
Status PrepareSocketDir(const std::string& dir, std::string_view flag);

// InvalidArgument naming `flag` when `path` cannot be a unix socket path
// (longer than hcudp::kMaxUnixSocketPath bytes).
Status CheckSocketPath(const std::string& path, std::string_view flag);

// This process's instance tag (hcudp::InstanceTag of its pid and start
// time), fixed for the process.
std::string InstanceId();

// How long a sweep waits for one socket's verdict.
inline constexpr std::chrono::milliseconds kStaleProbeTimeout{200};

// Removes the socket files in `dir` whose name `matches` and that nobody
// listens on (connect() refused), logging each with `what` ("stale socket").
// A live socket is never touched (`on_live`, if set, is told its path), and
// neither is one that cannot be judged at once (a listener whose backlog is
// full: a frozen instance); that one is logged. Never blocks on a socket.
// Returns the count removed.
int RemoveDeadSockets(const std::string& dir,
                      const std::function<bool(const std::string&)>& matches, std::string_view what,
                      const std::function<void(const std::string& path)>& on_live = nullptr);

}  // namespace hcudp

#endif  // HCUDP_INTERNAL_SOCKET_DIR_H_
