// The simulated node: a SimNode YAML file (DESIGN.md §6) stands in for the
// vendor libraries. ParseSimNode is strict: every field typed and range
// checked, unknown fields rejected; errors name the field and the line.
// SimVendorLib answers the VendorLib questions from it and renders, under a
// host-root, the files the real code reads (sysfs DRI nodes, /dev nodes,
// /etc/vdev, /etc/dmi_mig_config, KFD topology), exactly as a driver would.
#ifndef HCUDP_SIM_NODE_H_
#define HCUDP_SIM_NODE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hcudp/device.h"
#include "hcudp/export.h"
#include "hcudp/status.h"
#include "hcudp/vendor_lib.h"

namespace hcudp {

struct SimCard {
  int index = 0;
  std::string bdf;
  std::string model;
  uint16_t pci_device_id = 0;
  std::string serial;
  int compute_units = 0;
  uint64_t memory_mib = 0;
  int numa_node = kNoNumaNode;
  int card_minor = 0;
  int render_minor = 0;
  Health health = Health::kHealthy;
  // PCIe root complex the card hangs from, "pci<domain>:<bus>" (field
  // pcieRoot; default "pci<the card's domain>:00"). The sim renders the card
  // under host-root/sys/devices/<pcieRoot>/ and links
  // /sys/bus/pci/devices/<bdf> there, as the kernel does.
  std::string pcie_root;
};

struct SimLinkSpec {
  LinkType type = LinkType::kPcie;
  int hops = 2;
  int weight = 40;
};

struct SimLinkPair {
  int a = 0;
  int b = 0;
  SimLinkSpec spec;
};

struct SimVhcu {
  int id = 0;
  int card = 0;
  int compute_units = 0;
  uint64_t memory_mib = 0;
  int pipe_id = 0;
};

struct SimMigInstance {
  int card = 0;
  int gi = 0;
  int ci = 0;
  std::string profile;  // "4g.31gb" or "2c.4g.31gb"
  int compute_units = 0;
  uint64_t memory_mib = 0;
  std::string uuid;
};

struct HCUDP_EXPORT SimNode {
  std::string api_version;     // "hcudp.hygon.com/v1"
  std::string kind;            // "SimNode"
  std::string name;
  std::string driver_version;
  std::vector<SimCard> cards;
  SimLinkSpec link_default;    // PCIE/2/40 unless links.default says otherwise
  std::vector<SimLinkPair> link_pairs;
  int max_vhcus_per_card = 4;
  std::vector<SimVhcu> vhcus;
  bool mig_enabled = false;
  std::vector<SimMigInstance> mig_instances;

  const SimCard* FindCard(int index) const;
  // The link between two distinct cards (pairs are symmetric).
  SimLinkSpec LinkBetween(int a, int b) const;
};

HCUDP_EXPORT StatusOr<SimNode> ParseSimNode(std::string_view yaml);
HCUDP_EXPORT StatusOr<SimNode> LoadSimNode(const std::string& path);

// Private host-root for a SimNode file: <$TMPDIR or /tmp>/hcudp-sim-<name>-<hash
// of the absolute path>. Daemon and hcuctl pointed at one file share it.
HCUDP_EXPORT std::string DefaultSimHostRoot(const std::string& sim_node_path);

// Renders the node files under host_root (refuses "/" and empty). Cards,
// DRI, /dev, KFD topology and MIG files are rewritten to match `node`; the
// vHCU confs of node.vhcus are written only when host_root has none yet
// (first render), so created and destroyed vHCUs survive re-renders.
HCUDP_EXPORT Status RenderSimNode(const SimNode& node, const std::string& host_root);

// A VendorLib over the SimNode file at `path`, rendered under `host_root`.
// The file is re-read whenever it changes (checked on each call, cheap); an
// invalid edit is logged and ignored and the last good state stays.
// vHCU state lives in host_root/etc/vdev/vdevN.conf, as on a real node.
HCUDP_EXPORT StatusOr<std::unique_ptr<VendorLib>> NewSimVendorLib(const std::string& path,
                                                                  const std::string& host_root);

}  // namespace hcudp

#endif  // HCUDP_SIM_NODE_H_
