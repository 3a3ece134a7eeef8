// VhcuManager: the crash-safe lifecycle of dynamic (HAMi) vHCUs on one node.
//
// It creates a vHCU for a container, records who holds it in a mark file
// (/etc/vdev/dynamic/<podUID>_<container>_<card>_<vdevIdx>, the layout
// hcu-exporter and the Hygon DRA driver share), and destroys it when the pod
// is gone — never before, and never one it did not create.
//
// Files (host paths, read and written under host_root):
//   /etc/vdev/dynamic/                    mark files; dir 0755, files 0644
//   /var/lib/hcu-device-plugin/intents/   intent journal; dir 0755, files 0644
//
// Creating a vHCU, step by step. Each step is durable (file and directory
// fsync-ed) before the next starts:
//   1. snapshot    the vHCU ids present now (Backend::Discover);
//   2. intent      intents/<podUID>_<container>_<card>.intent records owner,
//                  card, CUs, MiB and the snapshot;
//   3. create      Backend::CreateVhcu;
//   4. record id   the intent gets vhcu_id;
//   5. mark        the mark file is written (content: local time,
//                  "2006-01-02 15:04:05", as the vendor);
//   6. complete    the intent is removed.
// Steps 4 and 6 are atomic but not forced to disk (no directory fsync): a
// crash that loses step 4 leaves an intent without vhcu_id, which Recover
// resolves by the snapshot exactly as a crash after step 3 (and, when the
// mark exists, the vHCU is claimed by it and the intent dropped); a lost
// step 6 leaves an intent whose mark exists, which Recover drops. This
// saves two of seven fsyncs on the Allocate path (five remain).
// A failure at 3 destroys whatever the backend may have left; at 4 or 5 the
// new vHCU is destroyed; the intent goes only once nothing is left behind.
//
// Intent states found by Recover() after a crash, and what it does:
//   no vhcu_id            a vHCU on that card, not in the snapshot, of the
//                         intent's size, claimed by no mark file and no other
//                         intent, is the one step 3 made: destroy it. None:
//                         nothing was created. Several: ambiguous, leave them
//                         all (logged as an error) — never destroy what might
//                         not be ours.
//   vhcu_id, mark file    step 5 was done: the mark owns it; drop the intent.
//   vhcu_id, no mark      the pod was never told about it: destroy it, unless
//                         the pod is live and allocating — then write the
//                         mark (adopt) so that Reconcile accounts for it.
//   vhcu_id, vHCU gone    nothing to do; drop the intent.
// A destroy that fails keeps the intent (and the mark) until a retry succeeds,
// so a second crash loses nothing either.
//
// Destroying (Reconcile, Release): Backend::DestroyVhcu (stop + destroy;
// the backend removes /etc/vdev/vdevN.conf); only after it succeeded (or the
// vHCU is already gone) is the mark file removed. Unavailable (DEVICE_BUSY)
// and other failures go to a retry queue with capped exponential backoff,
// driven by Tick().
//
// Never destroyed: a vHCU whose mark file names a live pod; one whose mark was
// written less than fresh_mark_grace ago by this process (the caller's pod
// cache may lag behind an Allocate that just finished); a vHCU with neither a
// mark file nor an intent (an admin's, or pre-split) — left alone, logged at
// VLOG(2); a vHCU whose id now sits on another card than its mark says (the
// node was reset and the index reused) — the stale mark is removed.
//
// Thread-safety: all methods may be called from any thread. One mutex
// serializes them, backend calls included, so a create and a destroy never
// interleave (defect §8.23).
#ifndef HCUDP_VHCU_MANAGER_H_
#define HCUDP_VHCU_MANAGER_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "hcudp/backend.h"
#include "hcudp/device.h"
#include "hcudp/export.h"
#include "hcudp/hami_codec.h"
#include "hcudp/status.h"

namespace hcudp {

inline constexpr std::string_view kVhcuIntentDir = "/var/lib/hcu-device-plugin/intents";

// Steps of VhcuManager::CreateVhcu after which a test may simulate a crash.
enum class VhcuCreateStep { kIntentRecorded, kVhcuCreated, kIdRecorded, kMarkWritten };

struct VhcuManagerOptions {
  // Prefix of every path the manager reads and writes. Required ("/" on a
  // node).
  std::string host_root;
  // Wall clock: backoff due times, the fresh-mark grace, mark file content.
  // Default: std::chrono::system_clock::now.
  std::function<std::chrono::system_clock::time_point()> now;
  // Retry backoff: first delay, doubled per failure, capped. Defaults 1 s, 60 s.
  std::chrono::milliseconds initial_retry_delay{1000};
  std::chrono::milliseconds max_retry_delay{60000};
  // Marks this process wrote less than this long ago are never reclaimed.
  // Default 60 s.
  std::chrono::milliseconds fresh_mark_grace{60000};
  // Testing only: called after each step of CreateVhcu; returning true makes
  // CreateVhcu stop right there with Aborted, leaving the files as a crash
  // would. Default: none.
  std::function<bool(VhcuCreateStep)> crash_after;
};

// Who a vHCU or a whole card was handed to.
struct VhcuOwner {
  std::string pod_uid;
  std::string container;
};

// A mark file on disk.
struct MarkFile {
  hami::MarkFileName name;
  std::string path;  // full path under host_root
};

// Mark files in host_root/etc/vdev/dynamic, sorted by name. Names that do not
// parse are returned in `unparsable` (when non-null) and otherwise ignored. A
// missing directory is no marks. For hcuctl `allocations` and the manager.
HCUDP_EXPORT StatusOr<std::vector<MarkFile>> ListMarkFiles(const std::string& host_root,
                                                           std::vector<std::string>* unparsable);

// A vHCU CreateVhcu made: as the backend reported it (id, conf_path), and
// its mark file (mark.name.vhcu_id == vhcu.id).
struct CreatedVhcu {
  Vhcu vhcu;
  MarkFile mark;
};

// Is this pod (by UID) still live on this node: known to the (synced) pod
// cache, not Succeeded or Failed, not deleted. Called with the manager's
// mutex held: it must be quick and must not call back into the manager.
using PodLivenessFn = std::function<bool(const std::string& pod_uid)>;

// What a Recover/Reconcile/Tick pass did.
struct VhcuSweepResult {
  int destroyed = 0;      // vHCUs destroyed
  int marks_removed = 0;  // mark files removed (after a destroy, or stale)
  int adopted = 0;        // intents turned into mark files (Recover only)
  int queued = 0;         // destroys that failed and wait for a retry
  int left_alone = 0;     // vHCUs kept on purpose (live pod, fresh, ambiguous)
};

class HCUDP_EXPORT VhcuManager {
 public:
  // `backend` is not owned and must outlive the manager.
  VhcuManager(Backend* backend, VhcuManagerOptions options);
  VhcuManager(const VhcuManager&) = delete;
  VhcuManager& operator=(const VhcuManager&) = delete;

  // At start-up, before the first CreateVhcu and after the pod cache has
  // synced: replays the intent journal (state table above). `is_allocating`
  // tells whether a pod is live with bind-phase "allocating".
  StatusOr<VhcuSweepResult> Recover(const PodLivenessFn& is_allocating);

  // Creates a vHCU of `compute_units` CUs and `memory_mib` MiB on `card` for
  // `owner` and writes its mark file (steps above). InvalidArgument for an
  // owner that cannot name a mark file; the backend's error otherwise (after
  // undoing). AlreadyExists when an unresolved intent for the same owner and
  // card exists.
  StatusOr<CreatedVhcu> CreateVhcu(const VhcuOwner& owner, int card, int compute_units,
                                   uint64_t memory_mib);

  // Writes the whole-card mark <uid>_<container>_<card>_-1, so that a card
  // handed over whole is accounted (defect §8.20 fixed).
  StatusOr<MarkFile> MarkWholeCard(const VhcuOwner& owner, int card);

  // Failure path of Allocate: destroys the vHCU of `mark` (if any) and then
  // removes the mark. Unavailable when the destroy failed: it is queued and
  // retried by Tick(); the mark stays until it succeeds.
  Status Release(const hami::MarkFileName& mark);

  // Reclaims every mark whose pod is not live: destroy, then remove the mark
  // (a whole-card mark is just removed). Call on pod deletion/termination
  // events and periodically. Discover errors abort the pass.
  StatusOr<VhcuSweepResult> Reconcile(const PodLivenessFn& is_live);
  // The same with a set of live pod UIDs.
  StatusOr<VhcuSweepResult> Reconcile(const std::set<std::string>& live_pod_uids);

  // The caller has seen this pod deleted or terminated: its marks are no
  // longer protected by fresh_mark_grace (the next Reconcile may reclaim
  // them at once).
  void ForgetFresh(const std::string& pod_uid);

  // Retries the queued destroys that are due. Call periodically (e.g. every
  // second); cheap when nothing is due.
  VhcuSweepResult Tick();

  // Destroys waiting for a retry.
  size_t pending_destroys() const;
  // When Tick() next has work, if anything is queued.
  std::optional<std::chrono::system_clock::time_point> next_retry_time() const;

 private:
  struct Intent;
  // A destroy waiting to be retried.
  struct Retry {
    int vhcu_id = -1;
    std::optional<MarkFile> mark;  // removed after the destroy succeeded
    std::string intent_path;       // removed after that, when non-empty
    int failures = 0;
    std::chrono::system_clock::time_point due;
  };

  std::chrono::system_clock::time_point Now() const;
  bool CrashAfter(VhcuCreateStep step) const;
  std::string MarkDir() const;
  std::string IntentDirPath() const;
  StatusOr<MarkFile> WriteMarkLocked(const hami::MarkFileName& name);
  // Destroys `vhcu_id` now, or queues a retry. On success removes `mark`
  // (if set) and then `intent_path` (if set). Updates `result`.
  void DestroyOrQueueLocked(int vhcu_id, const std::optional<MarkFile>& mark,
                            const std::string& intent_path, VhcuSweepResult* result);
  void ResolveIntentLocked(const Intent& intent, const NodeInventory& inventory,
                           const std::vector<MarkFile>& marks,
                           const std::set<int>& claimed_by_intents,
                           const PodLivenessFn& is_allocating, VhcuSweepResult* result);
  void QueueRetryLocked(Retry retry);
  bool IsQueuedLocked(int vhcu_id) const;

  Backend* const backend_;
  const VhcuManagerOptions options_;

  mutable std::mutex mu_;
  // Guarded by mu_: destroys waiting for a retry, by vHCU id (-1 never).
  std::map<int, Retry> retries_;
  // Guarded by mu_: pod UIDs this process wrote a mark for, and when.
  std::map<std::string, std::chrono::system_clock::time_point> fresh_pods_;
};

}  // namespace hcudp

#endif  // HCUDP_VHCU_MANAGER_H_
