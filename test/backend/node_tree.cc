#include "backend/node_tree.h"

#include <boost/test/unit_test.hpp>

namespace hcudp::testing {

void WriteDri(const std::string& root, const std::string& bdf, int card_minor, int render_minor,
              bool with_dev_nodes, const std::string& module, const std::string& driver) {
  const std::string drm =
      root + "/sys/module/" + module + "/drivers/pci:" + driver + "/" + bdf + "/drm/";
  const std::string card = "card" + std::to_string(card_minor);
  const std::string render = "renderD" + std::to_string(render_minor);
  WriteFile(drm + card + "/dev", "226:" + std::to_string(card_minor) + "\n");
  WriteFile(drm + render + "/dev", "226:" + std::to_string(render_minor) + "\n");
  if (with_dev_nodes) {
    WriteFile(root + "/dev/dri/" + card, "");
    WriteFile(root + "/dev/dri/" + render, "");
  }
}

VdevConf MakeVdevConf(int vdev_id, int card, const std::string& bdf, int cus, uint64_t mib,
                      int pipe_id) {
  VdevConf c;
  c.pci_bus_id = bdf;
  c.cu_mask_lo = cus >= 64 ? ~uint64_t{0} : (uint64_t{1} << cus) - 1;
  c.cu_mask_hi = cus > 64 ? (uint64_t{1} << (cus - 64)) - 1 : 0;
  c.cu_count = cus;
  c.mem_mib = mib;
  c.device_id = card;
  c.vdev_id = vdev_id;
  c.pipe_id = pipe_id;
  return c;
}

void WriteVdevConf(const std::string& root, const VdevConf& conf, int file_index) {
  int n = file_index >= 0 ? file_index : conf.vdev_id;
  WriteFile(root + "/etc/vdev/vdev" + std::to_string(n) + ".conf", FormatVdevConf(conf));
}

MigConf MakeMigConf(const std::string& bdf, int gi, int slices, uint64_t memory_mb,
                    const std::string& uuid) {
  MigConf c;
  c.gi.pci = bdf;
  c.gi.id = gi;
  c.gi.pipe_mask = "0x03";
  c.gi.gpu_slice_mask = "0x1";
  c.gi.cu_mask_lo = "0x00000000000fffff";
  c.gi.cu_mask_hi = "0x0000000000000000";
  c.gi.profile_id = slices == 1 ? 3 : (slices == 2 ? 1 : 0);
  c.gi.gi_count_max = 4 / slices;
  c.gi.cu_count = 20 * slices;
  c.gi.gpu_slice_count = slices;
  c.gi.memory_size_mb = memory_mb;
  c.gi.placement_start = 0;
  c.gi.placement_size = slices;
  c.ci.pci = bdf;
  c.ci.gi_id = gi;
  c.ci.id = 0;
  c.ci.pipe_mask = c.gi.pipe_mask;
  c.ci.gpu_slice_mask = c.gi.gpu_slice_mask;
  c.ci.cu_mask_lo = c.gi.cu_mask_lo;
  c.ci.cu_mask_hi = c.gi.cu_mask_hi;
  c.ci.profile_id = c.gi.profile_id;
  c.ci.ci_count_max = 1;
  c.ci.cu_count = c.gi.cu_count;
  c.ci.gpu_slice_count = slices;
  c.ci.placement_start = 0;
  c.ci.placement_size = slices;
  c.ci.mig_uuid = uuid;
  return c;
}

void WriteMigConf(const std::string& root, int card, const MigConf& conf) {
  WriteFile(root + "/etc/dmi_mig_config/ci/dev" + std::to_string(card) + "gi" +
                std::to_string(conf.gi.id) + "ci" + std::to_string(conf.ci.id) + ".conf",
            FormatMigConf(conf));
}

void WriteKfdNode(const std::string& root, int node, int gpu_id, int array_count,
                  int simd_arrays_per_engine) {
  const std::string dir = root + "/sys/class/kfd/kfd/topology/nodes/" + std::to_string(node);
  WriteFile(dir + "/gpu_id", std::to_string(gpu_id) + "\n");
  WriteFile(dir + "/properties",
            "cpu_cores_count 0\nsimd_count " + std::to_string(gpu_id == 0 ? 0 : 320) +
                "\narray_count " + std::to_string(array_count) + "\nsimd_arrays_per_engine " +
                std::to_string(simd_arrays_per_engine) + "\ncu_per_simd_array 8\n");
}

std::vector<FakeCard> Z100lCards() {
  const char* bdfs[] = {"0000:0b:00.0", "0000:0e:00.0", "0000:8b:00.0", "0000:8e:00.0"};
  const char* serials[] = {"T6Q2210021050101", "T6Q2210021050201", "T6Q2210021060101",
                           "T6Q2210021060201"};
  std::vector<FakeCard> cards;
  for (int i = 0; i < 4; ++i) {
    FakeCard c;
    c.bdf = bdfs[i];
    c.dmi_name = "Z100L";
    c.serial = serials[i];
    c.pci_device_id = 0x55b7;
    c.compute_units = 60;
    c.memory_bytes = 32752 * kMiB;
    c.numa_node = i < 2 ? 0 : 1;
    cards.push_back(c);
  }
  return cards;
}

DmiDeviceInfo DriverView(int card, int cus, uint64_t mib, uint64_t container) {
  DmiDeviceInfo info;
  info.name = "Z100L";
  info.compute_units = cus;
  info.global_memory_bytes = mib * kMiB;
  info.parent_card = card;
  info.container_id = container;
  return info;
}

void AddVhcu(const std::string& root, FakeVendorLib* fake, int id, int card, int cus, uint64_t mib,
             int pipe_id) {
  WriteVdevConf(root, MakeVdevConf(id, card, fake->cards[card].bdf, cus, mib, pipe_id));
  fake->vhcus[id] = DriverView(card, cus, mib);
}

VhcuNode::VhcuNode() {
  auto lib = std::make_unique<FakeVendorLib>();
  lib->cards = Z100lCards();
  fake = lib.get();
  for (int i = 0; i < 6; ++i) {
    if (i < 4) {
      AddVhcu(root, fake, i, 2, 15, 8188, i);
    } else {
      AddVhcu(root, fake, i, 3, 30, 16376, i - 4);
    }
  }
  HostBackendOptions options;
  options.host_root = root;
  backend = NewHostBackend(options, std::move(lib));
}

NodeInventory VhcuNode::Discover() {
  auto inv = backend->Discover();
  BOOST_REQUIRE_MESSAGE(inv.ok(), inv.status().ToString());
  return *inv;
}

std::vector<int> VhcuNode::VhcuIds() { return testing::VhcuIds(Discover()); }

std::string VhcuNode::ConfPath(int id) const {
  return root + "/etc/vdev/vdev" + std::to_string(id) + ".conf";
}

std::vector<int> VhcuIds(const NodeInventory& inv) {
  std::vector<int> ids;
  for (const Vhcu& v : inv.vhcus) ids.push_back(v.id);
  return ids;
}

}  // namespace hcudp::testing
