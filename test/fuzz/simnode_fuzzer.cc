// Fuzzes ParseSimNode. For every accepted node it also builds, without
// touching the disk, the files a render would write and checks they parse
// back: the sim must never produce a conf its own parsers reject.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "hcudp/mig_conf.h"
#include "hcudp/sim_node.h"
#include "hcudp/vdev_conf.h"
#include "sim/sim_layout.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  hcudp::StatusOr<hcudp::SimNode> node = hcudp::ParseSimNode(text);
  if (!node.ok()) {
    if (node.status().message().empty()) std::abort();
    return 0;
  }
  hcudp::sim::KfdTopology(*node);
  for (const auto& [id, conf] : hcudp::sim::SeedVdevConfs(*node)) {
    hcudp::StatusOr<hcudp::VdevConf> back = hcudp::ParseVdevConf(hcudp::FormatVdevConf(conf));
    if (!back.ok() || back->vdev_id != id) std::abort();
  }
  for (const auto& [name, conf] : hcudp::sim::MigConfs(*node)) {
    hcudp::StatusOr<hcudp::MigConf> back = hcudp::ParseMigConf(hcudp::FormatMigConf(conf));
    if (!back.ok() || !hcudp::ParseMigConfFileName(name).ok()) std::abort();
  }
  return 0;
}
