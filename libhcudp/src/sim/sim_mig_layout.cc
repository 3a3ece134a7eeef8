// MIG ci conf contents of the simulated node (hcu-hardware.md §4.2-4.3, the
// example of §6.3). Masks and pipe masks are plausible, not measured: a GI
// covers slices [start, start+size) of 4, each slice CU/4 CUs wide.
#include <cinttypes>
#include <cstdio>

#include "sim/sim_layout.h"
#include "sim/sim_profile.h"

namespace hcudp::sim {
namespace {

// Profile id by slice count, as measured on BW (§4.2): 1 -> 3, 2 -> 1, 4 -> 0.
int ProfileId(int slices) { return slices == 1 ? 3 : slices == 2 ? 1 : 0; }

std::string Hex(uint64_t v, int width) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%0*" PRIx64, width, v);
  return buf;
}

uint64_t SliceBits(int start, int size) { return ((uint64_t{1} << size) - 1) << start; }

// `count` CUs starting at CU `first`, clipped to the 128-bit mask.
CuMask CuRun(int first, int count) {
  CuMask m;
  for (int bit = first; bit < first + count && bit < kMaxCuMaskBits; ++bit) {
    if (bit >= 0) m.Set(bit);
  }
  return m;
}

// Lowest start aligned to `size` whose slices are free in `used`.
int Place(uint64_t* used, int size) {
  for (int start = 0; start + size <= kMigSlicesPerCard; start += size) {
    uint64_t bits = SliceBits(start, size);
    if ((*used & bits) == 0) {
      *used |= bits;
      return start;
    }
  }
  return 0;  // the parser bounds the slices per card; not reached
}

}  // namespace

std::map<std::string, MigConf> MigConfs(const SimNode& node) {
  std::map<int, uint64_t> used_slices;          // card -> slice bits
  std::map<std::pair<int, int>, int> gi_start;  // (card, gi) -> first slice
  std::map<std::string, MigConf> out;
  for (const SimMigInstance& mi : node.mig_instances) {
    const SimCard* card = node.FindCard(mi.card);
    StatusOr<MigProfile> profile = ParseMigProfile(mi.profile);
    if (card == nullptr || !profile.ok()) continue;  // the parser rules these out
    auto key = std::make_pair(mi.card, mi.gi);
    if (gi_start.count(key) == 0) gi_start[key] = Place(&used_slices[mi.card], profile->gi_slices);
    int start = gi_start[key];
    int cus_per_slice = card->compute_units / kMigSlicesPerCard;

    MigConf conf;
    MigGpuInstanceBlock& g = conf.gi;
    g.pci = card->bdf;
    g.id = mi.gi;
    uint64_t gi_bits = SliceBits(start, profile->gi_slices);
    g.pipe_mask = Hex(gi_bits, 2);
    g.gpu_slice_mask = Hex(gi_bits, 1);
    CuMask gi_cus = CuRun(start * cus_per_slice, mi.compute_units);
    g.cu_mask_lo = Hex(gi_cus.lo, 16);
    g.cu_mask_hi = Hex(gi_cus.hi, 16);
    g.profile_id = ProfileId(profile->gi_slices);
    g.gi_count_max = kMigSlicesPerCard / profile->gi_slices;
    g.cu_count = mi.compute_units;
    g.gpu_slice_count = profile->gi_slices;
    g.memory_size_mb = mi.memory_mib;
    g.placement_start = start;
    g.placement_size = profile->gi_slices;

    MigComputeInstanceBlock& c = conf.ci;
    int ci_start = (mi.ci * profile->ci_slices) % profile->gi_slices;  // within the GI
    uint64_t ci_bits = SliceBits(start + ci_start, profile->ci_slices);
    CuMask ci_cus = CuRun((start + ci_start) * cus_per_slice, mi.compute_units);
    c.pci = card->bdf;
    c.gi_id = mi.gi;
    c.id = mi.ci;
    c.pipe_mask = Hex(ci_bits, 2);
    c.gpu_slice_mask = Hex(ci_bits, 1);
    c.cu_mask_lo = Hex(ci_cus.lo, 16);
    c.cu_mask_hi = Hex(ci_cus.hi, 16);
    c.profile_id = ProfileId(profile->ci_slices);
    c.ci_count_max = profile->gi_slices / profile->ci_slices;
    c.cu_count = mi.compute_units;
    c.gpu_slice_count = profile->ci_slices;
    c.placement_start = ci_start;
    c.placement_size = profile->ci_slices;
    c.mig_uuid = mi.uuid;
    out["dev" + std::to_string(mi.card) + "gi" + std::to_string(mi.gi) + "ci" +
        std::to_string(mi.ci) + ".conf"] = conf;
  }
  return out;
}

}  // namespace hcudp::sim
