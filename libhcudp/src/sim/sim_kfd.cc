// KFD topology of the simulated node (hcu-hardware.md §2.4 and §6.1).
#include <set>
#include <sstream>

#include "sim/sim_layout.h"

namespace hcudp::sim {

namespace {

// gfx_target_version by PCI device id family (§2.1); gfx928 when unknown.
int GfxTargetVersion(uint16_t device_id) {
  if (device_id == 0x55b7) return 90006;                         // Z100L, gfx906
  if (device_id == 0x62b7 || device_id == 0x62c7) return 90206;  // K100, gfx926
  if ((device_id & 0xff00) == 0x6300) return 90306;              // BW, gfx936
  return 90208;                                                  // K100_AI family
}

int HexField(const std::string& bdf, size_t pos, size_t len) {
  return std::stoi(bdf.substr(pos, len), nullptr, 16);
}

bool HasHsl(const SimNode& node) {
  if (node.link_default.type == LinkType::kHsl) return node.cards.size() > 1;
  for (const SimLinkPair& p : node.link_pairs) {
    if (p.spec.type == LinkType::kHsl) return true;
  }
  return false;
}

std::string CpuProperties(int numa) {
  std::ostringstream p;
  p << "cpu_cores_count 32\n"
    << "simd_count 0\n"
    << "mem_banks_count 1\n"
    << "caches_count 0\n"
    << "io_links_count 0\n"
    << "p2p_links_count 0\n"
    << "cpu_core_id_base " << numa * 32 << "\n"
    << "simd_id_base 0\n"
    << "max_waves_per_simd 0\n"
    << "array_count 0\n"
    << "simd_arrays_per_engine 0\n"
    << "simd_per_cu 0\n"
    << "gfx_target_version 0\n"
    << "vendor_id 0\n"
    << "device_id 0\n"
    << "location_id 0\n"
    << "domain 0\n"
    << "drm_render_minor 0\n"
    << "hive_id 0\n"
    << "unique_id 0\n";
  return p.str();
}

std::string GpuProperties(const SimNode& node, const SimCard& card, uint64_t hive_id) {
  int bus = HexField(card.bdf, 5, 2);
  int dev = HexField(card.bdf, 8, 2);
  int fn = HexField(card.bdf, 11, 1);
  std::ostringstream p;
  p << "cpu_cores_count 0\n"
    << "simd_count " << card.compute_units * 4 << "\n"
    << "mem_banks_count 1\n"
    << "caches_count 0\n"
    << "io_links_count 1\n"
    << "p2p_links_count " << node.cards.size() - 1 << "\n"
    << "cpu_core_id_base 0\n"
    << "simd_id_base " << 2147487744ull + static_cast<uint64_t>(card.index) * 4096 << "\n"
    << "max_waves_per_simd 10\n"
    << "lds_size_in_kb 64\n"
    << "gds_size_in_kb 0\n"
    << "num_gws 64\n"
    << "wave_front_size 64\n"
    << "array_count 16\n"
    << "simd_arrays_per_engine 2\n"
    << "cu_per_simd_array " << (card.compute_units + 15) / 16 << "\n"
    << "simd_per_cu 4\n"
    << "max_slots_scratch_cu 32\n"
    << "gfx_target_version " << GfxTargetVersion(card.pci_device_id) << "\n"
    << "vendor_id " << kHygonVendorId << "\n"
    << "device_id " << card.pci_device_id << "\n"
    << "location_id " << ((bus << 8) | (dev << 3) | fn) << "\n"
    << "domain " << HexField(card.bdf, 0, 4) << "\n"
    << "drm_render_minor " << card.render_minor << "\n"
    << "hive_id " << hive_id << "\n"
    << "num_sdma_engines 2\n"
    << "num_sdma_xgmi_engines 6\n"
    << "num_sdma_queues_per_engine 8\n"
    << "num_cp_queues 24\n"
    << "max_engine_clk_fcompute 1500\n"
    << "local_mem_size 0\n"
    << "fw_version 0\n"
    << "capability 0\n"
    << "debug_prop 0\n"
    << "sdma_fw_version 0\n"
    << "unique_id " << UniqueIdOf(card) << "\n"
    << "num_xcc 1\n"
    << "max_engine_clk_ccompute 2600\n";
  return p.str();
}

}  // namespace

uint64_t UniqueIdOf(const SimCard& card) { return Fnv1a64("hcu-serial:" + card.serial); }

std::vector<KfdNode> KfdTopology(const SimNode& node) {
  std::set<int> numa_nodes;
  for (const SimCard& c : node.cards) {
    if (c.numa_node >= 0) numa_nodes.insert(c.numa_node);
  }
  if (numa_nodes.empty()) numa_nodes.insert(0);
  std::vector<KfdNode> out;
  out.reserve(numa_nodes.size() + node.cards.size());
  for (int numa : numa_nodes) out.push_back({0, CpuProperties(numa)});
  uint64_t hive_id = HasHsl(node) ? (Fnv1a64("hive:" + node.name) >> 1) : 0;
  std::set<uint32_t> used_ids;
  for (const SimCard& c : node.cards) {  // cards are sorted by index
    // A small non-zero hash of the BDF, like the driver's gpu_id.
    uint32_t id = static_cast<uint32_t>(Fnv1a64(c.bdf) & 0xffff);
    while (id == 0 || !used_ids.insert(id).second) id = (id + 1) & 0xffff;
    out.push_back({id, GpuProperties(node, c, hive_id)});
  }
  return out;
}

}  // namespace hcudp::sim
