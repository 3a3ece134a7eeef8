// Socket files in kubelet's device-plugin directory (DESIGN.md §4.1), named
// as hcudp/plugin_socket.h says: hygon.com_<last-name>@<tag>, the tag derived
// from this process's pid and start time.
#ifndef HCU_DP_DAEMON_SOCKET_NAMES_H_
#define HCU_DP_DAEMON_SOCKET_NAMES_H_

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace hcudp::daemon {

// This process's instance tag (hcudp::InstanceTag of its pid and start
// time), fixed for the process.
std::string InstanceId();

std::string SocketFileName(std::string_view last_name, std::string_view instance);

// "hcu-share-15c-8g" from "hygon.com_hcu-share-15c-8g@0k3v9qa" (or an earlier
// version's "...@123-18c.sock").
std::optional<std::string> LastNameFromSocketFile(std::string_view file_name);

// How long the start-up sweep waits for one socket's verdict.
inline constexpr std::chrono::milliseconds kStaleProbeTimeout{200};

// Removes hygon.com_*@* socket files in `dir` that nobody listens on
// (connect() refused). A live socket is never touched, and neither is one
// that cannot be judged at once (a listener whose backlog is full: a frozen
// instance); that one is logged. Never blocks on a socket. Returns the count.
int RemoveStaleSockets(const std::string& dir);

// dir + "/" + name, without doubling the slash.
std::string JoinPath(const std::string& dir, const std::string& name);

}  // namespace hcudp::daemon

#endif  // HCU_DP_DAEMON_SOCKET_NAMES_H_
