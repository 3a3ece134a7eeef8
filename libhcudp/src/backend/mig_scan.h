// MIG compute instances as the node records them:
// <host-root>/etc/dmi_mig_config/ci/dev<d>gi<g>ci<c>.conf (hcu-hardware.md §4.3),
// named with the shader-engine count of the KFD topology (seed-behaviour §6.4).
#ifndef HCUDP_SRC_BACKEND_MIG_SCAN_H_
#define HCUDP_SRC_BACKEND_MIG_SCAN_H_

#include <string>
#include <vector>

#include "hcudp/device.h"
#include "hcudp/status.h"
#include "hcudp_internal/host_fs.h"

namespace hcudp {

// array_count / simd_arrays_per_engine of the first KFD node (in numeric
// order) whose gpu_id is not 0.
StatusOr<int> ReadShaderEngineCount(const internal::HostFs& fs);

// Every valid CI conf, sorted by card, GI, CI. Directories at a conf path
// are logged and skipped. What may hide an instance (the CI directory that
// cannot be listed, a conf that does not read, profiles that cannot be
// named) is logged and, when `gaps` is given, added to it
// (kMigConfUnreadable): unknown, never "no instance".
std::vector<MigInstance> ScanMigInstances(const internal::HostFs& fs,
                                          std::vector<MigStateGap>* gaps = nullptr);

}  // namespace hcudp

#endif  // HCUDP_SRC_BACKEND_MIG_SCAN_H_
