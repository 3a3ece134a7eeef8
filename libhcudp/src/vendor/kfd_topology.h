// The driver's card order as the KFD topology shows it
// (reference/hcu-hardware.md §1.9, §2.4). libhydmi numbers cards by walking
// <sys>/kfd/kfd/topology/nodes/<n> in numeric node order and counting the
// nodes whose gpu_id is non-zero: the k-th such node is DMI index k. Driver
// probe order decides that order; it need not be PCI address order. Each GPU
// node's `properties` carries `domain` and `location_id`, which give its BDF.
#ifndef HCUDP_VENDOR_KFD_TOPOLOGY_H_
#define HCUDP_VENDOR_KFD_TOPOLOGY_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "hcudp/status.h"
#include "hcudp_internal/host_fs.h"

namespace hcudp::vendor {

// Where the topology lives, tried in this order under the host-root.
inline constexpr std::string_view kKfdTopologyDirs[] = {
    internal::host_path::kKfdVirtualNodesDir,
    internal::host_path::kKfdNodesDir,
};

// The node directories under `nodes_dir` ("<nodes_dir>/<n>"), in numeric
// node order: 10 after 9. Names that are not plain decimal numbers are not
// nodes. Errors as node_files::ListDir (NotFound when it is absent).
StatusOr<std::vector<std::string>> ListKfdNodes(const std::string& nodes_dir);

// The "name value" lines of a node's `properties` file, by name.
std::map<std::string, int64_t> ParseKfdProperties(std::string_view text);

// The BDF ("0000:09:00.0", lower case) of every GPU node, in DMI index
// order. Errors name the file: no topology directory, a GPU node without a
// readable `properties`, or one lacking `domain` / `location_id`.
StatusOr<std::vector<std::string>> ReadKfdGpuBdfs(const internal::HostFs& fs);

// "0000:09:00.0" from KFD `domain` and `location_id` (bus << 8 | dev << 3 | fn).
std::string BdfFromKfd(uint64_t domain, uint64_t location_id);

}  // namespace hcudp::vendor

#endif  // HCUDP_VENDOR_KFD_TOPOLOGY_H_
