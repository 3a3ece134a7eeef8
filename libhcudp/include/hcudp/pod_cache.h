// PodCache: a local, watch-maintained copy of the pods matching a field
// selector (typically spec.nodeName=<node>), the "reflector" of client-go.
//
// One background thread LISTs (resourceVersion=0: the API server answers
// from its watch cache, as client-go's reflector asks), then WATCHes from the list's
// resourceVersion with bookmarks, and re-watches from the last seen
// resourceVersion when the server ends the stream: at steady state the cache
// costs one open watch and no other request. It LISTs again only when the
// watch cannot resume: on 410 Gone at once (unless the Gone is for the
// version of the LIST just made: that is an error like any other), and after
// an error that is not transient (e.g. 403, 500, an undecodable event). A
// transient failure (the server unreachable or answering 503, a 429, a
// stalled stream: DeadlineExceeded, no byte for the client's
// watch_stall_timeout_s) is watched again from the last version after the
// pause of the cache's own ladder (one per cache, shared by its LIST and
// WATCH as a client-go reflector's: another loop's failures never delay it;
// raised to a Retry-After). A relist after a 410 on a resumed watch waits a
// random part of relist_jitter first, so that a fleet whose watches all
// expired at once (an API server restart) does not relist together. A relist
// diffs against the cache and reports the differences as events, so a
// consumer never misses a deletion that happened while the watch was down.
//
// Thread-safety: Get/List/HasSynced may be called from any thread. The event
// callback runs on the cache thread, without the cache lock held (it may call
// Get/List), in the order the changes were observed.
#ifndef HCUDP_POD_CACHE_H_
#define HCUDP_POD_CACHE_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hcudp/clock.h"
#include "hcudp/export.h"
#include "hcudp/kube_client.h"
#include "hcudp/kube_objects.h"

namespace hcudp {

struct PodEvent {
  enum class Type { kAdded, kUpdated, kDeleted };
  Type type = Type::kAdded;
  std::optional<Pod> old_pod;  // kUpdated, kDeleted
  std::optional<Pod> new_pod;  // kAdded, kUpdated
};

struct PodCacheOptions {
  // Empty: all namespaces.
  std::string namespace_name;
  // e.g. "spec.nodeName=node1".
  std::string field_selector;
  std::string label_selector;
  // LIST page size. Default 500.
  int64_t page_size = 500;
  // Server-side watch duration per stream; 0 uses the client's default.
  int watch_timeout_s = 0;
  std::function<void(const PodEvent&)> on_event;
  // What the pauses after a failure wait on (their length is the cache's
  // ladder's, from the client's RetryPolicy). Not owned; must outlive the
  // cache. Default (null): Clock::Real(). Give the client the same clock.
  Clock* clock = nullptr;
  // A relist after a 410 Gone on a resumed watch first waits a random time
  // in (0, relist_jitter]. Default 2 s; 0: at once.
  std::chrono::milliseconds relist_jitter{2000};
};

class HCUDP_EXPORT PodCache {
 public:
  // `client` must outlive the cache.
  PodCache(KubeClient* client, PodCacheOptions options);
  ~PodCache();  // Stop()s
  PodCache(const PodCache&) = delete;
  PodCache& operator=(const PodCache&) = delete;

  // Starts the background thread; once only.
  void Start();
  // Ends the watch and joins the thread; idempotent. After Stop the cache
  // keeps its last contents.
  void Stop();

  // True once the first LIST has been applied and its kAdded events have
  // been delivered to on_event.
  bool HasSynced() const;
  // True while the contents can be trusted: synced, and no event can have
  // been missed (false from a 410 Gone, the history lost, until the relist
  // that follows has been applied).
  bool Current() const;

  std::optional<Pod> Get(const std::string& namespace_name, const std::string& name) const;
  // Every cached pod, ordered by namespace then name.
  std::vector<Pod> List() const;
  // The resourceVersion the cache is current to (last event or bookmark).
  std::string ResourceVersion() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace hcudp

#endif  // HCUDP_POD_CACHE_H_
