#include "backend/dri.h"

#include "backend/node_files.h"
#include "hcudp/backend.h"

namespace hcudp {
namespace {

bool StartsWith(const std::string& s, std::string_view prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

// The drm directory of `bdf` under the first matching module, or "".
std::string FindDrmDir(const internal::HostFs& fs, const std::string& bdf) {
  const std::string modules = fs.SysModuleDir();
  auto names = node_files::ListDir(modules);
  if (!names.ok()) return "";
  for (const std::string& module : *names) {
    std::string driver = "pci:";
    driver += module;
    std::string drm = node_files::JoinPath({modules, module, "drivers", driver, bdf, "drm"});
    if (node_files::IsDirectory(drm)) return drm;
  }
  return "";
}

}  // namespace

DriLookup FindDriNodes(const internal::HostFs& fs, const std::string& bdf) {
  DriLookup result;
  std::string drm = FindDrmDir(fs, bdf);
  if (drm.empty()) {
    result.error = "no DRM directory for " + bdf + ": searched " +
                   fs.Path(internal::host_path::DriverModuleFile("*", "drivers/pci:*/" + bdf + "/drm")) +
                   " (module name must equal the driver name)";
    return result;
  }
  auto entries = node_files::ListDir(drm);
  std::vector<std::string> missing;
  if (entries.ok()) {
    for (const std::string& entry : *entries) {
      if (!StartsWith(entry, "card") && !StartsWith(entry, "renderD")) continue;
      std::string host_path = internal::host_path::DevDri(entry);
      if (node_files::Exists(fs.Path(host_path))) {
        result.nodes.push_back(host_path);
      } else {
        missing.push_back(host_path);
      }
    }
  }
  if (result.nodes.empty()) {
    if (missing.empty()) {
      result.error = "no DRI device node for " + bdf + ": " + drm + " has no card*/renderD* entry";
    } else {
      std::string names;
      for (const std::string& m : missing) names += (names.empty() ? "" : ", ") + m;
      result.error = "no DRI device node for " + bdf + ": " + drm + " names " + names +
                     " but none exists under host-root " + fs.root();
    }
  }
  return result;
}

}  // namespace hcudp
