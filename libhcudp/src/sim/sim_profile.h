// MIG profile names of the simulated node ("4g.31gb", "2c.4g.31gb") and the
// slice geometry the sim assumes: 8 shader engines per card, 4 GPU slices of
// 2 SEs each (hcu-hardware.md §4.2).
#ifndef HCUDP_SRC_SIM_SIM_PROFILE_H_
#define HCUDP_SRC_SIM_SIM_PROFILE_H_

#include <cstdint>
#include <string_view>

#include "hcudp/status.h"

namespace hcudp::sim {

inline constexpr int kMigShaderEngines = 8;
inline constexpr int kMigSlicesPerCard = 4;
inline constexpr int kMigSesPerSlice = kMigShaderEngines / kMigSlicesPerCard;

struct MigProfile {
  int gi_slices = 0;
  int ci_slices = 0;  // == gi_slices unless the name has a "<c>c." part
  uint64_t memory_gib = 0;
};

// "<g>g.<m>gb" or "<c>c.<g>g.<m>gb" with g = 2 x GI slices (1, 2 or 4) and
// c = 2 x CI slices, c < g. Exactly the names MigProfileName produces.
StatusOr<MigProfile> ParseMigProfile(std::string_view name);

}  // namespace hcudp::sim

#endif  // HCUDP_SRC_SIM_SIM_PROFILE_H_
