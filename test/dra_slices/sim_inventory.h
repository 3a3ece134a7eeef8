// The inventory of a shipped SimNode, as the sim backend discovers it: what
// the DRA slice and RBAC tests build their pools from.
#ifndef HCUDP_TEST_DRA_SLICES_SIM_INVENTORY_H_
#define HCUDP_TEST_DRA_SLICES_SIM_INVENTORY_H_

#include <boost/test/unit_test.hpp>
#include <string>

#include "hcudp/backend.h"
#include "testing/testutil.h"

namespace hcudp::testing {

// `node_file` relative to the source tree (e.g. "demo/nodes/k100ai-8.yaml").
inline NodeInventory DiscoverSimNode(const std::string& node_file) {
  TempDir root;
  Options o;
  o.backend = BackendKind::kSim;
  o.sim_node_path = SourcePath(node_file);
  o.host_root = root.path();
  auto backend = OpenBackend(o);
  BOOST_REQUIRE_MESSAGE(backend.ok(), backend.status().ToString());
  auto inv = (*backend)->Discover();
  BOOST_REQUIRE_MESSAGE(inv.ok(), inv.status().ToString());
  return *inv;
}

}  // namespace hcudp::testing

#endif  // HCUDP_TEST_DRA_SLICES_SIM_INVENTORY_H_
