// HostBackend: the node as node files under host-root plus a VendorLib. The
// same class serves real nodes (DlopenVendorLib) and simulated ones
// (SimVendorLib), so discovery and the vHCU lifecycle have one code path.
#ifndef HCUDP_SRC_BACKEND_HOST_BACKEND_H_
#define HCUDP_SRC_BACKEND_HOST_BACKEND_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "backend/card_events.h"
#include "backend/card_keeper.h"
#include "hcudp/backend.h"
#include "hcudp_internal/host_fs.h"
#include "hcudp_internal/thread_annotations.h"

namespace hcudp {

class HostBackend final : public Backend {
 public:
  // `vendor` must already be Init()-ed; it is Shutdown() on destruction.
  HostBackend(HostBackendOptions options, std::unique_ptr<VendorLib> vendor);
  ~HostBackend() override;

  StatusOr<NodeInventory> Discover() override { return DiscoverAs(CardKeeper::LookKind::kLook); }
  StatusOr<NodeInventory> Recheck() override { return DiscoverAs(CardKeeper::LookKind::kRecheck); }
  StatusOr<std::vector<CardHealthReport>> QueryHealth() override;
  StatusOr<Vhcu> CreateVhcu(int card, int compute_units, uint64_t memory_mib) override;
  Status DestroyVhcu(int id) override;
  const std::string& host_root() const override { return options_.host_root; }
  std::vector<std::string> WatchPaths() const override;
  Status RestartRequired() const override { return vendor_->RestartRequired(); }
  // RSMI event notification on a thread of its own (backend/card_events.h).
  Status StartEvents(std::function<void(const BackendEvent&)> on_event) override;
  void StopEvents() override;

 private:
  StatusOr<NodeInventory> DiscoverAs(CardKeeper::LookKind kind);
  // Cards the VendorLib reports; a card whose queries fail is logged and
  // reported as failed (unknown, never absent). Errors only when the card
  // count itself is unknown.
  StatusOr<CardLook> DiscoverCards();
  StatusOr<Card> DiscoverCard(int index);
  // Sets each card's health from the last QueryHealth() (never runs the
  // health source itself: inventory and health are separate questions).
  void ApplyLastHealth(std::vector<Card>* cards);
  std::vector<Link> DiscoverLinks(const std::vector<Card>& cards);
  // Index and BDF of each card, for mapping a vHCU's parent BDF to its index.
  std::vector<Card> CardBdfs();
  // Stop + destroy + remove the conf; the caller holds the host-wide vHCU lock.
  Status DestroyVhcuLocked(int id);

  const HostBackendOptions options_;
  // The node's files, under options_.host_root.
  const internal::HostFs fs_{options_.host_root};
  const std::unique_ptr<VendorLib> vendor_;  // thread-safe by contract
  CardEvents events_{*vendor_};              // stopped before vendor_ shuts down
  // Cards across discoveries: one a discovery misses stays unknown until its
  // absence is confirmed (issue 23).
  CardKeeper cards_;
  // vHCU create/destroy run under the host-wide vHCU lock (hcudp/vhcu_lock.h),
  // which serialises them against hcuctl, other processes and our own threads.

  // The last successful QueryHealth(), by BDF; empty until one succeeded.
  Mutex health_mutex_;  // a leaf: no vendor call is made under it
  std::map<std::string, CardHealthReport> last_health_ HCUDP_GUARDED_BY(health_mutex_);
  bool have_health_ HCUDP_GUARDED_BY(health_mutex_) = false;
};

}  // namespace hcudp

#endif  // HCUDP_SRC_BACKEND_HOST_BACKEND_H_
