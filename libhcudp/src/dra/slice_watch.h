// WatchedSlices: the node's ResourceSlices as the publisher's watch last saw
// them, so that a resync compares against this copy instead of LISTing the
// API server every interval (client-go's informer store, for one pool).
//
// It is trustworthy (`Snapshot()` returns a list) from the first LIST until
// the watch cannot resume (Invalidate: 410 Gone, a non-transient error); the
// writes of the publisher's own syncs are applied at once (ApplyWrite), so a
// sync right after a write does not compare against the state before it.
// A LIST older than one of our writes (it raced the write, or the API
// server's watch cache had not caught up) does not undo it: a created or
// updated slice whose resourceVersion is newer than the list's is kept over
// the list's view, as client-go's mutation cache does for a controller's own
// writes (comparing resourceVersions as integers; when either is not one,
// the list wins). Without this the publisher wrote its pool a second time at
// start (a second slice, then a delete).
//
// Thread-safety: every method may be called from any thread; the lock is a
// leaf (no call is made under it).
#ifndef HCUDP_DRA_SLICE_WATCH_H_
#define HCUDP_DRA_SLICE_WATCH_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "hcudp/kube_client.h"
#include "hcudp/status.h"
#include "hcudp_internal/thread_annotations.h"

namespace hcudp::dra {

class WatchedSlices {
 public:
  // Replaces the contents with a LIST answer; returns its resourceVersion
  // (where the watch starts). InvalidArgument for an answer that is no list.
  StatusOr<std::string> ApplyList(const std::string& list_json);
  // A watch event: ADDED/MODIFIED store the object, DELETED removes it.
  void ApplyEvent(const WatchEvent& event);
  // A write's answer (the stored object), or a deletion (`object_json`
  // empty) of slice `name`.
  void ApplyWrite(const std::string& name, const std::string& object_json);
  // Forgets everything until the next ApplyList.
  void Invalidate();
  // {"items":[...]} of the stored slices, or nullopt when not trustworthy.
  std::optional<std::string> Snapshot() const;

 private:
  mutable Mutex mu_;
  bool valid_ HCUDP_GUARDED_BY(mu_) = false;
  std::map<std::string, std::string> slices_ HCUDP_GUARDED_BY(mu_);  // name -> JSON
  // Our creates and updates not yet confirmed by a LIST at or after them:
  // name -> (the write's resourceVersion, the stored object's JSON).
  std::map<std::string, std::pair<uint64_t, std::string>> recent_writes_ HCUDP_GUARDED_BY(mu_);
};

}  // namespace hcudp::dra

#endif  // HCUDP_DRA_SLICE_WATCH_H_
