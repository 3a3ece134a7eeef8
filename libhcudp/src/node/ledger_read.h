// Reads the ownership ledger (hcudp/ledger.h) from its records under one
// host root. Internal to hcudp::Node; the DRA and HAMi agents reach it
// through the Node.
#ifndef HCUDP_SRC_NODE_LEDGER_READ_H_
#define HCUDP_SRC_NODE_LEDGER_READ_H_

#include <functional>
#include <string>
#include <vector>

#include "hcudp/ledger.h"
#include "hcudp/status.h"

namespace hcudp::internal {

struct LedgerSources {
  // The node's root, as Options::host_root; ReadLedger reads through a
  // HostFs made from it.
  std::string host_root;
  // The CDI spec directory as a host path under host_root (Hygon's state
  // file is there); "" skips Hygon's state.
  std::string cdi_dir;
  // Kubelet's pod-resources; null: not asked.
  std::function<StatusOr<std::vector<Holder>>()> pod_resources;
};

// Never fails: what cannot be read is a gap (Holdings::gaps).
Holdings ReadLedger(const LedgerSources& sources);

}  // namespace hcudp::internal

#endif  // HCUDP_SRC_NODE_LEDGER_READ_H_
