// AllocationBuilder: what a container gets for a set of device IDs of one
// resource (DESIGN.md §4.3, reference/seed-behaviour.md §4), as plain values
// the daemon turns into an Allocate response or a CDI spec.
//
// Every allocation carries /dev/kfd and /dev/mkfd (rw, each only if the node
// has it) and the vendor runtime (--hyhal-path) mounted read-only at
// /opt/hyhal. Then per device:
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
#include <vector>

#include "hcudp/device.h"
#include "hcudp/export.h"
#include "hcudp/naming.h"
#include "hcudp/status.h"

namespace hcudp {

inline constexpr std::string_view kHyhalContainerPath = "/opt/hyhal";

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

  bool operator==(const Mount& o) const {
    return host_path == o.host_path && container_path == o.container_path &&
           read_only == o.read_only;
  }
};

struct ContainerAllocation {
  std::vector<DeviceNode> devices;
  std::vector<Mount> mounts;
  std::vector<std::pair<std::string, std::string>> envs;  // none today; kept for CDI/HAMi
  // Fully-qualified CDI names, "hygon.com/hcu=<name>", one per device ID.
  std::vector<std::string> cdi_devices;
};

struct AllocationBuilderOptions {
  // Where node files are checked (the vHCU and MIG conf files). Default "/".
  std::string host_root = "/";
  // Host path of the vendor runtime, mounted at /opt/hyhal. Default /opt/hyhal.
  std::string hyhal_path = "/opt/hyhal";
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

  // The parts every allocation shares (kfd, mkfd, hyhal), as Build adds them.
  ContainerAllocation CommonEdits(const NodeInventory& inventory) const;

  // The parts one device adds (DRI nodes, conf mount), without the common
  // ones; same errors as Build for that device.
  StatusOr<ContainerAllocation> DeviceEdits(const NodeInventory& inventory,
                                            const Resource& resource,
                                            const ResourceDevice& device) const;

 private:
  AllocationBuilderOptions options_;
};

// Checks the vHCU conf at host_root + path: a regular, non-empty file with
// no NUL byte and some non-blank content (as the vendor plugin validates).
HCUDP_EXPORT Status ValidateVhcuConfFile(const std::string& host_root, const std::string& path);

}  // namespace hcudp

#endif  // HCUDP_ALLOCATION_H_
