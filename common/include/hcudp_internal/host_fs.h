// HostFs: the node's file system as this product sees it. One object knows
// the host-root and names every node path the product reads or writes, so
// that no module joins a root and a path itself, nor keeps its own idea of
// the node's layout.
//
// Two kinds of path:
//   - a *host path* is the node's own name for a file ("/etc/vdev/vdev3.conf",
//     "/dev/kfd"). It is what goes into Allocate responses, CDI specs and
//     mark files (DESIGN §4.4). host_path:: below names them.
//   - a *local path* is where this process reaches that file: host-root +
//     host path. HostFs's accessors return local paths.
//
// The root: "" and "/" both mean the process's own "/". A relative root is
// resolved against the working directory once, when the HostFs is made
// (lexically: symbolic links are kept), so that every path it gives is
// absolute and a later chdir cannot move the node. Trailing slashes are
// dropped.
//
// A HostFs is a small value: copy it freely. Thread-safe (immutable).
// Internal (hcudp_internal_files), never installed: the public API keeps
// taking a root string (Options::host_root and friends); the library makes
// its HostFs from that string at the door and passes it down.
#ifndef HCUDP_INTERNAL_HOST_FS_H_
#define HCUDP_INTERNAL_HOST_FS_H_

#include <sys/types.h>

#include <cstddef>
#include <string>
#include <string_view>

#include "hcudp/allocation.h"
#include "hcudp/dra/checkpoint.h"
#include "hcudp/hami/mark_file.h"
#include "hcudp/status.h"
#include "hcudp/vhcu_lock.h"
#include "hcudp/vhcu_manager.h"
#include "hcudp_internal/file_util.h"

namespace hcudp::internal {

// The node paths the product uses, as host paths (no root).
namespace host_path {

// vHCU confs the driver writes: /etc/vdev/vdev<N>.conf.
inline constexpr std::string_view kVdevDir = "/etc/vdev";
// Mark files of dynamic vHCUs and whole cards (HAMi, DRA).
inline constexpr std::string_view kMarkDir = hami::kMarkFileDir;
// Our vHCU intent journal and the host-wide vHCU lock.
inline constexpr std::string_view kIntentDir = hcudp::kVhcuIntentDir;
inline constexpr std::string_view kVhcuLockFile = hcudp::kVhcuLockFile;
// Our DRA checkpoint, and the boot ID it records.
inline constexpr std::string_view kDraCheckpointDir = dra::kCheckpointDir;
inline constexpr std::string_view kBootId = dra::kBootIdPath;
// MIG configuration: dev<d> per card, and the compute-instance confs
// /etc/dmi_mig_config/ci/dev<d>gi<g>ci<c>.conf.
inline constexpr std::string_view kMigConfigDir = "/etc/dmi_mig_config";
inline constexpr std::string_view kMigCiDir = "/etc/dmi_mig_config/ci";
// The KFD topology (the driver's card order), in the two places kernels put it.
inline constexpr std::string_view kKfdNodesDir = "/sys/class/kfd/kfd/topology/nodes";
inline constexpr std::string_view kKfdVirtualNodesDir = "/sys/devices/virtual/kfd/kfd/topology/nodes";
// Kernel modules (the HCU driver's initstate, version and bound devices).
inline constexpr std::string_view kSysModuleDir = "/sys/module";
// PCI functions: /sys/bus/pci/devices/<bdf>, links into /sys/devices.
inline constexpr std::string_view kPciDevicesDir = "/sys/bus/pci/devices";
inline constexpr std::string_view kSysDevicesDir = "/sys/devices";
// Device nodes every container gets when the node has them.
inline constexpr std::string_view kDevKfd = "/dev/kfd";
inline constexpr std::string_view kDevMkfd = "/dev/mkfd";
inline constexpr std::string_view kDevDriDir = "/dev/dri";
// Debug access a CDI spec grants only when asked (DESIGN §9).
inline constexpr std::string_view kDevMem = "/dev/mem";
inline constexpr std::string_view kKernelDebugFs = "/sys/kernel/debug";
// The vendor's second runtime copy on some hosts (CDI specs mount it).
inline constexpr std::string_view kLocalHyhal = hcudp::kLocalHyhalPath;
// The simulated node's own bookkeeping (render manifest, seed marker, its
// lock): under the host-root, outside the tree a real node has.
inline constexpr std::string_view kSimStateDir = "/.hcudp-sim";

// "/etc/vdev/vdev<id>.conf".
std::string VdevConf(int id);
// "/etc/vdev/dynamic/<name>".
std::string Mark(std::string_view name);
// "/etc/dmi_mig_config/ci/<name>".
std::string MigCiConf(std::string_view name);
// "/sys/module/<module>/<attribute>" ("" attribute: the module's directory).
std::string DriverModuleFile(std::string_view module, std::string_view attribute);
// "/sys/bus/pci/devices/<bdf>".
std::string PciDevice(std::string_view bdf);
// "/dev/dri/<node>" ("card1", "renderD128").
std::string DevDri(std::string_view node);

}  // namespace host_path

// `dir` + '/' + `path`, with no doubled '/' where they meet ("" + "/lib" is
// "/lib"). HostFs::Path is JoinUnder(root, host_path); trees other than the
// node's root (the vendor runtime under --hyhal-path) join with it too.
std::string JoinUnder(std::string_view dir, std::string_view path);

class HostFs {
 public:
  // `root` as the user gave it (Options::host_root, --host-root).
  explicit HostFs(std::string_view root);

  // The root, for messages: "/" for the process's own root, else the
  // absolute directory without a trailing '/'.
  const std::string& root() const { return display_root_; }
  // True when the root is the process's own "/" (a real node).
  bool is_real_root() const { return root_.empty(); }

  // The local path of host path `host_path` (leading slashes of it are
  // ignored: "etc/vdev" and "/etc/vdev" name the same file).
  std::string Path(std::string_view host_path) const;

  // Local paths of the node paths above.
  std::string VdevDir() const { return Path(host_path::kVdevDir); }
  std::string VdevConf(int id) const { return Path(host_path::VdevConf(id)); }
  std::string MarkDir() const { return Path(host_path::kMarkDir); }
  std::string Mark(std::string_view name) const { return Path(host_path::Mark(name)); }
  std::string IntentDir() const { return Path(host_path::kIntentDir); }
  std::string VhcuLockFile() const { return Path(host_path::kVhcuLockFile); }
  std::string DraCheckpointDir() const { return Path(host_path::kDraCheckpointDir); }
  std::string BootId() const { return Path(host_path::kBootId); }
  std::string MigConfigDir() const { return Path(host_path::kMigConfigDir); }
  std::string MigCiDir() const { return Path(host_path::kMigCiDir); }
  std::string KfdNodesDir() const { return Path(host_path::kKfdNodesDir); }
  std::string SysModuleDir() const { return Path(host_path::kSysModuleDir); }
  std::string DriverModuleFile(std::string_view module, std::string_view attribute) const {
    return Path(host_path::DriverModuleFile(module, attribute));
  }
  std::string PciDevicesDir() const { return Path(host_path::kPciDevicesDir); }
  std::string PciDevice(std::string_view bdf) const { return Path(host_path::PciDevice(bdf)); }
  std::string SysDevicesDir() const { return Path(host_path::kSysDevicesDir); }
  std::string DevKfd() const { return Path(host_path::kDevKfd); }
  std::string DevMkfd() const { return Path(host_path::kDevMkfd); }
  std::string DevDriDir() const { return Path(host_path::kDevDriDir); }
  std::string DevDri(std::string_view node) const { return Path(host_path::DevDri(node)); }
  std::string LocalHyhal() const { return Path(host_path::kLocalHyhal); }
  std::string SimStateDir() const { return Path(host_path::kSimStateDir); }

  // The file operations of hcudp_internal/file_util.h on host paths: the
  // same limits, atomicity and messages (which name the local path).
  StatusOr<std::string> ReadFile(std::string_view host_path,
                                 size_t max_bytes = file_util::kSmallFileMaxBytes) const;
  // For node files others may replace (vHCU confs, checkpoint entries,
  // state files): never opens anything but a regular file, never blocks.
  StatusOr<std::string> ReadRegularFile(std::string_view host_path,
                                        size_t max_bytes = file_util::kSmallFileMaxBytes) const;
  Status WriteFileAtomic(std::string_view host_path, std::string_view data, mode_t mode,
                         file_util::Durability durability) const;
  Status MakeDirs(std::string_view host_path, mode_t mode,
                  file_util::Durability durability = file_util::Durability::kNoSync) const;
  Status RemoveFile(std::string_view host_path,
                    file_util::Durability durability = file_util::Durability::kNoSync) const;

 private:
  std::string root_;          // absolute, no trailing '/'; "" for "/"
  std::string display_root_;  // root_, or "/"
};

}  // namespace hcudp::internal

#endif  // HCUDP_INTERNAL_HOST_FS_H_
