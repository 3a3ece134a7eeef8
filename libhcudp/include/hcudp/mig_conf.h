// /etc/dmi_mig_config/ci/dev<d>gi<g>ci<c>.conf: one MIG compute instance,
// written by `hy-smi mig`. A GPU-instance block (13 lines) then a
// compute-instance block (14 lines), `key: value` with padded values
// (reference/hcu-hardware.md §4.3, seed-behaviour.md §4.4, §6.4).
#ifndef HCUDP_MIG_CONF_H_
#define HCUDP_MIG_CONF_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "hcudp/export.h"
#include "hcudp/status.h"

namespace hcudp {

struct MigGpuInstanceBlock {
  std::string pci;
  int id = 0;
  std::string pipe_mask;
  std::string gpu_slice_mask;
  std::string cu_mask_lo;
  std::string cu_mask_hi;
  int profile_id = 0;
  int gi_count_max = 0;
  int cu_count = 0;
  int gpu_slice_count = 0;
  uint64_t memory_size_mb = 0;
  int placement_start = 0;
  int placement_size = 0;
};

struct MigComputeInstanceBlock {
  std::string pci;
  int gi_id = 0;
  int id = 0;
  std::string pipe_mask;
  std::string gpu_slice_mask;
  std::string cu_mask_lo;
  std::string cu_mask_hi;
  int profile_id = 0;
  int ci_count_max = 0;
  int cu_count = 0;
  int gpu_slice_count = 0;
  int placement_start = 0;
  int placement_size = 0;
  std::string mig_uuid;
};

struct MigConf {
  MigGpuInstanceBlock gi;
  MigComputeInstanceBlock ci;
};

struct MigConfName {
  int card = 0;
  int gi = 0;
  int ci = 0;
};

HCUDP_EXPORT StatusOr<MigConf> ParseMigConf(std::string_view text);
HCUDP_EXPORT std::string FormatMigConf(const MigConf& conf);
// "dev3gi1ci0.conf" -> {3, 1, 0}.
HCUDP_EXPORT StatusOr<MigConfName> ParseMigConfFileName(std::string_view file_name);
// Profile name without "MIG ": "<g>g.<mem>gb", or "<c>c.<g>g.<mem>gb" when the
// CI uses fewer slices than its GI. g = SEs per slice x slices,
// mem = floor(memory_size_mb / 1024); SEs per slice = shader_engines / 4.
HCUDP_EXPORT std::string MigProfileName(int shader_engines, int gi_slices, int ci_slices,
                                        uint64_t memory_size_mb);

}  // namespace hcudp

#endif  // HCUDP_MIG_CONF_H_
