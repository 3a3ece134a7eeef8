// Preparer: NodePrepareResources / NodeUnprepareResources of DRA mode as a
// library (DESIGN §9, reference/dra.md §4), without gRPC. The daemon's DRA
// service calls Prepare/Unprepare once per claim of a request and turns the
// results into the response.
//
// Prepare(claim):
//   1. GETs the claim (ClaimFetcher) and checks its UID and that it is
//      allocated; keeps this driver's results only.
//   2. Already prepared (checkpoint): rewrites a missing CDI spec and answers
//      the recorded devices (idempotent).
//   3. Per result: a whole card, a pre-split vHCU or a MIG instance → CDI IDs
//      (<driver>/hcu=<card device> from the whole-card spec, or
//      <driver>/vhcu=<uid>-... from the claim's spec); consumedCapacity
//      (cores, memory) below the whole card → a vHCU of exactly those amounts
//      through VhcuManager (mark <owner>_<request>_<card>_<vdev>, owner = the
//      pod in status.reservedFor, else the claim UID).
//   Crash-safe order: checkpoint "preparing" (durable) → vHCUs and marks →
//   claim CDI spec → checkpoint "prepared". A failure undoes what was made; a
//   crash is undone by Recover().
// Unprepare(claim): destroys the claim's vHCUs (never one whose id now names
// another card or size: the id was reused), removes marks and its CDI spec,
// then the checkpoint entry. Not prepared → OK. A vHCU that could not be
// destroyed keeps the entry and the answer is an error (kubelet retries).
// An entry that does not decode (IsUndecodableEntry) never fails it
// forever: what the claim's marks and CDI spec prove is released, the entry
// is set aside (CheckpointStore::SetAside) and the answer is OK.
// Both check the claim reference first (CheckClaimRef: InvalidArgument).
//
// Thread-safety: all methods may be called concurrently; calls for the same
// claim are serialised (the second gets Unavailable, "in progress"). No lock
// is held across the GET, a backend call or a file write.
#ifndef HCUDP_DRA_PREPARER_H_
#define HCUDP_DRA_PREPARER_H_

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hcudp/backend.h"
#include "hcudp/clock.h"
#include "hcudp/device.h"
#include "hcudp/dra/checkpoint.h"
#include "hcudp/dra/claim.h"
#include "hcudp/dra/slices.h"
#include "hcudp/export.h"
#include "hcudp/kube_client.h"
#include "hcudp/status.h"
#include "hcudp/vhcu_manager.h"

namespace hcudp::dra {

// The slice device names this preparer understands (DESIGN §9; the same
// functions of slices.h, by node object):
//   whole card   hcu-<bdf with ':' and '.' as '-'>        hcu-0000-3b-00-0
//   vHCU         <card name>-vdev<N>                      hcu-0000-3b-00-0-vdev3
//   MIG          <card name>-mig-<gi>-<ci>                hcu-0000-3b-00-0-mig-1-0
HCUDP_EXPORT std::string CardDeviceName(const Card& card);
HCUDP_EXPORT std::string VhcuDeviceName(const Vhcu& vhcu);
HCUDP_EXPORT std::string MigDeviceName(const MigInstance& mig);

// What a slice device name names on this node.
struct DeviceTarget {
  PreparedKind kind = PreparedKind::kCard;  // kCard, kVhcu or kMig
  int card = -1;
  int vhcu_id = -1;
  int mig_index = -1;  // into NodeInventory::mig_instances
};
// NotFound when `name` names nothing on `inventory`.
HCUDP_EXPORT StatusOr<DeviceTarget> ResolveDevice(const NodeInventory& inventory,
                                                  std::string_view name);

// GETs one claim: its JSON, or the API's error (NotFound once deleted).
// `deadline` (steady clock) is the caller's: kubelet's call deadline for a
// Prepare, nullopt for the preparer's own checks; the GET must have ended
// by then (DeadlineExceeded otherwise).
using ClaimFetcher = std::function<StatusOr<std::string>(const ClaimRef& claim,
                                                         std::optional<Clock::TimePoint> deadline)>;
// The real one: KubeClient::Get of ResourceClaimPath, each call bounded by
// `timeout` and by the caller's deadline, whichever comes first, and ended
// (Cancelled) once `*cancel` reads true. `client` and `cancel` are not owned.
HCUDP_EXPORT ClaimFetcher KubeClaimFetcher(KubeClient* client, std::chrono::milliseconds timeout,
                                           const std::atomic<bool>* cancel = nullptr);

// Steps of Prepare/Unprepare after which a test may simulate a crash.
enum class PrepareStep {
  kCheckpointPreparing,  // the "preparing" entry is durable
  kDeviceMade,           // after each vHCU created / mark written
  kClaimSpecWritten,
  kCheckpointPrepared,    // before Prepare returns
  kUnprepareDeviceFreed,  // after each device released in Unprepare
  kUnprepareSpecRemoved,
  kWholeCardSpecWritten,  // WriteWholeCardSpec wrote the file, before it is recorded
};

struct PreparerOptions {
  std::string host_root = "/";
  std::string driver_name = std::string(kDefaultDriverName);
  // The pool this node publishes (the node name). Results naming another
  // pool are errors. Empty: any pool.
  std::string pool_name;
  // Host path of the CDI spec directory (prefixed with host_root).
  std::string cdi_dir = "/var/run/cdi";
  std::string hyhal_path = "/opt/hyhal";
  // CDI specs: the by-path hook and /dev/mem + /sys/kernel/debug, as
  // AllocationBuilderOptions has them. Default: no hook, no debug access.
  std::string cdi_hook_path;
  bool cdi_debug_access = false;
  // Recover's and Tick's GETs of recorded claims: after a failed GET the
  // claim is asked again after this delay, doubled per failure up to the max.
  std::chrono::milliseconds recheck_initial_delay{5000};
  std::chrono::milliseconds recheck_max_delay{300000};
  // Called (without locks held) whenever the set of prepared devices
  // changed: for the health stream.
  std::function<void()> on_change;
  // Testing only: called after each step; true makes the call stop right
  // there with Aborted, leaving the files as a crash would.
  std::function<bool(PrepareStep)> crash_after;
};

// One device of a NodePrepareResources answer.
struct PreparedDeviceAnswer {
  std::vector<std::string> request_names;  // base names ("hcu" for "hcu/sub")
  std::string pool_name;
  std::string device_name;
  std::vector<std::string> cdi_device_ids;
  std::optional<std::string> share_id;
};

// A claim's answer: devices, or a per-claim error (kubelet retries).
struct PrepareAnswer {
  std::vector<PreparedDeviceAnswer> devices;
  std::string error;
};

// What Recover or Tick did.
struct RecoverResult {
  int kept = 0;                          // prepared claims still in use
  int specs_rewritten = 0;               // CDI specs recreated (reboot, wiped dir)
  int rolled_back = 0;                   // "preparing" entries undone
  int unprepared = 0;                    // claims gone from the API (404 or new UID)
  int pending = 0;                       // claims whose GET or unprepare failed: retried by Tick
  int adopted = 0;                       // claims taken over from Hygon's driver (Recover only)
  int unknown = 0;  // prepared claims on devices the node cannot read now: kept, re-checked by Tick
  std::vector<std::string> bad_entries;  // checkpoint files that could not be read
};

class HCUDP_EXPORT Preparer {
 public:
  // `backend` and `vhcus` are not owned and must outlive the preparer;
  // `vhcus` must use the same host_root.
  Preparer(Backend* backend, VhcuManager* vhcus, ClaimFetcher fetch, PreparerOptions options,
           Clock& clock = Clock::Real());
  ~Preparer();
  Preparer(const Preparer&) = delete;
  Preparer& operator=(const Preparer&) = delete;

  // At start, before serving: replays the vHCU intent journal, writes the
  // whole-card spec, rolls back "preparing" entries, recreates missing claim
  // CDI specs (first, so running pods keep working even with the API down),
  // then GETs each recorded claim: 404 or another UID → unprepare; API
  // error → kept, asked again by Tick(). A claim whose devices are gone or
  // unknown is kept (its devices are Unhealthy or Unknown; only kubelet's
  // Unprepare or the API server releases it). Errors only when the node
  // cannot be discovered or the checkpoint directory cannot be listed.
  // First of all it adopts the claims that Hygon's k8s-hcu-dra-driver left
  // prepared in <cdi_dir>/hcu-dra-driver-prepared-state.state (their
  // devices, vHCUs, marks and CDI IDs become checkpoint entries, so that
  // Unprepare frees them); a file it cannot read or trust is logged and left
  // alone, and nothing of it is destroyed (doc/dra.md, migration). Never a
  // claim naming a vHCU one of our claims, a mark or an intent holds; one
  // whose devices are unknown is adopted by a later Tick, or by an
  // Unprepare of its UID.
  StatusOr<RecoverResult> Recover();

  // Non-OK: an error for the whole RPC (claim not allocated, replaced, bad
  // JSON, a device this node does not have, a result of another pool).
  // OK with `error` set: retry may fix it (API unavailable or too slow for
  // `deadline`, vHCU lock busy, card full, a call for this claim in
  // progress, a pre-split vHCU or MIG instance held by another claim).
  // `deadline` (steady clock, as the fetcher's): when the claim GET must
  // have ended, e.g. a little before kubelet's call deadline.
  StatusOr<PrepareAnswer> Prepare(const ClaimRef& claim,
                                  std::optional<Clock::TimePoint> deadline = std::nullopt);

  // OK once nothing of the claim is left. Unavailable when a vHCU could not
  // be destroyed yet (the entry stays; call again).
  Status Unprepare(const ClaimRef& claim);

  // Re-GETs claims Recover could not check (due ones only, each once, each
  // bounded by the fetcher's timeout) and retries their unprepare; re-checks
  // claims on unknown devices, and retries the adoption of Hygon's claims,
  // against the inventory of the latest WriteWholeCardSpec (it never
  // discovers the node itself). A device gone never unprepares a claim.
  // Call periodically (e.g. every few seconds); cheap when nothing is due.
  RecoverResult Tick();

  // The whole-card spec, rewritten when the inventory changed (DRI nodes).
  // Concurrent calls: one writes at a time, and the file ends up with the
  // spec of the newest call (an older one never overwrites it); a call made
  // while another is writing returns at once and leaves the write of its
  // spec to that one.
  // Call on every inventory change: Prepare plans its devices (and builds
  // claim CDI specs) from the inventory given here (or by Recover) instead
  // of discovering the node each time; only a device name it does not know
  // is looked up afresh. Unprepare discovers the node only for a claim with
  // a vHCU it made.
  Status WriteWholeCardSpec(const NodeInventory& inventory);

  // Every prepared claim (checkpoint state "prepared"), for the health
  // stream: each device names its card (index and BDF).
  std::vector<PreparedClaim> Prepared() const;

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace hcudp::dra

#endif  // HCUDP_DRA_PREPARER_H_
