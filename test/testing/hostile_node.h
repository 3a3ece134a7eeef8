// Hostile node faults for tests (issue 23): a per-card query-failure switch
// for any VendorLib (the in-process sim's; the stand-in vendor libraries
// have knob query_fails), and a torn vHCU conf as a power cut in the middle
// of a rewrite leaves it. Test doubles only: nothing here is in the product.
#ifndef HCUDP_TEST_TESTING_HOSTILE_NODE_H_
#define HCUDP_TEST_TESTING_HOSTILE_NODE_H_

#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "hcudp/backend.h"
#include "hcudp/vendor_lib.h"

namespace hcudp::testing {

// Which cards' queries fail; shared by a test and the VendorLib it wraps,
// switchable while a backend runs.
class CardFaults {
 public:
  void Fail(int card);
  void Heal(int card);
  bool Failing(int card) const;

 private:
  mutable std::mutex mu_;
  std::set<int> failing_;
};

// `inner` with every per-card query (BDF, serial, IDs, memory, NUMA, links,
// DMI info, remaining) about a failing card answering Unavailable; the card
// count and everything else pass through.
std::unique_ptr<VendorLib> WithCardFaults(std::unique_ptr<VendorLib> inner,
                                          std::shared_ptr<CardFaults> faults);

// A HostBackend over the SimNode file at `sim_node_path` rendered under
// `host_root`, with `faults` between it and the sim.
std::unique_ptr<Backend> NewFaultySimBackend(const std::string& sim_node_path,
                                             const std::string& host_root,
                                             std::shared_ptr<CardFaults> faults);

enum class Tear {
  kEmpty,  // truncated to nothing: the rewrite's open(O_TRUNC) ran, no write
  kHalf,   // the first half of its bytes: the write was cut
};

// Tears host_root/etc/vdev/vdev<id>.conf and returns what it held (to put
// back with WriteFile, as the rewrite finishing). The test fails when the
// conf does not exist.
std::string TearVhcuConf(const std::string& host_root, int vhcu_id, Tear how);

}  // namespace hcudp::testing

#endif  // HCUDP_TEST_TESTING_HOSTILE_NODE_H_
