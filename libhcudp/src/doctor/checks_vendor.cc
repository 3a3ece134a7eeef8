// Doctor checks on the vendor runtime: libraries, hy-smi, DTK.

#include "doctor/checks.h"
#include "hcudp_internal/file_util.h"
#include "vendor/node_files.h"
#include "vendor/subprocess.h"
#include "vendor/vendor_api.h"
#include "vendor/vendor_status.h"

namespace hcudp::doctor {
namespace {


constexpr const char* kMinHySmiVersion = "1.6.0";
constexpr const char* kMinDtkVersion = "24.04";

std::string HyhalUnderRoot(const DoctorOptions& o, const internal::HostFs& fs) {
  return fs.Path(o.hyhal_path);
}

constexpr char kDmiFix[] =
    "start the hymgr service (systemctl start hymgr) and make sure /dev/mkfd exists and is "
    "mounted into the plugin pod, then restart the plugin";

DoctorCheck CheckDmi(const vendor::VendorApi& api) {
  int cards = 0;
  const Status st = vendor::FromDmi(api.dmi.get_device_count(&cards), "dmiGetDeviceCount",
                                    api.dmi.get_status_string);
  if (!st.ok()) return Fail("dmi", st.message(), kDmiFix);
  return Ok("dmi", "libhydmi answers (hymgr reachable): " + std::to_string(cards) + " card(s)");
}

}  // namespace

VendorProbe CheckVendorLibraries(const DoctorOptions& o, const internal::HostFs& fs) {
  VendorProbe probe;
  probe.dmi =
      Warn("dmi", "not checked: the vendor libraries did not load", "fix vendor-libraries first");
  const std::string lib_dir = internal::JoinUnder(HyhalUnderRoot(o, fs), "lib");
  StatusOr<std::unique_ptr<vendor::VendorApi>> api = vendor::LoadVendorApi(lib_dir);
  if (!api.ok()) {
    probe.check = Fail("vendor-libraries", api.status().message(),
                       "install the HCU driver's hyhal runtime under " + o.hyhal_path +
                           " (or pass --hyhal-path) and mount it into the plugin pod");
    return probe;
  }
  std::string detail = (*api)->rsmi_library->path() + ", " + (*api)->dmi_library->path();
  if ((*api)->mig_library != nullptr) {
    detail += ", " + (*api)->mig_library->path();
    if ((*api)->mig.get_system_mig_mode != nullptr) {
      unsigned current = 0, pending = 0;
      if ((*api)->mig.get_system_mig_mode(&current, &pending) == NVML_SUCCESS) {
        probe.mig_mode = current == NVML_DEVICE_MIG_ENABLE;
      }
    }
  }
  detail += " loaded, all required symbols present";
  probe.dmi = CheckDmi(**api);
  if ((*api)->dmi.create_vdevices == nullptr || (*api)->dmi.destroy_single_vdevice == nullptr ||
      (*api)->dmi.stop_vdevice == nullptr) {
    probe.check =
        Warn("vendor-libraries", detail + "; but libhydmi lacks the vHCU create/stop/destroy calls",
             "upgrade the HCU driver to >= 6.2.26 for dynamic vHCU");
    return probe;
  }
  probe.check = Ok("vendor-libraries", detail);
  return probe;
}

DoctorCheck CheckHySmiVersion(const DoctorOptions& o, const internal::HostFs& fs) {
  const std::string hy_smi = internal::JoinUnder(HyhalUnderRoot(o, fs), "bin/hy-smi");
  StatusOr<vendor::CommandResult> run =
      vendor::RunCommand({hy_smi, "--version"}, o.tool_timeout_ms);
  if (!run.ok()) {
    return Fail("hy-smi-version", "hy-smi not usable: " + run.status().message(),
                "install hy-smi >= " + std::string(kMinHySmiVersion) + " under " + o.hyhal_path +
                    "/bin (health checks run it)");
  }
  const std::string version = FirstDottedVersion(run->output);
  if (run->exit_code != 0 || version.empty()) {
    return Warn(
        "hy-smi-version",
        "cannot tell the hy-smi version from \"" + run->output.substr(0, 80) + "\"",
        "make sure hy-smi >= " + std::string(kMinHySmiVersion) + " (dynamic vHCU needs it)");
  }
  if (!VersionAtLeast(version, kMinHySmiVersion)) {
    return Warn(
        "hy-smi-version",
        "hy-smi " + version + " is older than " + kMinHySmiVersion + ", needed for dynamic vHCU",
        "upgrade the HCU driver/hyhal to get hy-smi >= " + std::string(kMinHySmiVersion));
  }
  return Ok("hy-smi-version", "hy-smi " + version + " (>= " + kMinHySmiVersion + ")");
}

DoctorCheck CheckDtkVersion(const DoctorOptions& o, const internal::HostFs& fs) {
  // DTK follows ROCm's layout: <dtk>/.info/version holds e.g. "24.04.2".
  const std::string path = internal::JoinUnder(fs.Path(o.dtk_path), ".info/version");
  StatusOr<std::string> text = file_util::ReadFile(path);
  const std::string version = FirstDottedVersion(text.ok() ? *text : std::string());
  if (version.empty()) {
    return Warn("dtk-version", "no DTK version at " + o.dtk_path + "/.info/version",
                "install DTK >= " + std::string(kMinDtkVersion) +
                    " if pods use dynamic vHCU (hami strategy)");
  }
  if (!VersionAtLeast(version, kMinDtkVersion)) {
    return Warn("dtk-version", "DTK " + version + " is older than " + kMinDtkVersion,
                "upgrade DTK to >= " + std::string(kMinDtkVersion) + " for dynamic vHCU");
  }
  return Ok("dtk-version", "DTK " + version + " (>= " + kMinDtkVersion + ")");
}

}  // namespace hcudp::doctor
