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
//   /var/lib/hcu-device-plugin/vhcu.lock  the host-wide vHCU lock (vhcu_lock.h)
//
// Every create and destroy runs under the host-wide vHCU lock, which hcuctl
// takes too; a create holds it from the snapshot to the mark, so nobody who
// honours the lock sees a vHCU of ours without its mark or intent.
//
// Creating a vHCU, step by step. Each step is durable (file and directory
// fsync-ed) before the next starts:
//   1. snapshot    the vHCU ids present now (Backend::Discover);
//   2. intent      intents/<podUID>_<container>_<card>_<attempt>.intent
//                  records owner, card (index and BDF), CUs, MiB and the
//                  snapshot; one file per attempt, so an intent left
//                  unresolved never blocks a later create for that owner;
//   3. create      Backend::CreateVhcu, which returns the vHCU the driver made
//                  for this call (never "the one new conf that appeared");
//   4. record id   the intent gets vhcu_id;
//   5. mark        the mark file is written (content: local time,
//                  "2006-01-02 15:04:05", as the vendor);
//   6. complete    the intent is removed.
// Steps 4 and 6 are atomic but not forced to disk (no directory fsync): a
// crash that loses step 4 leaves an intent without vhcu_id, which is resolved
// by the snapshot exactly as a crash after step 3 (and, when the mark exists,
// the vHCU is claimed by it and the intent dropped); a lost step 6 leaves an
// intent whose mark exists, which is dropped. Five fsyncs on the Allocate path.
// A failure at 3 resolves the intent at once (below); at 4 or 5 the new vHCU
// is destroyed; the intent goes only once nothing is left behind.
//
// Intents are resolved by Recover() at start and by every Reconcile(), under
// the host-wide lock (so never one whose create is still running):
//   no vhcu_id            a vHCU provably ours: on the intent's card (by BDF),
//                         of exactly its CUs and MiB, not in the snapshot,
//                         claimed by no mark file and no other intent. One:
//                         destroy it. None: nothing was created; drop the
//                         intent. Several: ambiguous — destroy none, keep the
//                         intent durable and log it (once per process).
//                         A vHCU of another size or card is never a candidate.
//   vhcu_id, mark file    step 5 was done: the mark owns it; drop the intent.
//   vhcu_id, no mark      the pod was never told about it: destroy it, unless
//                         (Recover only) the pod is live and allocating — then
//                         write the mark (adopt). If the vHCU under that id is
//                         no longer the intent's card and size, the id was
//                         reused by someone else: left alone, intent dropped.
//   vhcu_id, vHCU gone    nothing to do; drop the intent.
// A vHCU that discovery could not read (a gap: its conf torn or empty,
// /etc/vdev unreadable) is not gone: intents and marks that may name it, and
// queued destroys, wait for a pass that reads it (with a gap, no intent
// without vhcu_id is resolved).
// A destroy that fails keeps the intent (and the mark) until a retry succeeds,
// so a second crash loses nothing either.
//
// Destroying (Reconcile, Release, retries): Backend::DestroyVhcu (stop +
// destroy, one attempt; the backend removes /etc/vdev/vdevN.conf); only after
// it succeeded (or the vHCU is already gone) is the mark file removed.
// Unavailable (DEVICE_BUSY) and other failures go to the manager's retry
// queue with capped exponential backoff, driven by Tick(). The queue is the
// one owner of destroy retries: nothing below sleeps and retries. A retry
// whose id another owner's mark names by then is dropped, its vHCU left
// alone (the one queued went, and the driver gave its id to theirs).
//
// Never destroyed: a vHCU whose mark file names a live pod (whatever other,
// stale marks of a dead pod name its id: they are removed); one whose mark was
// written less than fresh_mark_grace ago by this process (the caller's pod
// cache may lag behind an Allocate that just finished); a vHCU with neither a
// mark file nor an intent that proves it ours (an admin's, or pre-split) —
// left alone, logged at VLOG(2); a vHCU whose id now sits on another card than
// its mark says (the node was reset and the index reused) — the stale mark is
// removed; a vHCU whose card was not discovered in this pass (card -1), or
// whose card index differs from its mark's while its conf cannot be read — it
// and its mark wait for a pass that can tell. A mark names the card by the
// index it had when the vHCU was made; after a card was missed and the
// cards renumbered, the conf's device_id (that index) still matches it.
//
// Thread-safety: all methods may be called from any thread. The host-wide
// lock serialises creates and destroys (threads of this process included);
// the manager's in-memory state (retry queue, fresh marks) has its own lock,
// which is never held across a backend call, a file write or a wait.
#ifndef HCUDP_VHCU_MANAGER_H_
#define HCUDP_VHCU_MANAGER_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "hcudp/backend.h"
#include "hcudp/clock.h"
#include "hcudp/device.h"
#include "hcudp/export.h"
#include "hcudp/hami/mark_file.h"
#include "hcudp/status.h"
#include "hcudp/vhcu_lock.h"

namespace hcudp {

inline constexpr std::string_view kVhcuIntentDir = "/var/lib/hcu-device-plugin/intents";

// Steps of VhcuManager::CreateVhcu after which a test may simulate a crash.
enum class VhcuCreateStep { kIntentRecorded, kVhcuCreated, kIdRecorded, kMarkWritten };

struct VhcuManagerOptions {
  // Prefix of every path the manager reads and writes. Required ("/" on a
  // node).
  std::string host_root;
  // Retry backoff: first delay, doubled per failure, capped. Defaults 1 s, 60 s.
  std::chrono::milliseconds initial_retry_delay{1000};
  std::chrono::milliseconds max_retry_delay{60000};
  // Marks this process wrote less than this long ago are never reclaimed.
  // Default 60 s.
  std::chrono::milliseconds fresh_mark_grace{60000};
  // Longest wait for the host-wide vHCU lock: by CreateVhcu, Release and
  // Recover (default 5 s), and by Reconcile and Tick (default 1 s; a pass
  // that cannot take it fails with Unavailable and the next one tries again).
  std::chrono::milliseconds lock_timeout{5000};
  std::chrono::milliseconds sweep_lock_timeout{1000};
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

// A claim on a vHCU in the files of this plugin: a mark file naming it, or an
// intent that recorded it or that could only have made it (same card by BDF,
// same size, created after the intent's snapshot).
struct VhcuClaim {
  std::string pod_uid;
  std::string container;
  std::string path;  // the mark or intent file
  // It names the vHCU by id (a mark, or an intent that recorded the id), not
  // only by card and size: once the vHCU is destroyed it would claim the
  // next vHCU the driver gives that id.
  bool by_id = true;
};

// Claims on `vhcu` under host_root (for hcuctl vhcu destroy). A `vhcu` whose
// card is unknown (card < 0: its conf could not be read) is matched by id
// alone; a mark naming another card index than `vhcu`'s counts unless the
// conf says the vHCU was made on yet another card (as the sweep above).
// Errors only when the mark directory cannot be listed.
HCUDP_EXPORT StatusOr<std::vector<VhcuClaim>> FindVhcuClaims(const std::string& host_root,
                                                             const Vhcu& vhcu);

// For a creator outside the manager (hcuctl vhcu create), with the host-wide
// vHCU lock held and right after it made `vhcu`: adds `vhcu` to the snapshot
// of every intent that has no vhcu_id (a create that crashed or failed), so
// that recovery never takes it for the vHCU that create may have made. Under
// the lock no create of the manager is running, so `vhcu` cannot be one.
HCUDP_EXPORT Status ExcludeFromIntents(const std::string& host_root, const Vhcu& vhcu);
// The same creator, the same moment: removes the mark files that name
// `vhcu`'s id. They are stale (the id was free until now: their vHCU went
// without them), and would have the daemon reclaim `vhcu` when their pod
// goes. Returns the paths removed.
HCUDP_EXPORT StatusOr<std::vector<std::string>> RemoveStaleMarksOf(const std::string& host_root,
                                                                   const Vhcu& vhcu);

// A vHCU CreateVhcu made: as the backend reported it (id, conf_path), and
// its mark file (mark.name.vhcu_id == vhcu.id).
struct CreatedVhcu {
  Vhcu vhcu;
  MarkFile mark;
};

// Is this pod (by UID) still live on this node: known to the (synced) pod
// cache, not Succeeded or Failed, not deleted. Called with the host-wide vHCU
// lock held: it must be quick and must not call back into the manager.
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
  // `backend` and `clock` are not owned and must outlive the manager. The
  // clock times the retry backoff and the fresh-mark grace and stamps mark
  // files (its wall time); waits for the host-wide vHCU lock are in real
  // time (vhcu_lock.h).
  VhcuManager(Backend* backend, VhcuManagerOptions options, Clock& clock = Clock::Real());
  ~VhcuManager();
  VhcuManager(const VhcuManager&) = delete;
  VhcuManager& operator=(const VhcuManager&) = delete;

  // At start-up, before the first CreateVhcu and after the pod cache has
  // synced: replays the intent journal (state table above). `is_allocating`
  // tells whether a pod is live with bind-phase "allocating".
  StatusOr<VhcuSweepResult> Recover(const PodLivenessFn& is_allocating);

  // Creates a vHCU of `compute_units` CUs and `memory_mib` MiB on `card` for
  // `owner` and writes its mark file (steps above). InvalidArgument for an
  // owner that cannot name a mark file; Unavailable (naming the holder) when
  // the host-wide vHCU lock stays busy for lock_timeout; the backend's error
  // otherwise (after undoing).
  StatusOr<CreatedVhcu> CreateVhcu(const VhcuOwner& owner, int card, int compute_units,
                                   uint64_t memory_mib);

  // How a whole-card mark reaches the disk.
  enum class MarkDurability {
    // File and directory fsync-ed before returning: the mark survives a
    // power cut. For a caller that keeps no record of its own to rebuild it
    // from (the HAMi agent: kubelet does not call Allocate again).
    kDurable,
    // Written in place, not forced to disk: after a power cut (or a kill -9
    // inside the write) it may be missing or empty. Only for a caller whose
    // own durable record, written before, names the mark and rewrites it at
    // start (the DRA Preparer: its checkpoint entry, Recover). Saves two
    // fsyncs.
    kRecoverable,
  };
  // Writes the whole-card mark <uid>_<container>_<card>_-1, so that a card
  // handed over whole is accounted (defect §8.20 fixed).
  StatusOr<MarkFile> MarkWholeCard(const VhcuOwner& owner, int card,
                                   MarkDurability durability = MarkDurability::kDurable);

  // Failure path of Allocate: destroys the vHCU of `mark` (if any) and then
  // removes the mark. Unavailable when the destroy failed (or the lock was
  // busy): it is queued and retried by Tick(); the mark stays until it
  // succeeds.
  Status Release(const hami::MarkFileName& mark);

  // Resolves the intent journal (state table above, never adopting), then
  // reclaims every mark whose pod is not live: destroy, then remove the mark
  // (a whole-card mark is just removed). Call on pod deletion/termination
  // events and periodically. Discover errors abort the pass.
  StatusOr<VhcuSweepResult> Reconcile(const PodLivenessFn& is_live);
  // The same with a set of live pod UIDs.
  StatusOr<VhcuSweepResult> Reconcile(const std::set<std::string>& live_pod_uids);

  // The caller has seen this pod deleted or terminated: its marks are no
  // longer protected by fresh_mark_grace (the next Reconcile may reclaim
  // them at once).
  void ForgetFresh(const std::string& pod_uid);

  // Retries the queued destroys that are due, each once: no sleeping, no
  // waiting beyond sweep_lock_timeout. Call periodically (e.g. every second);
  // cheap when nothing is due.
  VhcuSweepResult Tick();

  class Impl;  // libhcudp/src/vhcu/vhcu_manager_impl.h

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace hcudp

#endif  // HCUDP_VHCU_MANAGER_H_
