// An in-memory Backend for VhcuManager tests: two K100_AI cards, vHCUs in a
// list (each with its vdev<N>.conf under the host root, as the driver writes
// it), and knobs to make create and destroy fail the ways hardware does.
#ifndef HCUDP_TEST_HAMI_FAKE_BACKEND_H_
#define HCUDP_TEST_HAMI_FAKE_BACKEND_H_

#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "hcudp/backend.h"

namespace hcudp::testing {

class FakeBackend final : public Backend {
 public:
  explicit FakeBackend(std::string host_root);

  StatusOr<NodeInventory> Discover() override;
  StatusOr<std::vector<CardHealthReport>> QueryHealth() override;
  StatusOr<Vhcu> CreateVhcu(int card, int compute_units, uint64_t memory_mib) override;
  Status DestroyVhcu(int id) override;
  const std::string& host_root() const override { return host_root_; }
  std::vector<std::string> WatchPaths() const override { return {}; }

  // Adds a vHCU directly (an administrator's, or one made before a crash).
  int AddVhcu(int card, int compute_units, uint64_t memory_mib);
  std::vector<Vhcu> vhcus();
  bool HasVhcu(int id);
  // Changes the parent BDF a vHCU reports (its conf's PciBusId, rewritten).
  void SetBdf(int id, const std::string& bdf);

  // The card at `bdf` is missed by discovery until RestoreCards(): the cards
  // after it answer one index lower, as the driver's probe order would, and
  // so do their vHCUs (their confs keep the index they were made at).
  void MissCard(const std::string& bdf);
  void RestoreCards();

  // Knobs (set before the call they affect).
  int busy_destroys = 0;                   // DestroyVhcu answers Unavailable this many times
  bool fail_create = false;                // CreateVhcu fails without creating
  bool fail_create_after_it = false;       // CreateVhcu creates a vHCU, then fails
  std::function<void(int id)> on_destroy;  // called before a successful destroy
  std::function<void()> on_create;         // called first in CreateVhcu (another creator)
  // vHCUs whose conf cannot be read (torn, empty): Discover leaves them out
  // and reports a gap for each; the driver still has them.
  std::set<int> unreadable;
  int destroy_calls = 0;

 private:
  int AddLocked(int card, int compute_units, uint64_t memory_mib);
  void RenumberLocked(std::vector<Card> cards);

  const std::string host_root_;
  std::mutex mu_;
  NodeInventory inventory_;
  std::vector<Card> all_cards_;  // as made, none missed
};

}  // namespace hcudp::testing

#endif  // HCUDP_TEST_HAMI_FAKE_BACKEND_H_
