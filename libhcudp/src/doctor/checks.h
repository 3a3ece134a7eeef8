// The individual doctor checks, one function each, in the order RunDoctor
// runs them. Each returns a complete DoctorCheck. Node files are read through
// `fs`, the HostFs RunDoctor makes once from DoctorOptions::host_root.
#ifndef HCUDP_DOCTOR_CHECKS_H_
#define HCUDP_DOCTOR_CHECKS_H_

#include <optional>
#include <string>
#include <vector>

#include "hcudp/doctor.h"
#include "hcudp_internal/host_fs.h"

namespace hcudp::doctor {

DoctorCheck CheckDriverLive(const internal::HostFs& fs);
DoctorCheck CheckDriverVersion(const internal::HostFs& fs);
DoctorCheck CheckDeviceNode(const internal::HostFs& fs, const std::string& path,
                            const std::string& name, const std::string& why);
DoctorCheck CheckDriNodes(const internal::HostFs& fs);

// Loads the vendor libraries once; the MIG check reuses what it learned.
struct VendorProbe {
  DoctorCheck check;
  // "dmi": libhydmi answers (it needs the hymgr service and /dev/mkfd,
  // and initialises once per process).
  DoctorCheck dmi;
  std::optional<bool> mig_mode;  // nvmlGetSystemMigMode, when it answered
};
// The hyhal runtime and the DTK are read under the host-root here
// (--hyhal-path as a host path), unlike DlopenVendorLib, which loads from
// --hyhal-path as given: kept as it was.
VendorProbe CheckVendorLibraries(const DoctorOptions& o, const internal::HostFs& fs);
DoctorCheck CheckHySmiVersion(const DoctorOptions& o, const internal::HostFs& fs);
DoctorCheck CheckDtkVersion(const DoctorOptions& o, const internal::HostFs& fs);

DoctorCheck CheckKubeletPluginDir(const DoctorOptions& o, const internal::HostFs& fs);
DoctorCheck CheckKubeletSocket(const DoctorOptions& o, const internal::HostFs& fs);
DoctorCheck CheckPluginSockets(const DoctorOptions& o, const internal::HostFs& fs);
DoctorCheck CheckMigConsistency(const DoctorOptions& o, const internal::HostFs& fs,
                                std::optional<bool> mig_mode);

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
