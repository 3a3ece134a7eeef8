#include "backend/pci_place.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "hcudp/backend.h"

namespace hcudp {
namespace {

bool IsHex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

// "pci" + 4 hex digits + ':' + 2 hex digits: a root complex's directory name.
bool IsRootComplexName(const std::string& name) {
  if (name.size() != 10 || name.compare(0, 3, "pci") != 0 || name[7] != ':') return false;
  for (size_t i = 3; i < name.size(); ++i) {
    if (i != 7 && !IsHex(name[i])) return false;
  }
  return true;
}

}  // namespace

PciPlace FindPciPlace(const internal::HostFs& fs, const std::string& bdf) {
  PciPlace place;
  const std::string link_dir(internal::host_path::kPciDevicesDir);
  const std::string link = fs.PciDevice(bdf);
  char buf[4096];
  ssize_t n = ::readlink(link.c_str(), buf, sizeof buf - 1);
  if (n < 0) {
    place.error = "cannot read the link " + link + ": " + std::strerror(errno);
    return place;
  }
  std::string target(buf, static_cast<size_t>(n));
  // Resolved as a host path, lexically: the link is relative on every
  // kernel ("../../../devices/..."), and following it through the process's
  // own file system would leave the host-root.
  std::filesystem::path resolved(target);
  if (resolved.is_relative()) resolved = std::filesystem::path(link_dir) / resolved;
  const std::string path = resolved.lexically_normal().string();
  const std::string devices = std::string(internal::host_path::kSysDevicesDir) + "/";
  const size_t slash = path.find('/', devices.size());
  const std::string root =
      path.compare(0, devices.size(), devices) == 0 && slash != std::string::npos
          ? path.substr(devices.size(), slash - devices.size())
          : "";
  const size_t last = path.rfind('/');
  if (!IsRootComplexName(root) || path.substr(last + 1) != bdf) {
    place.error = "the link " + link + " points at " + target +
                  ", not at /sys/devices/pci<domain>:<bus>/.../" + bdf;
    return place;
  }
  place.sysfs_dir = path;
  place.pcie_root = root;
  return place;
}

}  // namespace hcudp
