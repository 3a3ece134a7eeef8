// RunDoctor: checks a node's prerequisites for the plugin and explains each
// result in one line with a one-line fix (`hcuctl doctor`). Every path is read
// under options.host_root, so a test points it at a rendered tree.
#ifndef HCUDP_DOCTOR_H_
#define HCUDP_DOCTOR_H_

#include <string>
#include <string_view>
#include <vector>

#include "hcudp/export.h"
#include "hcudp/options.h"

namespace hcudp {

enum class CheckStatus { kOk, kWarn, kFail };

// "ok", "warn", "fail".
HCUDP_EXPORT std::string_view CheckStatusName(CheckStatus status);

struct DoctorCheck {
  std::string name;  // stable, e.g. "driver-live", "dev-kfd", "vendor-libraries"
  CheckStatus status = CheckStatus::kOk;
  std::string detail;  // what was found
  std::string fix;     // one line; empty when status is kOk
};

struct DoctorOptions {
  // Prefix for every node path. Default "/".
  std::string host_root = "/";
  // Vendor runtime (lib/, bin/hy-smi). Default /opt/hyhal.
  std::string hyhal_path = "/opt/hyhal";
  // kubelet's device-plugin directory (host path). Default as the daemon's.
  std::string device_plugin_path = "/var/lib/kubelet/device-plugins/";
  // DTK install whose version is checked (host path). Default /opt/dtk.
  std::string dtk_path = "/opt/dtk";
  // The strategy the plugin runs with: MIG consistency is judged against it.
  Strategy strategy = Strategy::kMixed;
  // hy-smi is killed after this long. Default 10 s.
  int tool_timeout_ms = 10000;
};

// Runs every check; never fails as a whole (a check that cannot run is a
// fail or warn with the reason). The order is stable:
//   driver-live, driver-version, dev-kfd, dev-mkfd, dri-nodes,
//   vendor-libraries, hy-smi-version, dtk-version, kubelet-plugin-dir,
//   kubelet-socket, plugin-sockets, mig-consistency.
HCUDP_EXPORT std::vector<DoctorCheck> RunDoctor(const DoctorOptions& options);

// "6.3.27-V1.2.5" >= "6.2.26"? Compares the leading dotted numbers; false
// when `version` has none.
HCUDP_EXPORT bool VersionAtLeast(std::string_view version, std::string_view minimum);

}  // namespace hcudp

#endif  // HCUDP_DOCTOR_H_
