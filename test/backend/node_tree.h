// Builders for the node files HostBackend reads, written under a test
// host-root: sysfs DRI directories, /dev nodes, vHCU and MIG confs, KFD
// topology nodes.
#ifndef HCUDP_TEST_BACKEND_NODE_TREE_H_
#define HCUDP_TEST_BACKEND_NODE_TREE_H_

#include <memory>
#include <string>
#include <vector>

#include "backend/fake_vendor_lib.h"
#include "hcudp/backend.h"
#include "hcudp/mig_conf.h"
#include "hcudp/vdev_conf.h"
#include "testing/testutil.h"

namespace hcudp::testing {

// sys/module/<module>/drivers/pci:<driver>/<bdf>/drm/{card<c>,renderD<r>}/
// and, when `with_dev_nodes`, dev/dri/card<c> and dev/dri/renderD<r>.
void WriteDri(const std::string& root, const std::string& bdf, int card_minor, int render_minor,
              bool with_dev_nodes = true, const std::string& module = "hycu",
              const std::string& driver = "hycu");

// The vdev<N>.conf of a vHCU (N = conf.vdev_id unless `file_index` >= 0).
void WriteVdevConf(const std::string& root, const VdevConf& conf, int file_index = -1);
VdevConf MakeVdevConf(int vdev_id, int card, const std::string& bdf, int cus, uint64_t mib,
                      int pipe_id);

// A CI conf dev<card>gi<gi>ci0.conf for a GI/CI of `slices` slices.
MigConf MakeMigConf(const std::string& bdf, int gi, int slices, uint64_t memory_mb,
                    const std::string& uuid);
void WriteMigConf(const std::string& root, int card, const MigConf& conf);

// sys/class/kfd/kfd/topology/nodes/<node>/{gpu_id,properties}.
void WriteKfdNode(const std::string& root, int node, int gpu_id, int array_count,
                  int simd_arrays_per_engine);

// The demo node B cards (4 x Z100L) as FakeCards.
std::vector<FakeCard> Z100lCards();

// What the driver says of a vHCU (dmiGetVDeviceInfo).
DmiDeviceInfo DriverView(int card, int cus, uint64_t mib, uint64_t container = 0);
// A vHCU as the driver makes it: its vdev<id>.conf under `root` and its
// entry in `fake`.
void AddVhcu(const std::string& root, FakeVendorLib* fake, int id, int card, int cus, uint64_t mib,
             int pipe_id);

// Demo node B behind a HostBackend: vdev0-3 (15 CU, 8188 MiB) on card 2,
// vdev4-5 (30 CU, 16376 MiB) on card 3, known to the driver and recorded in
// /etc/vdev. The host-root is a directory of its own, so a test may remove
// or rename it.
struct VhcuNode {
  TempDir dir;
  std::string root = dir.Join("root");
  FakeVendorLib* fake = nullptr;
  std::unique_ptr<Backend> backend;

  VhcuNode();
  NodeInventory Discover();  // requires success
  std::vector<int> VhcuIds();
  std::string ConfPath(int id) const;
};

// The ids of the inventory's vHCUs, in its order.
std::vector<int> VhcuIds(const NodeInventory& inv);

}  // namespace hcudp::testing

#endif  // HCUDP_TEST_BACKEND_NODE_TREE_H_
