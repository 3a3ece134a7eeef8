#include <boost/test/unit_test.hpp>
#include <filesystem>

#include "hcudp/mig_conf.h"
#include "hcudp/sim_node.h"
#include "hcudp/vdev_conf.h"
#include "testing/testutil.h"

namespace hcudp {
namespace {

using testing::LoadSourceNode;

using testing::PathExists;
using testing::ReadFile;

// The "name value" line of a KFD properties file, or "".
std::string Property(const std::string& properties, const std::string& name) {
  size_t pos = properties.find("\n" + name + " ");
  if (pos == std::string::npos && properties.rfind(name + " ", 0) == 0)
    pos = 0;
  else if (pos != std::string::npos)
    ++pos;
  if (pos == std::string::npos) return "";
  size_t start = pos + name.size() + 1;
  return properties.substr(start, properties.find('\n', start) - start);
}

struct Rendered {
  Rendered(const std::string& relative) : node(LoadSourceNode(relative)) {
    Status s = RenderSimNode(node, dir.path());
    BOOST_REQUIRE_MESSAGE(s.ok(), s.ToString());
  }
  std::string At(const std::string& relative) const { return dir.Join(relative); }
  testing::TempDir dir;
  SimNode node;
};

BOOST_AUTO_TEST_SUITE(sim_render)

BOOST_AUTO_TEST_CASE(refuses_root_and_empty_host_root) {
  SimNode node = LoadSourceNode("demo/nodes/k100ai-8.yaml");
  for (const char* root : {"", "/", "//", "/tmp/..", "/./"}) {
    Status s = RenderSimNode(node, root);
    BOOST_TEST(!s.ok(), root);
    BOOST_TEST((s.code() == StatusCode::kInvalidArgument));
  }
}

BOOST_AUTO_TEST_CASE(writes_module_state_and_dri_directories) {
  Rendered r("demo/nodes/k100ai-8.yaml");
  BOOST_TEST(ReadFile(r.At("sys/module/hycu/initstate")) == "live\n");
  BOOST_TEST(ReadFile(r.At("sys/module/hycu/version")) == "6.3.27-V1.2.5\n");
  BOOST_TEST(PathExists(r.At("sys/module/hycu/drivers/pci:hycu/0000:09:00.0/drm/card1")));
  BOOST_TEST(PathExists(r.At("sys/module/hycu/drivers/pci:hycu/0000:e9:00.0/drm/renderD135")));
}

BOOST_AUTO_TEST_CASE(writes_pci_identity_of_each_card) {
  Rendered r("demo/nodes/z100l-mixed.yaml");
  std::string dev = "sys/bus/pci/devices/0000:8e:00.0/";
  BOOST_TEST(ReadFile(r.At(dev + "vendor")) == "0x1d94\n");
  BOOST_TEST(ReadFile(r.At(dev + "device")) == "0x55b7\n");
  BOOST_TEST(ReadFile(r.At(dev + "class")) == "0x038000\n");
  BOOST_TEST(ReadFile(r.At(dev + "numa_node")) == "1\n");
}

// As the kernel: /sys/bus/pci/devices/<bdf> links into /sys/devices under
// the card's root complex, whose name the real code reads for pcieRoot; a
// root that changes in the SimNode moves the card on the next render.
BOOST_AUTO_TEST_CASE(each_card_hangs_from_its_root_complex_in_sys_devices) {
  Rendered r("demo/nodes/z100l-mixed.yaml");
  std::error_code ec;
  const std::string link = r.At("sys/bus/pci/devices/0000:8e:00.0");
  BOOST_TEST(std::filesystem::is_symlink(link));
  const std::string target = std::filesystem::read_symlink(link, ec).string();
  BOOST_TEST(target.rfind("../../../devices/pci0000:80/", 0) == 0u, target);
  BOOST_TEST(target.substr(target.rfind('/') + 1) == "0000:8e:00.0");
  BOOST_TEST(PathExists(r.At("sys/devices/pci0000:00")));

  SimNode moved = r.node;
  moved.cards[3].pcie_root = "pci0000:00";
  Status s = RenderSimNode(moved, r.dir.path());
  BOOST_REQUIRE_MESSAGE(s.ok(), s.ToString());
  const std::string now = std::filesystem::read_symlink(link, ec).string();
  BOOST_TEST(now.rfind("../../../devices/pci0000:00/", 0) == 0u, now);
  BOOST_TEST(ReadFile(link + "/numa_node") == "1\n");
  const std::string old_dir =
      "sys/devices/" + target.substr(std::string("../../../devices/").size());
  BOOST_TEST(!PathExists(r.At(old_dir)), old_dir);
}

BOOST_AUTO_TEST_CASE(kfd_topology_lists_cpu_nodes_then_gpu_nodes) {
  Rendered r("demo/nodes/z100l-mixed.yaml");  // 2 NUMA nodes, 4 cards
  std::string nodes = "sys/class/kfd/kfd/topology/nodes/";
  BOOST_TEST(ReadFile(r.At(nodes + "0/gpu_id")) == "0\n");
  BOOST_TEST(ReadFile(r.At(nodes + "1/gpu_id")) == "0\n");
  BOOST_TEST(Property(ReadFile(r.At(nodes + "1/properties")), "simd_count") == "0");
  BOOST_TEST(ReadFile(r.At(nodes + "2/gpu_id")) != "0\n");
  std::string card3 = ReadFile(r.At(nodes + "5/properties"));
  BOOST_TEST(Property(card3, "simd_count") == "240");
  BOOST_TEST(Property(card3, "simd_per_cu") == "4");
  BOOST_TEST(Property(card3, "array_count") == "16");
  BOOST_TEST(Property(card3, "simd_arrays_per_engine") == "2");
  BOOST_TEST(Property(card3, "location_id") == "36352");  // 0000:8e:00.0
  BOOST_TEST(Property(card3, "domain") == "0");
  BOOST_TEST(Property(card3, "drm_render_minor") == "131");
  BOOST_TEST(Property(card3, "vendor_id") == "7572");
  BOOST_TEST(Property(card3, "device_id") == "21943");  // 0x55b7
  BOOST_TEST(!Property(card3, "unique_id").empty());
  BOOST_TEST(!PathExists(r.At(nodes + "6")));
}

BOOST_AUTO_TEST_CASE(dev_nodes_are_empty_files) {
  Rendered r("demo/nodes/k100ai-8.yaml");
  for (const char* f : {"dev/kfd", "dev/mkfd", "dev/dri/card1", "dev/dri/card8",
                        "dev/dri/renderD128", "dev/dri/renderD135"}) {
    BOOST_TEST(PathExists(r.At(f)), f);
    BOOST_TEST(ReadFile(r.At(f)).empty(), f);
  }
}

BOOST_AUTO_TEST_CASE(seeds_vdev_confs_with_lowest_free_cu_masks) {
  Rendered r("demo/nodes/z100l-mixed.yaml");
  BOOST_TEST(ReadFile(r.At("etc/vdev/vdev4.conf")) ==
             "PciBusId: 0000:8e:00.0\ncu_mask: 0x000000003fffffff\ncu_mask: 0x0000000000000000\n"
             "cu_count: 30\nmem: 16376 MiB\ndevice_id: 3\nvdev_id: 4\npipe_id: 0\nenable: 1\n");
  const uint64_t lo[] = {0x7fffull,         0x3fff8000ull,
                         0x1fffc0000000ull, 0x0fffe00000000000ull,
                         0x3fffffffull,     0x0fffffffc0000000ull};
  for (int id = 0; id < 6; ++id) {
    StatusOr<VdevConf> conf =
        ParseVdevConf(ReadFile(r.At("etc/vdev/vdev" + std::to_string(id) + ".conf")));
    BOOST_REQUIRE(conf.ok());
    BOOST_TEST(conf->cu_mask_lo == lo[id]);
    BOOST_TEST(CheckVdevConfName(*conf, id).ok());
  }
  BOOST_TEST(!PathExists(r.At("etc/vdev/vdev6.conf")));
  BOOST_TEST(PathExists(r.At(".hcudp-sim/seeded")));
}

BOOST_AUTO_TEST_CASE(renders_mig_confs_matching_the_reference_example) {
  Rendered r("demo/nodes/bw-mig.yaml");
  BOOST_TEST(ReadFile(r.At("etc/dmi_mig_config/dev3")) == "0000:b9:00.0\n");
  std::string text = ReadFile(r.At("etc/dmi_mig_config/ci/dev3gi1ci0.conf"));
  BOOST_TEST(text.find("pci:                0000:b9:00.0\nid:                 1\n"
                       "pipe_mask:          0x0c\ngpu_slice_mask:     0xc\n"
                       "cu_mask:            0xffffff0000000000\n"
                       "cu_mask:            0x000000000000ffff\n") == 0u,
             text);
  // Byte for byte the example of hcu-hardware.md §6.3 (kept as a fuzz seed).
  BOOST_TEST(text == ReadFile(testing::SourcePath("test/fixtures/mig/dev3gi1ci0.conf")));
  StatusOr<MigConf> conf = ParseMigConf(text);
  BOOST_REQUIRE_MESSAGE(conf.ok(), conf.status().ToString());
  BOOST_TEST(conf->gi.placement_start == 2);
  BOOST_TEST(conf->ci.mig_uuid == "0fd630f1-f29d-4da9-953f-48f1a09f76b5");
}

BOOST_AUTO_TEST_CASE(every_mig_conf_parses_back_to_its_profile) {
  Rendered r("demo/nodes/bw-mig.yaml");
  for (const SimMigInstance& mi : r.node.mig_instances) {
    std::string name = "dev" + std::to_string(mi.card) + "gi" + std::to_string(mi.gi) + "ci" +
                       std::to_string(mi.ci) + ".conf";
    StatusOr<MigConf> conf = ParseMigConf(ReadFile(r.At("etc/dmi_mig_config/ci/" + name)));
    BOOST_REQUIRE_MESSAGE(conf.ok(), name << ": " << conf.status().ToString());
    BOOST_TEST(MigProfileName(8, conf->gi.gpu_slice_count, conf->ci.gpu_slice_count,
                              conf->gi.memory_size_mb) == mi.profile,
               name);
    BOOST_TEST(conf->ci.cu_count == mi.compute_units);
  }
}

BOOST_AUTO_TEST_CASE(no_mig_files_when_mig_is_disabled) {
  Rendered r("demo/nodes/k100ai-8.yaml");
  BOOST_TEST(!PathExists(r.At("etc/dmi_mig_config/ci")));
}

BOOST_AUTO_TEST_CASE(rerender_removes_what_is_gone_and_keeps_vhcu_state) {
  Rendered r("demo/nodes/z100l-mixed.yaml");
  std::remove(r.At("etc/vdev/vdev5.conf").c_str());  // destroyed after the first render
  SimNode smaller = r.node;
  smaller.cards.pop_back();         // card 3 disappears
  smaller.cards[0].card_minor = 9;  // card 0 renumbered
  BOOST_REQUIRE(RenderSimNode(smaller, r.dir.path()).ok());
  BOOST_TEST(!PathExists(r.At("sys/bus/pci/devices/0000:8e:00.0")));
  BOOST_TEST(!PathExists(r.At("sys/module/hycu/drivers/pci:hycu/0000:8e:00.0")));
  BOOST_TEST(!PathExists(r.At("dev/dri/renderD131")));
  BOOST_TEST(!PathExists(r.At("dev/dri/card1")));
  BOOST_TEST(PathExists(r.At("dev/dri/card9")));
  BOOST_TEST(!PathExists(r.At("sys/module/hycu/drivers/pci:hycu/0000:0b:00.0/drm/card1")));
  BOOST_TEST(PathExists(r.At("sys/module/hycu/drivers/pci:hycu/0000:0b:00.0/drm/card9")));
  BOOST_TEST(!PathExists(r.At("sys/class/kfd/kfd/topology/nodes/5")));
  BOOST_TEST(!PathExists(r.At("etc/vdev/vdev5.conf")));  // not resurrected
  BOOST_TEST(PathExists(r.At("etc/vdev/vdev4.conf")));
}

BOOST_AUTO_TEST_CASE(rerender_drops_mig_confs_no_longer_listed) {
  Rendered r("demo/nodes/bw-mig.yaml");
  SimNode fewer = r.node;
  fewer.mig_instances.pop_back();
  BOOST_REQUIRE(RenderSimNode(fewer, r.dir.path()).ok());
  BOOST_TEST(!PathExists(r.At("etc/dmi_mig_config/ci/dev3gi1ci0.conf")));
  BOOST_TEST(PathExists(r.At("etc/dmi_mig_config/ci/dev3gi3ci0.conf")));
  fewer.mig_enabled = false;
  BOOST_REQUIRE(RenderSimNode(fewer, r.dir.path()).ok());
  BOOST_TEST(!PathExists(r.At("etc/dmi_mig_config/ci")));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp
