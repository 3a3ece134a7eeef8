// SlicePublisher: keeps the node's ResourceSlice pool on the API server equal
// to the inventory (DESIGN.md §9, dra.md §3.3). The daemon owns one.
//
//   auto pub = SlicePublisher::New(client, options);   // no network
//   (*pub)->Start();                                    // the worker thread
//   (*pub)->SetInventory(inventory);                    // at start and on every
//                                                       // inventory/health change
//   (*pub)->RequestResync();                            // after a kubelet restart
//
// A sync compares the node's slices (fieldSelector spec.nodeName=<node>,
// spec.driver=<driver>) with the plan (BuildPoolPlan) and, only when they
// differ, writes a new pool generation: PUT over the existing slices
// (resourceVersion preconditions, taints' timeAdded kept), POST the missing
// ones (generateName; never repeated when the server may have applied it:
// the next sync looks the slices up first), DELETE the surplus (uid +
// resourceVersion preconditions). Each write's answer (the stored object) is
// compared with what was sent: a dropped device taint (the API server's
// DRADeviceTaints gate is off) switches the publisher to leaving unhealthy
// cards out and republishes at once; dropped consumable-capacity fields are
// noted and no longer count as a difference.
//
// What a sync compares against: with `watch` (the default) the publisher
// LISTs the node's slices once and then WATCHes them, keeping a local copy;
// a sync compares against that copy, so an unchanged pool costs no request
// at all, and the only steady-state traffic is the watch. A cleanly ended
// watch is re-opened from its last resourceVersion; the copy is LISTed again
// only after 410 Gone or an error the watch cannot resume from. A sync LISTs
// when there is no trustworthy copy, and after a failed sync (a write whose
// answer was lost is looked up before anything is written again). Without
// `watch`, every sync LISTs.
//
// The worker syncs when the inventory changes, on RequestResync, when the
// watch sees a slice deleted, every resync_interval, and after a failure
// after the pause of the client's RetryPolicy (a Retry-After honoured). Every
// sync has a deadline (sync_timeout) covering all its API calls; no lock is
// held across a call. Stop() cancels a call in flight (~50 ms) and joins.
//
// Owner (owned_by_node): the slices name the Node as owner, so that they are
// garbage-collected with it. Its UID (params.node_uid is the first guess) is
// read again when it is not known (a failed read; at most once per
// resync_interval) and after a slice of the pool was deleted (GC after the
// Node was re-created); a stored slice whose owner differs is rewritten.
#ifndef HCUDP_DRA_SLICE_PUBLISHER_H_
#define HCUDP_DRA_SLICE_PUBLISHER_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "hcudp/clock.h"
#include "hcudp/device.h"
#include "hcudp/dra/slices.h"
#include "hcudp/export.h"
#include "hcudp/kube_client.h"
#include "hcudp/status.h"

namespace hcudp::dra {

// /apis/resource.k8s.io/v1/resourceslices[/<name>] (cluster-scoped).
HCUDP_EXPORT ResourcePath ResourceSlicesPath();
HCUDP_EXPORT ResourcePath ResourceSlicePath(std::string name);

struct SlicePublisherOptions {
  SliceParams params;  // node_name required
  // Not owned; must outlive the publisher. Default (null): Clock::Real().
  Clock* clock = nullptr;
  std::chrono::milliseconds sync_timeout{10000};
  // How often the pool is compared with the inventory when nothing asked
  // for a sync (against the watched copy: no request while it is current).
  std::chrono::milliseconds resync_interval{30000};
  // Watch the node's slices (with the worker): syncs compare against the
  // watched copy, and a deletion (e.g. by a restarting kubelet) is resynced
  // without waiting for a RequestResync or the resync interval.
  bool watch = true;
  // The Node owns the slices (see the header comment). Default false: the
  // owner is params.node_uid as given, or none.
  bool owned_by_node = false;
};

struct PublisherState {
  int64_t generation = 0;  // pool generation on the server after the last sync
  int slice_count = 0;
  int device_count = 0;
  uint64_t synced_sequence = 0;  // SetInventory sequence the last good sync published
  uint64_t syncs = 0;            // syncs attempted
  uint64_t writes = 0;           // POST + PUT + DELETE, in total
  uint64_t lists = 0;            // syncs that LISTed (no trustworthy watched copy)
  bool taints_dropped = false;   // unhealthy cards are left out instead
  bool consumable_capacity_dropped = false;
  Status last_status;  // of the last sync
};

class HCUDP_EXPORT SlicePublisher {
 public:
  // InvalidArgument for a bad node/driver name. Reads nothing over the
  // network. `client` is not owned and must outlive the publisher.
  static StatusOr<std::unique_ptr<SlicePublisher>> New(KubeClient& client,
                                                       SlicePublisherOptions options);
  ~SlicePublisher();  // Stop()
  SlicePublisher(const SlicePublisher&) = delete;
  SlicePublisher& operator=(const SlicePublisher&) = delete;

  // One sync of `inventory` on the calling thread, bounded by sync_timeout.
  // Waits (within the same bound) for a sync the worker is running. Does not
  // change what the worker publishes; use SetInventory for that.
  Status SyncNow(const SliceOffer& inventory);

  // Starts the worker (once). It syncs as soon as an inventory is set.
  void Start();
  // Stops the worker; in-flight API calls are cancelled. Idempotent.
  void Stop();

  // What to publish from now on (OfferSlices; a bare inventory offers every
  // childless card whole); returns its sequence number (1, 2, ...) for
  // WaitSynced. Wakes the worker; returns at once.
  uint64_t SetInventory(SliceOffer inventory);
  // Sync now even if nothing changed (kubelet restarted and deleted the
  // node's slices). Returns at once.
  void RequestResync();
  // True once a sync of sequence `sequence` or later succeeded, false when
  // `deadline` (on the publisher's clock) passed first.
  bool WaitSynced(uint64_t sequence, Clock::TimePoint deadline);

  PublisherState state() const;

 private:
  class Impl;
  explicit SlicePublisher(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace hcudp::dra

#endif  // HCUDP_DRA_SLICE_PUBLISHER_H_
