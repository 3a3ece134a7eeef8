// The individual doctor checks, one function each, in the order RunDoctor
// runs them. Each returns a complete DoctorCheck.
#ifndef HCUDP_DOCTOR_CHECKS_H_
#define HCUDP_DOCTOR_CHECKS_H_

#include <optional>
#include <string>
#include <vector>

#include "hcudp/doctor.h"

namespace hcudp::doctor {

DoctorCheck CheckDriverLive(const DoctorOptions& o);
DoctorCheck CheckDriverVersion(const DoctorOptions& o);
DoctorCheck CheckDeviceNode(const DoctorOptions& o, const std::string& path,
                            const std::string& name, const std::string& why);
DoctorCheck CheckDriNodes(const DoctorOptions& o);

// Loads the vendor libraries once; the MIG check reuses what it learned.
struct VendorProbe {
  DoctorCheck check;
  // "dmi": libhydmi answers (it needs the hymgr service and /dev/mkfd,
  // and initialises once per process).
  DoctorCheck dmi;
  std::optional<bool> mig_mode;  // nvmlGetSystemMigMode, when it answered
};
VendorProbe CheckVendorLibraries(const DoctorOptions& o);
DoctorCheck CheckHySmiVersion(const DoctorOptions& o);
DoctorCheck CheckDtkVersion(const DoctorOptions& o);

DoctorCheck CheckKubeletPluginDir(const DoctorOptions& o);
DoctorCheck CheckKubeletSocket(const DoctorOptions& o);
DoctorCheck CheckPluginSockets(const DoctorOptions& o);
DoctorCheck CheckMigConsistency(const DoctorOptions& o, std::optional<bool> mig_mode);

// Helpers.
DoctorCheck Ok(std::string name, std::string detail);
DoctorCheck Warn(std::string name, std::string detail, std::string fix);
DoctorCheck Fail(std::string name, std::string detail, std::string fix);
// Entry names of a directory, sorted, without "." and ".."; empty when it
// cannot be read.
std::vector<std::string> ListDir(const std::string& path);
// The first "N.N[.N...]" in `text`, or empty.
std::string FirstDottedVersion(const std::string& text);

}  // namespace hcudp::doctor

#endif  // HCUDP_DOCTOR_CHECKS_H_
