// The system under test of the model (issue 28): the DRA side of the
// library, composed the way the daemon composes it. This is the one file
// that knows how: when hcudp::Node and hcudp::DraAgent land, only this
// adapter changes; the operations and invariants (model.h) stay.
//
// Today (main with Node and DraAgent) it composes what DraAgent composes,
// without its threads and publisher (which need an API server):
//   Open():  Node (over the faulty sim backend) + VhcuManager + Preparer;
//            Recover(), then the first publish (DraAgent publishes only
//            once Recover has run).
//   Look():  a watcher look: Node::Look() (fail closed, with memory); when
//            the inventory changed, the whole-card spec is rewritten and
//            the slices recomputed as DraAgent::Impl::Refresh does
//            (OfferSlices over the ledger + BuildPoolPlan).
//   Prepare / Unprepare: the Preparer's, then the slices recomputed, as
//            DraAgent does after each.
//   as_daemon_today = false (republish_after_calls): the slices only on a
//            node change and first before Recover, as dra_mode.cc did
//            before DraAgent (issue 28 #4), kept to show that bug.
//   Offers(mode): the one offer rule (Node::Offers) for every mode, which
//            the invariants check beside the published slices.
//   Prepare / Unprepare / Tick: the Preparer's; nothing is recomputed
//            after them unless the node changed (as today).
// A kill inside an operation: the call runs in a forked child, which the
// test-only hooks PreparerOptions::crash_after and
// VhcuManagerOptions::crash_after end (_exit) at the armed step, leaving
// the files as a kill -9 would (no undo path runs). The parent's objects
// are then stale: the caller restarts, as after a real kill.
#ifndef HCUDP_TEST_MODEL_MODEL_SUT_H_
#define HCUDP_TEST_MODEL_MODEL_SUT_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hcudp/backend.h"
#include "hcudp/node.h"
#include "hcudp/offer.h"
#include "hcudp/dra/preparer.h"
#include "hcudp/dra/slices.h"
#include "hcudp/vhcu_manager.h"
#include "testing/hostile_node.h"
#include "testing/sim_clock.h"

namespace hcudp::model {

// One device of the published pool, as the scheduler reads it.
struct OfferedDevice {
  std::string name;
  dra::PoolDeviceType type = dra::PoolDeviceType::kCard;
  std::string card_bdf;
  int vhcu_id = -1;
  int64_t cores = 0;
  int64_t memory_bytes = 0;
  bool tainted = false;
};

// Where a crash is armed: after a Preparer step or a vHCU create step.
struct CrashPoint {
  std::optional<dra::PrepareStep> prepare;
  std::optional<VhcuCreateStep> vhcu;
};

struct SutOptions {
  std::string root;            // host root (temp dir)
  std::string sim_node_path;   // the SimNode YAML the sim reads
  std::string node_name = "node-a";
  std::shared_ptr<testing::CardFaults> faults;
  dra::ClaimFetcher fetch;     // the API server's GET of a claim
  testing::SimClock* clock = nullptr;
  // The slices are recomputed after Recover, Prepare and Unprepare, as
  // DraAgent does. False: only on a node change, and first before
  // Recover, as dra_mode.cc did before DraAgent (issue 28 #4).
  bool republish_after_calls = true;
};

class DraSut {
 public:
  explicit DraSut(SutOptions options);
  ~DraSut();

  // What a (re)started daemon does before it serves. Error: the start failed.
  Status Open();
  // The process ends (a kill: nothing is flushed beyond what is on disk).
  void Close();
  bool open() const { return preparer_ != nullptr; }

  // Arms a kill for the next Prepare or Unprepare only: that call answers
  // Aborted, and crashed() is true until the next Open().
  void ArmCrash(CrashPoint point) { armed_ = point; }
  bool crashed() const { return crashed_; }

  StatusOr<dra::PrepareAnswer> Prepare(const dra::ClaimRef& ref);
  Status Unprepare(const dra::ClaimRef& ref);
  void Tick();
  // A watcher look at the node (inotify or pulse); republishes on change.
  void Look();
  // Recomputes the slices from a fresh look, changed or not.
  void Republish();

  // The pool as last published.
  const std::vector<OfferedDevice>& Published() const { return published_; }
  // The node now, as a fresh look sees it (for the invariants).
  StatusOr<NodeInventory> Discover();
  // The offer rule's verdict now, for `mode` (hcudp/offer.h).
  StatusOr<OfferPlan> Offers(OfferMode mode);
  std::vector<dra::PreparedClaim> Prepared() const;
  // The vHCU lifecycle (HAMi pods' vHCUs are made and reclaimed by it).
  VhcuManager& vhcus() { return *manager_; }

 private:
  void Publish(const NodeInventory& inventory);
  // Runs `call` in a forked child; true when the armed step killed it.
  bool RunKilled(const std::function<void()>& call);

  SutOptions options_;
  std::unique_ptr<Node> node_;
  std::unique_ptr<VhcuManager> manager_;
  std::unique_ptr<dra::Preparer> preparer_;
  std::string last_seen_;  // a digest of the last inventory published from
  std::vector<OfferedDevice> published_;
  CrashPoint armed_;
  bool crashed_ = false;
};

// A digest of what a watcher republishes on: cards, health, vHCUs, MIG
// instances, unknown cards and gaps.
std::string InventoryDigest(const NodeInventory& inventory);

}  // namespace hcudp::model

#endif  // HCUDP_TEST_MODEL_MODEL_SUT_H_
