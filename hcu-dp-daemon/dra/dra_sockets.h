// Socket files of the DRA mode (DESIGN.md §9, dra.md §1.1):
//   <registry-dir>/<driver>-<tag>-reg.sock   registration, per instance: the
//                                            tag is InstanceId()'s (pid and
//                                            start time), so an old and a new
//                                            instance never share it;
//   <plugins-dir>/<driver>/dra.sock          DRAPlugin and DRAResourceHealth,
//                                            a path private to the driver.
// kubelet refuses a second registration of an endpoint it still holds, so a
// new instance first removes what a crashed one left: its dead dra.sock and
// its dead registration socket (which still holds that endpoint).
#ifndef HCU_DP_DAEMON_DRA_DRA_SOCKETS_H_
#define HCU_DP_DAEMON_DRA_DRA_SOCKETS_H_

#include <set>
#include <string>
#include <string_view>

#include "hcudp/status.h"

namespace hcudp::daemon::dra {

inline constexpr std::string_view kServiceSocketName = "dra.sock";
inline constexpr std::string_view kRegistrationSuffix = "-reg.sock";

// "<driver>-<instance>-reg.sock".
std::string RegistrationSocketName(std::string_view driver, std::string_view instance);

// Whether `file_name` is a registration socket name of `driver`: ours
// ("<driver>-<7-char tag>-reg.sock") or the Kubernetes helper's and Hygon's
// driver's "<driver>-reg.sock".
bool IsRegistrationSocketOf(std::string_view file_name, std::string_view driver);

// Removes the registration sockets of `driver` in `dir` that nobody listens
// on, except `own_name`. A live one is left alone and logged (another plugin
// of the same driver). Returns how many were removed.
int RemoveDeadRegistrationSockets(const std::string& dir, std::string_view driver,
                                  std::string_view own_name);

// The files in `dir` other than `own_name` that may be registration sockets
// of `driver`: "<driver>-reg.sock" or "<driver>-<anything>-reg.sock" (also
// other tools' and the helper's rolling-update names), live or dead. Only
// used to notice one going away, never to remove anything.
std::set<std::string> OtherRegistrationSockets(const std::string& dir, std::string_view driver,
                                               std::string_view own_name);

// Makes `path` free for our service socket: nothing there is fine; a socket
// nobody listens on (a crashed predecessor's) or any other non-directory
// file is removed; FailedPrecondition when something listens there (another
// instance still serving) or it cannot be judged in time.
Status ClearServiceSocketPath(const std::string& path);

}  // namespace hcudp::daemon::dra

#endif  // HCU_DP_DAEMON_DRA_DRA_SOCKETS_H_
