// vHCU conf contents of the simulated node (hcu-hardware.md §3.3).
#include <bitset>

#include "sim/sim_layout.h"

namespace hcudp::sim {

int CuMask::Count() const {
  return static_cast<int>(std::bitset<64>(lo).count() + std::bitset<64>(hi).count());
}

bool CuMask::Test(int bit) const {
  return bit < 64 ? ((lo >> bit) & 1) != 0 : ((hi >> (bit - 64)) & 1) != 0;
}

void CuMask::Set(int bit) {
  if (bit < 64) {
    lo |= uint64_t{1} << bit;
  } else {
    hi |= uint64_t{1} << (bit - 64);
  }
}

std::optional<CuMask> LowestFreeCus(const CuMask& used, int card_cus, int count) {
  CuMask out;
  int limit = std::min(card_cus, kMaxCuMaskBits);
  for (int bit = 0; bit < limit && out.Count() < count; ++bit) {
    if (!used.Test(bit)) out.Set(bit);
  }
  if (out.Count() < count) return std::nullopt;
  return out;
}

std::map<int, VdevConf> SeedVdevConfs(const SimNode& node) {
  std::map<int, CuMask> used;  // card index -> CUs taken so far
  std::map<int, VdevConf> out;
  for (const SimVhcu& v : node.vhcus) {  // sorted by id
    const SimCard* card = node.FindCard(v.card);
    if (card == nullptr) continue;  // the parser guarantees it exists
    // The parser checked per-card CU totals, so the masks always fit.
    CuMask mask =
        LowestFreeCus(used[v.card], card->compute_units, v.compute_units).value_or(CuMask{});
    used[v.card] = used[v.card] | mask;
    VdevConf conf;
    conf.pci_bus_id = card->bdf;
    conf.cu_mask_lo = mask.lo;
    conf.cu_mask_hi = mask.hi;
    conf.cu_count = mask.Count();
    conf.mem_mib = v.memory_mib;
    conf.device_id = v.card;
    conf.vdev_id = v.id;
    conf.pipe_id = v.pipe_id;
    conf.enable = 1;
    out[v.id] = conf;
  }
  return out;
}

}  // namespace hcudp::sim
