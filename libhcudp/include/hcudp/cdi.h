// CDI (Container Device Interface) spec for the node's HCU devices, for
// --device-list-strategy=cdi|both (DESIGN.md §4.3). One spec file
// <cdi-spec-dir>/hygon.com-hcu.json, kind "hygon.com/hcu", cdiVersion the
// lowest its content needs (0.5.0 today, which podman 4.3 and containerd
// 1.7.0-1.7.12 know; they refuse 0.6.0): one device per allocatable unit (card, vHCU, MIG instance) named
// by its device ID in the CDI name charset, with the DRI nodes and conf mount
// of that unit; the common edits (kfd, mkfd, hyhal) sit at the top level.
// Paths in the spec are host paths (never prefixed with host-root).
#ifndef HCUDP_CDI_H_
#define HCUDP_CDI_H_

#include <string>
#include <string_view>
#include <vector>

#include "hcudp/allocation.h"
#include "hcudp/device.h"
#include "hcudp/export.h"
#include "hcudp/naming.h"
#include "hcudp/status.h"

namespace hcudp {

inline constexpr std::string_view kCdiKind = "hygon.com/hcu";
inline constexpr std::string_view kCdiSpecFileName = "hygon.com-hcu.json";

// A device ID in the CDI name charset [A-Za-z0-9]([A-Za-z0-9_.:-]*[A-Za-z0-9])?:
// other characters become '_', and an 'x' is put before a first or after a
// last character that is not a letter or digit ("0000:09:00.0" and "vdev3"
// are kept as they are).
HCUDP_EXPORT std::string CdiDeviceName(std::string_view device_id);
// "hygon.com/hcu=" + CdiDeviceName(device_id).
HCUDP_EXPORT std::string CdiQualifiedName(std::string_view device_id);

struct CdiSpec {
  std::string json;                  // the spec document
  std::vector<std::string> skipped;  // "<id>: <why>" for devices left out
};

// The spec for every device of `resources` (each ID once). A device whose
// edits cannot be built (no DRI nodes, bad conf) is left out and listed in
// `skipped`, so one broken vHCU does not hide the others.
HCUDP_EXPORT CdiSpec BuildCdiSpec(const NodeInventory& inventory,
                                  const std::vector<Resource>& resources,
                                  const AllocationBuilder& builder);

// Writes `json` to <dir>/hygon.com-hcu.json atomically (temp file in the same
// directory, fsync, rename); creates `dir` if needed.
HCUDP_EXPORT Status WriteCdiSpec(const std::string& dir, const std::string& json);

}  // namespace hcudp

#endif  // HCUDP_CDI_H_
