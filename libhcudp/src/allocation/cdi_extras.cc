// What a CDI spec carries beyond a device-plugin Allocate response, for
// parity with Hygon's DRA driver and toolkit where a workload may need it
// (DESIGN §9; reference/hcu-hardware.md §2.6): /usr/local/hyhal (when it is
// a vendor tree), the card's
// sysfs directory, the /dev/dri/by-path links, and on request /dev/mem and
// /sys/kernel/debug. Host files are looked at under host-root when the spec
// is built: a runtime fails a container whose mount source or hook is
// missing, so what the host lacks is left out.
#include <sys/stat.h>
#include <unistd.h>

#include "hcudp/allocation.h"
#include "hcudp_internal/host_fs.h"

namespace hcudp {
namespace {

bool IsDir(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool IsRegularFile(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// A vendor hyhal tree, not merely a directory: a runtime that creates a
// missing hostPath (containerd, CRI-O) leaves an empty /usr/local/hyhal on a
// host without one, and mounting that over an image's own copy hides it
// (Hygon's tools search /usr/local/hyhal/bin before /opt/hyhal/bin). Real
// trees hold hy-smi or the DMI / SMI libraries (reference/hcu-hardware.md §1).
bool IsHyhalTree(const std::string& dir) {
  for (const char* file : {"/bin/hy-smi", "/lib/libhydmi.so", "/lib/librocm_smi64.so"}) {
    if (IsRegularFile(dir + file)) return true;
  }
  return false;
}

bool IsCharDevice(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISCHR(st.st_mode);
}

bool IsExecutableFile(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

// "renderD128" of "/dev/dri/renderD128"; "card" or "render" for its link.
std::string Basename(const std::string& path) { return path.substr(path.rfind('/') + 1); }
std::string LinkKind(const std::string& node) {
  return Basename(node).rfind("render", 0) == 0 ? "render" : "card";
}

}  // namespace

ContainerAllocation AllocationBuilder::CdiCommonEdits(const NodeInventory& inventory) const {
  ContainerAllocation out = CommonEdits(inventory);
  const internal::HostFs host(options_.host_root);
  if (IsHyhalTree(host.LocalHyhal())) {
    out.mounts.push_back({std::string(kLocalHyhalPath), std::string(kLocalHyhalPath), true});
  }
  if (options_.cdi_debug_access) {
    const std::string mem(internal::host_path::kDevMem);
    const std::string debugfs(internal::host_path::kKernelDebugFs);
    if (IsCharDevice(host.Path(mem))) out.devices.push_back({mem, mem, "rw"});
    if (IsDir(host.Path(debugfs))) out.mounts.push_back({debugfs, debugfs, true});
  }
  return out;
}

StatusOr<ContainerAllocation> AllocationBuilder::CdiDeviceEdits(
    const NodeInventory& inventory, const Resource& resource, const ResourceDevice& device) const {
  HCUDP_ASSIGN_OR_RETURN(ContainerAllocation out, DeviceEdits(inventory, resource, device));
  const Card* card = inventory.FindCard(DeviceCard(inventory, resource, device));
  if (card == nullptr) return out;  // DeviceEdits found it; a HAMi kind never gets here
  const internal::HostFs host(options_.host_root);
  if (!card->sysfs_dir.empty() && IsDir(host.Path(card->sysfs_dir))) {
    Mount sysfs{card->sysfs_dir, card->sysfs_dir, true};
    sysfs.recursive = true;
    out.mounts.push_back(std::move(sysfs));
  }
  if (!options_.cdi_hook_path.empty() &&
      IsExecutableFile(host.Path(options_.cdi_hook_path))) {
    // The links udev makes on the host, pointing at the card's own nodes.
    CdiHook hook{"createContainer", options_.cdi_hook_path, {"hcu-cdi-hook", "create-symlinks"}};
    for (const std::string& node : card->dri_nodes) {
      hook.args.push_back("--link");
      hook.args.push_back("../" + Basename(node) + "::/dev/dri/by-path/pci-" + card->bdf + "-" +
                          LinkKind(node));
    }
    out.hooks.push_back(std::move(hook));
  }
  return out;
}

}  // namespace hcudp
