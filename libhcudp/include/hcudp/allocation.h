// AllocationBuilder: what a container gets for a set of device IDs of one
// resource (DESIGN.md §4.3, reference/seed-behaviour.md §4), as plain values
// the daemon turns into an Allocate response or a CDI spec.
//
// Every allocation carries /dev/kfd and /dev/mkfd (rw, each only if the node
// has it), the vendor runtime (--hyhal-path) mounted read-only at /opt/hyhal,
// and the environment HCU_VISIBLE_DEVICES=void: Hygon's container runtime
// (hcu-container-toolkit) injects every card of the node into a container
// whose image sets ROCM_VERSION unless that variable says otherwise, and
// "void" tells it to inject nothing (DESIGN §4.5). Then per device:
//   card (BDF)      the card's DRI nodes, rw;
//   vHCU vdevN      the parent card's DRI nodes, plus host /etc/vdev/vdevN.conf
//                   mounted read-only at /etc/vdev/docker/vdevN.conf (N kept:
//                   the runtime checks it) after checking that the file under
//                   host-root is a regular, non-empty text file;
//   MIG MIG-<uuid>  the parent card's DRI nodes, plus its ci conf mounted
//                   read-only at the same path (checked to be a regular file).
// Devices are ordered kfd, mkfd, then DRI nodes by card index; mounts hyhal
// first, then by device ID. The result depends only on the inputs and the
// conf files it checks: Build never blocks on anything but a local stat/read.
//
// Thread-safety: Build is const and may be called concurrently.
#ifndef HCUDP_ALLOCATION_H_
#define HCUDP_ALLOCATION_H_

#include <string>
#include <utility>
#include <vector>

#include "hcudp/device.h"
#include "hcudp/export.h"
#include "hcudp/naming.h"
#include "hcudp/status.h"

namespace hcudp {

inline constexpr std::string_view kHyhalContainerPath = "/opt/hyhal";
// Set in every container edit we produce (DESIGN §4.5).
inline constexpr std::string_view kVisibleDevicesEnv = "HCU_VISIBLE_DEVICES";
inline constexpr std::string_view kVisibleDevicesVoid = "void";
// Where the vendor keeps a second copy of its runtime on some hosts; CDI
// specs mount it read-only when the host has it (as Hygon's DRA driver).
inline constexpr std::string_view kLocalHyhalPath = "/usr/local/hyhal";

// A device node for the container (DeviceSpec in the kubelet API).
struct DeviceNode {
  std::string host_path;
  std::string container_path;
  std::string permissions;  // cgroup string: "rw"

  bool operator==(const DeviceNode& o) const {
    return host_path == o.host_path && container_path == o.container_path &&
           permissions == o.permissions;
  }
};

// A bind mount for the container.
struct Mount {
  std::string host_path;
  std::string container_path;
  bool read_only = true;
  bool recursive = false;  // rbind (CDI specs only: kubelet's Mount has no such field)

  bool operator==(const Mount& o) const {
    return host_path == o.host_path && container_path == o.container_path &&
           read_only == o.read_only && recursive == o.recursive;
  }
};

// An OCI hook the container runtime runs (CDI specs only).
struct CdiHook {
  std::string hook_name;          // "createContainer"
  std::string path;               // host path of the executable
  std::vector<std::string> args;  // argv, args[0] included
};

struct ContainerAllocation {
  std::vector<DeviceNode> devices;
  std::vector<Mount> mounts;
  // HCU_VISIBLE_DEVICES=void always; nothing else today.
  std::vector<std::pair<std::string, std::string>> envs;
  std::vector<CdiHook> hooks;  // CDI specs only (CdiDeviceEdits)
  // Fully-qualified CDI names, "hygon.com/hcu=<name>", one per device ID.
  std::vector<std::string> cdi_devices;
};

struct AllocationBuilderOptions {
  AllocationBuilderOptions() = default;
  // The two that every caller sets ({host_root, hyhal_path}, as before the
  // CDI fields joined); the rest keep their defaults.
  AllocationBuilderOptions(std::string root, std::string hyhal)
      : host_root(std::move(root)), hyhal_path(std::move(hyhal)) {}

  // Where node files are checked (the vHCU and MIG conf files). Default "/".
  std::string host_root = "/";
  // Host path of the vendor runtime, mounted at /opt/hyhal. Default /opt/hyhal.
  std::string hyhal_path = "/opt/hyhal";
  // CDI specs only. Host path of the hook that makes a card's
  // /dev/dri/by-path links inside the container (`hcu-cdi-hook`, which the
  // DaemonSet copies there); the hook is left out while no executable is at
  // host_root + cdi_hook_path, since a runtime fails a container whose hook
  // is missing. Empty: never. Default "" (the daemon's flag has the path).
  std::string cdi_hook_path;
  // CDI specs only: also /dev/mem and /sys/kernel/debug (read-only), as
  // Hygon's driver gives every container. Raw physical memory and the
  // kernel's debug files break the container's isolation; only for
  // workloads (vendor diagnostics) that need them. Default false.
  bool cdi_debug_access = false;
};

class HCUDP_EXPORT AllocationBuilder {
 public:
  explicit AllocationBuilder(AllocationBuilderOptions options);

  // The allocation for `device_ids` of `resource` on `inventory`.
  //   InvalidArgument     an ID is not a device of the resource (all unknown
  //                       IDs are named), no IDs, more than one vHCU or MIG
  //                       instance in one container, a HAMi resource;
  //   FailedPrecondition  a card without DRI nodes (its BDF named), a vHCU or
  //                       MIG conf file that is missing or not valid.
  StatusOr<ContainerAllocation> Build(const NodeInventory& inventory, const Resource& resource,
                                      const std::vector<std::string>& device_ids) const;

  // The parts every allocation shares (kfd, mkfd, hyhal, the env), as Build
  // adds them.
  ContainerAllocation CommonEdits(const NodeInventory& inventory) const;
  // CommonEdits plus what only a CDI spec carries: /usr/local/hyhal
  // read-only where the host has it, and with cdi_debug_access /dev/mem and
  // /sys/kernel/debug where the host has them.
  ContainerAllocation CdiCommonEdits(const NodeInventory& inventory) const;

  // The parts one device adds (DRI nodes, conf mount), without the common
  // ones; same errors as Build for that device.
  StatusOr<ContainerAllocation> DeviceEdits(const NodeInventory& inventory,
                                            const Resource& resource,
                                            const ResourceDevice& device) const;
  // DeviceEdits plus what only a CDI spec carries, for the device's card:
  // its sysfs PCI directory (rbind, read-only) and the createContainer hook
  // that makes /dev/dri/by-path/pci-<bdf>-card|render (see cdi_hook_path).
  StatusOr<ContainerAllocation> CdiDeviceEdits(const NodeInventory& inventory,
                                               const Resource& resource,
                                               const ResourceDevice& device) const;

 private:
  // The card index the device belongs to, as DeviceEdits finds it; -1 if none.
  int DeviceCard(const NodeInventory& inventory, const Resource& resource,
                 const ResourceDevice& device) const;

  AllocationBuilderOptions options_;
};

// Checks the vHCU conf at host_root + path: a regular, non-empty file with
// no NUL byte and some non-blank content (as the vendor plugin validates).
HCUDP_EXPORT Status ValidateVhcuConfFile(const std::string& host_root, const std::string& path);

}  // namespace hcudp

#endif  // HCUDP_ALLOCATION_H_
