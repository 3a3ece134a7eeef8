#include "hcudp/doctor.h"

#include <dirent.h>

#include <algorithm>
#include <cctype>
#include <vector>

#include "doctor/checks.h"

namespace hcudp {

std::string_view CheckStatusName(CheckStatus status) {
  switch (status) {
    case CheckStatus::kOk:
      return "ok";
    case CheckStatus::kWarn:
      return "warn";
    case CheckStatus::kFail:
      return "fail";
  }
  return "fail";
}

namespace {

std::vector<long> LeadingNumbers(std::string_view v) {
  std::vector<long> parts;
  size_t i = 0;
  while (i < v.size() && !std::isdigit(static_cast<unsigned char>(v[i]))) ++i;
  while (i < v.size() && std::isdigit(static_cast<unsigned char>(v[i]))) {
    long n = 0;
    while (i < v.size() && std::isdigit(static_cast<unsigned char>(v[i]))) {
      n = n * 10 + (v[i] - '0');
      if (n > 1000000000) n = 1000000000;
      ++i;
    }
    parts.push_back(n);
    if (i + 1 < v.size() && v[i] == '.' && std::isdigit(static_cast<unsigned char>(v[i + 1]))) {
      ++i;
    } else {
      break;
    }
  }
  return parts;
}

}  // namespace

bool VersionAtLeast(std::string_view version, std::string_view minimum) {
  std::vector<long> have = LeadingNumbers(version);
  std::vector<long> want = LeadingNumbers(minimum);
  if (have.empty()) return false;
  const size_t n = std::max(have.size(), want.size());
  have.resize(n, 0);
  want.resize(n, 0);
  return have >= want;
}

std::vector<DoctorCheck> RunDoctor(const DoctorOptions& options) {
  const internal::HostFs fs(options.host_root);
  std::vector<DoctorCheck> checks;
  checks.push_back(doctor::CheckDriverLive(fs));
  checks.push_back(doctor::CheckDriverVersion(fs));
  checks.push_back(doctor::CheckDeviceNode(fs, std::string(internal::host_path::kDevKfd), "dev-kfd",
                                           "the compute device every HIP program opens"));
  checks.push_back(doctor::CheckDeviceNode(fs, std::string(internal::host_path::kDevMkfd),
                                           "dev-mkfd", "the management device libhydmi opens"));
  checks.push_back(doctor::CheckDriNodes(fs));
  doctor::VendorProbe probe = doctor::CheckVendorLibraries(options, fs);
  checks.push_back(probe.check);
  checks.push_back(probe.dmi);
  checks.push_back(doctor::CheckHySmiVersion(options, fs));
  checks.push_back(doctor::CheckDtkVersion(options, fs));
  checks.push_back(doctor::CheckKubeletPluginDir(options, fs));
  checks.push_back(doctor::CheckKubeletSocket(options, fs));
  checks.push_back(doctor::CheckPluginSockets(options, fs));
  checks.push_back(doctor::CheckMigConsistency(options, fs, probe.mig_mode));
  return checks;
}

namespace doctor {

DoctorCheck Ok(std::string name, std::string detail) {
  return DoctorCheck{std::move(name), CheckStatus::kOk, std::move(detail), ""};
}
DoctorCheck Warn(std::string name, std::string detail, std::string fix) {
  return DoctorCheck{std::move(name), CheckStatus::kWarn, std::move(detail), std::move(fix)};
}
DoctorCheck Fail(std::string name, std::string detail, std::string fix) {
  return DoctorCheck{std::move(name), CheckStatus::kFail, std::move(detail), std::move(fix)};
}

std::vector<std::string> ListDir(const std::string& path) {
  std::vector<std::string> names;
  if (DIR* d = opendir(path.c_str())) {
    while (dirent* e = readdir(d)) {
      const std::string n = e->d_name;
      if (n != "." && n != "..") names.push_back(n);
    }
    closedir(d);
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string FirstDottedVersion(const std::string& text) {
  for (size_t i = 0; i < text.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(text[i]))) continue;
    if (i > 0 && (std::isalnum(static_cast<unsigned char>(text[i - 1])))) continue;
    size_t j = i;
    bool dotted = false;
    while (j < text.size() && (std::isdigit(static_cast<unsigned char>(text[j])) ||
                               (text[j] == '.' && j + 1 < text.size() &&
                                std::isdigit(static_cast<unsigned char>(text[j + 1]))))) {
      if (text[j] == '.') dotted = true;
      ++j;
    }
    if (dotted) return text.substr(i, j - i);
    i = j;
  }
  return "";
}

}  // namespace doctor
}  // namespace hcudp
