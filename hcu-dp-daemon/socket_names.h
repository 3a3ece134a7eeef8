// Socket files in kubelet's device-plugin directory (DESIGN.md §4.1):
//   hygon.com_<last-name>@<instance>.sock, instance = <pid>-<start ms hex>.
// The name starts with hygon.com_<last-name> (tools match that prefix);
// '@' cannot occur in a resource name, so the resource is the text between
// "hygon.com_" and '@'. Each process instance gets its own path, so an old
// and a new daemon never share a socket (kubelet-contract.md §3).
#ifndef HCU_DP_DAEMON_SOCKET_NAMES_H_
#define HCU_DP_DAEMON_SOCKET_NAMES_H_

#include <optional>
#include <string>
#include <string_view>

namespace hcudp::daemon {

// "<pid>-<process start, unix ms, lower-case hex>", fixed for the process.
std::string InstanceId();

std::string SocketFileName(std::string_view last_name, std::string_view instance);

// "hcu-share-15c-8g" from "hygon.com_hcu-share-15c-8g@123-18c.sock".
std::optional<std::string> LastNameFromSocketFile(std::string_view file_name);

// Removes hygon.com_*@*.sock files in `dir` that no process listens on
// (connect() refused). A live socket is never touched. Returns the count.
int RemoveStaleSockets(const std::string& dir);

// dir + "/" + name, without doubling the slash.
std::string JoinPath(const std::string& dir, const std::string& name);

}  // namespace hcudp::daemon

#endif  // HCU_DP_DAEMON_SOCKET_NAMES_H_
