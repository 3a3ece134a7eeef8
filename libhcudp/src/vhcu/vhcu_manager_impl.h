// VhcuManager::Impl: the state and steps of the dynamic-vHCU lifecycle
// (the state machine is documented in hcudp/vhcu_manager.h). Internal to
// vhcu_manager.cc and vhcu_recovery.cc.
//
// Locks, outermost first:
//   1. the host-wide vHCU lock (flock, VhcuHostLock): held by a create from
//      its snapshot to its mark, and by every destroy pass; the backend
//      takes it again (nested) inside, then its own locks (the vendor
//      library's RwMutex);
//   2. mu_: the in-memory state below; a leaf, taken briefly, never held
//      across a backend call, a file write, a wait or a callback.
// Callers (the HAMi agent) hold none of their own locks when they call in.
#ifndef HCUDP_SRC_VHCU_VHCU_MANAGER_IMPL_H_
#define HCUDP_SRC_VHCU_VHCU_MANAGER_IMPL_H_

#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "hcudp/clock.h"
#include "hcudp/vhcu_manager.h"
#include "hcudp_internal/host_fs.h"
#include "hcudp_internal/thread_annotations.h"
#include "vhcu/intent_record.h"

namespace hcudp {
namespace internal {

// Whether mark `mark` (of a vHCU, not a whole card) was written for vHCU
// `vhcu`, which has its id. The mark names the card by the index it had
// when the vHCU was made; a card missed then or now renumbers the cards
// after it, so that index is checked against the index `vhcu`'s card (by
// its BDF) answers at now, and against the one `vhcu`'s conf recorded when
// the driver made it (device_id):
//   kFound: either matches;
//   kAbsent: neither, the conf read: a vHCU made since on another card
//     reused the id (the mark is stale);
//   kUnknown: `vhcu`'s card is not discovered now, or its conf cannot be
//     read: nothing may be destroyed or forgotten on it.
// `why` says which, for the log.
Certainty MarkNamesVhcu(const std::string& host_root, const hami::MarkFileName& mark,
                        const Vhcu& vhcu, std::string* why);

}  // namespace internal

class VhcuManager::Impl {
 public:
  Impl(Backend* backend, VhcuManagerOptions options, Clock& clock);

  StatusOr<VhcuSweepResult> Recover(const PodLivenessFn& is_allocating) HCUDP_EXCLUDES(mu_);
  StatusOr<CreatedVhcu> CreateVhcu(const VhcuOwner& owner, int card, int compute_units,
                                   uint64_t memory_mib) HCUDP_EXCLUDES(mu_);
  StatusOr<MarkFile> WriteMark(const hami::MarkFileName& name,
                               MarkDurability durability = MarkDurability::kDurable)
      HCUDP_EXCLUDES(mu_);
  Status Release(const hami::MarkFileName& mark) HCUDP_EXCLUDES(mu_);
  StatusOr<VhcuSweepResult> Reconcile(const PodLivenessFn& is_live) HCUDP_EXCLUDES(mu_);
  void ForgetFresh(const std::string& pod_uid) HCUDP_EXCLUDES(mu_);
  VhcuSweepResult Tick() HCUDP_EXCLUDES(mu_);

  // Destroys waiting for a retry (tests).
  size_t pending_destroys() const HCUDP_EXCLUDES(mu_);
  // When Tick() next has work, if anything is queued (tests).
  std::optional<Clock::TimePoint> next_retry_time() const HCUDP_EXCLUDES(mu_);

 private:
  struct Intent {
    internal::IntentRecord record;
    std::string path;
  };
  // A destroy waiting to be retried. `card_bdf`, `compute_units` and
  // `memory_mib` say which vHCU it is, so that a retry never destroys another
  // vHCU that took over the id meanwhile.
  struct Retry {
    int vhcu_id = -1;
    std::string card_bdf;
    int compute_units = 0;
    uint64_t memory_mib = 0;
    std::optional<MarkFile> mark;  // removed after the destroy succeeded
    std::string intent_path;       // removed after that, when non-empty
    int failures = 0;
    Clock::TimePoint due;
  };

  bool CrashAfter(VhcuCreateStep step) const;
  std::string MarkDir() const;
  std::string IntentDirPath() const;
  // The intent journal. Read under the host-wide lock, which a create holds
  // from its intent to its end: it never holds the intent of a create still
  // running (in this process or another).
  StatusOr<std::vector<Intent>> ReadIntents();
  // Destroys `vhcu` (its id) now, or queues a retry. On success removes
  // `mark` (if set) and then `intent_path` (if set). Host lock held.
  void DestroyOrQueue(const Vhcu& vhcu, const std::optional<MarkFile>& mark,
                      const std::string& intent_path, VhcuSweepResult* result) HCUDP_EXCLUDES(mu_);
  void Queue(Retry retry, const Status& why, VhcuSweepResult* result) HCUDP_EXCLUDES(mu_);
  // Host lock held.
  void ResolveIntents(const std::vector<Intent>& intents, const NodeInventory& inventory,
                      const std::vector<MarkFile>& marks, const PodLivenessFn& is_allocating,
                      VhcuSweepResult* result) HCUDP_EXCLUDES(mu_);
  void ResolveIntent(const Intent& intent, const NodeInventory& inventory,
                     const std::vector<MarkFile>& marks, const std::set<int>& claimed_by_intents,
                     const PodLivenessFn& is_allocating, VhcuSweepResult* result)
      HCUDP_EXCLUDES(mu_);
  bool IsQueued(int vhcu_id) const HCUDP_EXCLUDES(mu_);
  StatusOr<VhcuHostLock> Lock(std::chrono::milliseconds timeout) const;

  Backend* const backend_;
  const VhcuManagerOptions options_;
  // The node's files, under options_.host_root.
  const internal::HostFs fs_{options_.host_root};
  Clock& clock_;

  mutable Mutex mu_;
  // Destroys waiting for a retry, by vHCU id (-1 never).
  std::map<int, Retry> retries_ HCUDP_GUARDED_BY(mu_);
  // Pod UIDs this process wrote a mark for, and when.
  std::map<std::string, Clock::TimePoint> fresh_pods_ HCUDP_GUARDED_BY(mu_);
  // Ambiguous intents already logged.
  std::set<std::string> reported_ HCUDP_GUARDED_BY(mu_);
  uint64_t attempts_ HCUDP_GUARDED_BY(mu_) = 0;
};

}  // namespace hcudp

#endif  // HCUDP_SRC_VHCU_VHCU_MANAGER_IMPL_H_
