// Doctor checks on the kernel driver and its device nodes.
#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <vector>

#include "doctor/checks.h"
#include "vendor/node_files.h"

namespace hcudp::doctor {
namespace {

constexpr const char* kMinDriverVersion = "6.2.26";

bool Exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

bool LooksLikeBdf(const std::string& s) { return s.size() == 12 && s[4] == ':' && s[7] == ':'; }

}  // namespace

DoctorCheck CheckDriverLive(const internal::HostFs& fs) {
  std::string state;
  if (vendor::DriverModuleLive(fs, &state)) {
    return Ok("driver-live", "HCU kernel module is live");
  }
  return Fail("driver-live", "HCU kernel module (hycu/hydcu) initstate: " + state,
              "load the driver (modprobe hycu) and check dmesg; the plugin waits for \"live\"");
}

DoctorCheck CheckDriverVersion(const internal::HostFs& fs) {
  StatusOr<std::string> version = vendor::DriverModuleVersion(fs);
  if (!version.ok()) {
    return Warn("driver-version", "driver version unknown: " + version.status().message(),
                "install the HCU driver >= " + std::string(kMinDriverVersion) + " (vHCU needs it)");
  }
  if (!VersionAtLeast(*version, kMinDriverVersion)) {
    return Warn("driver-version",
                "driver " + *version + " is older than " + kMinDriverVersion +
                    ", the first with vHCU support",
                "upgrade the HCU driver to >= " + std::string(kMinDriverVersion));
  }
  return Ok("driver-version", "driver " + *version + " (>= " + kMinDriverVersion + ")");
}

DoctorCheck CheckDeviceNode(const internal::HostFs& fs, const std::string& path,
                            const std::string& name, const std::string& why) {
  if (Exists(fs.Path(path))) return Ok(name, path + " present");
  return Fail(name, path + " missing: " + why,
              "load the HCU driver and mount " + path + " into the plugin pod");
}

DoctorCheck CheckDriNodes(const internal::HostFs& fs) {
  std::vector<std::string> problems;
  int cards = 0;
  std::string module_found;
  for (const char* module : vendor::kDriverModules) {
    const std::string dir = fs.DriverModuleFile(module, std::string("drivers/pci:") + module);
    if (!Exists(dir)) continue;
    module_found = module;
    for (const std::string& bdf : ListDir(dir)) {
      if (!LooksLikeBdf(bdf)) continue;
      ++cards;
      bool card_node = false, render_node = false;
      std::string drm = dir;
      drm.append("/").append(bdf).append("/drm");
      for (const std::string& node : ListDir(drm)) {
        const bool is_card = node.rfind("card", 0) == 0;
        const bool is_render = node.rfind("renderD", 0) == 0;
        if (!is_card && !is_render) continue;
        if (!Exists(fs.DevDri(node))) {
          std::string problem = bdf;
          problem.append(": /dev/dri/").append(node).append(" missing");
          problems.push_back(std::move(problem));
        }
        card_node |= is_card;
        render_node |= is_render;
      }
      if (!card_node || !render_node) {
        problems.push_back(bdf + ": driver lists no " +
                           std::string(!card_node ? "cardN" : "renderDN") + " node");
      }
    }
    break;
  }
  if (module_found.empty() || cards == 0) {
    return Fail("dri-nodes", "no card bound to the hycu driver (/sys/module/hycu/drivers/pci:hycu)",
                "check that the driver loaded and claimed the cards (lspci -k)");
  }
  const std::vector<vendor::PciHcu> pci = vendor::ScanPciHcus(fs);
  if (!pci.empty() && static_cast<int>(pci.size()) != cards) {
    problems.push_back(std::to_string(pci.size()) + " HCU PCI functions but " +
                       std::to_string(cards) + " bound to " + module_found);
  }
  if (!problems.empty()) {
    std::string detail;
    for (const std::string& p : problems) detail += (detail.empty() ? "" : "; ") + p;
    return Fail("dri-nodes", detail,
                "mount /dev/dri into the plugin pod; reload the driver if a "
                "card is not bound");
  }
  return Ok("dri-nodes", std::to_string(cards) + " card(s) with card and render nodes");
}

}  // namespace hcudp::doctor
