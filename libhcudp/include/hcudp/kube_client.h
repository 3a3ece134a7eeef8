// KubeClient: a small Kubernetes REST client (HTTP/1.1 over OpenSSL, RapidJSON) with the
// verbs the device plugin needs. Bodies are JSON text; typed views of pods and
// nodes are in kube_objects.h, reflector-style caching in pod_cache.h.
//
// Errors: HTTP failures become a Status carrying the API's Status.message:
//   400, 422 InvalidArgument     401 Unauthenticated     403 PermissionDenied
//   404 NotFound                 409 AlreadyExists (reason AlreadyExists),
//                                    else Aborted (a conflict: re-read, retry)
//   410 OutOfRange (resourceVersion too old: relist)
//   429 ResourceExhausted        500 Internal    502/503 Unavailable
//   504 and client timeouts DeadlineExceeded
//   TLS verification failures Unauthenticated; connection failures Unavailable.
//   A body over 64 MiB (or a watch line that long) ResourceExhausted; JSON
//   nested deeper than 512 levels InvalidArgument (hostile servers).
// 429, 500, 502, 503, 504 and connection failures are retried up to
// max_retries (per call: CallOptions::max_retries), each retry after the
// pause of a ladder (retry_policy.h: jittered, 1 s doubling to 30 s,
// honouring Retry-After, under the process's retry budget): a fresh one per
// call, as client-go's REST client retries apart from a reflector's backoff,
// or the one the caller hands in CallOptions::backoff. The loops built on
// the client step a ladder of their own once per failed attempt; one loop's
// failures never move another loop's ladder.
// Retry-After is read from the final response of a transfer only (not from
// an interim 1xx one), as seconds or an HTTP-date. A POST (not idempotent: a retry after an
// answer that was lost could create the object twice) is retried only when
// the server cannot have applied it: no connection was made, or it answered
// 429 or 503.
//
// Deadlines and cancellation (CallOptions, per call): no attempt and no
// retry starts after the deadline (a backoff that would end past it is not
// waited: the last error is returned), a transfer in flight is aborted when
// the deadline passes (DeadlineExceeded), and a set cancel flag ends the call
// within ~50 ms, in flight or in a backoff (Cancelled).
//
// Thread-safety: all methods may be called concurrently; each call takes its
// own pooled connection, and sequential calls reuse a kept-alive connection
// (up to 4 idle ones are kept). Credentials are never logged; requests are
// logged at VLOG(4) (method, path, query, HTTP status, duration).
#ifndef HCUDP_KUBE_CLIENT_H_
#define HCUDP_KUBE_CLIENT_H_

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "hcudp/clock.h"
#include "hcudp/export.h"
#include "hcudp/kube_config.h"
#include "hcudp/retry_policy.h"
#include "hcudp/status.h"

namespace hcudp {

// A REST path such as /api/v1/nodes/n1/status or /api/v1/namespaces/ns/pods.
// Only core/v1 is needed today; `api_prefix` allows "/apis/<group>/<version>".
struct HCUDP_EXPORT ResourcePath {
  std::string api_prefix = "/api/v1";
  std::string resource;        // "nodes", "pods", "configmaps"
  std::string namespace_name;  // empty: cluster-scoped, or all namespaces for a collection
  std::string name;            // empty: the collection
  std::string subresource;     // "status" or empty

  // The URL path, with each segment percent-escaped.
  std::string ToString() const;
};

HCUDP_EXPORT ResourcePath NodePath(std::string name);
HCUDP_EXPORT ResourcePath NodeStatusPath(std::string name);
HCUDP_EXPORT ResourcePath PodPath(std::string namespace_name, std::string name);
// Pods of one namespace, or of all namespaces when `namespace_name` is empty.
HCUDP_EXPORT ResourcePath PodsPath(std::string namespace_name = "");
HCUDP_EXPORT ResourcePath ConfigMapPath(std::string namespace_name, std::string name);
HCUDP_EXPORT ResourcePath ConfigMapsPath(std::string namespace_name);

struct ListOptions {
  std::string label_selector;  // "app=x,tier!=db"
  std::string field_selector;  // "spec.nodeName=node1"
  std::string resource_version;
  int64_t limit = 0;  // 0: no paging
  std::string continue_token;
  // WATCH only: server-side duration (0: the client's watch_timeout_s) and
  // whether to ask for BOOKMARK events.
  int timeout_seconds = 0;
  bool allow_watch_bookmarks = false;
};

// Per-call limits; see the header comment.
struct CallOptions {
  // When the whole call (all attempts and backoffs) must have ended, on the
  // client's clock (KubeClientOptions::clock; the real steady clock unless a
  // test substitutes one).
  std::optional<Clock::TimePoint> deadline;
  // Ends the call with Cancelled once it reads true. Not owned.
  const std::atomic<bool>* cancel = nullptr;
  // Overrides KubeClientOptions::max_retries for this call; 0 for a caller
  // that has its own retry loop (one retry layer, not two nested).
  std::optional<int> max_retries;
  // A caller with its own short deadline (kubelet's Allocate, a DRA
  // Prepare): its retries wait a short ladder of their own (100 ms doubling,
  // jittered, Retry-After honoured) and only while they fit before
  // `deadline`, without moving the process's shared ladder or spending its
  // budget. A few retries inside a deadline of seconds are no storm, and an
  // outage answers such a caller with a refusal in time, not a hang.
  bool within_deadline = false;
  // When set, receives the Retry-After (seconds) of the last refusal of the
  // call (429, 503), or is reset: a caller's own retry loop waits at least
  // that long (Backoff::Pause). Not owned.
  std::optional<int>* retry_after_s = nullptr;
  // A ladder the call's own retries continue (a caller whose every attempt
  // is one call). Null: a fresh ladder for this call. Ignored with
  // within_deadline. Not owned.
  Backoff* backoff = nullptr;
};

enum class PatchType {
  kMerge,           // application/merge-patch+json (RFC 7386)
  kStrategicMerge,  // application/strategic-merge-patch+json
  kJson,            // application/json-patch+json (RFC 6902)
};
HCUDP_EXPORT std::string_view PatchContentType(PatchType type);

struct DeleteOptions {
  std::optional<std::string> precondition_uid;
  std::optional<std::string> precondition_resource_version;
  std::optional<int64_t> grace_period_seconds;
};

enum class WatchEventType { kAdded, kModified, kDeleted, kBookmark, kError };

struct WatchEvent {
  WatchEventType type = WatchEventType::kError;
  // The object as JSON (for kError the API Status object).
  std::string object_json;
  // metadata.resourceVersion of the object (the new watch position).
  std::string resource_version;
};

struct KubeClientOptions {
  // TCP+TLS connect timeout. Default 5000.
  int connect_timeout_ms = 5000;
  // Whole-request timeout for every non-watch call. Default 15000.
  int request_timeout_ms = 15000;
  // Server-side watch duration when ListOptions::timeout_seconds is 0; the
  // client gives up when no byte (events or bookmarks) arrives for this long
  // plus 30 s (with bookmarks asked for: watch_stall_timeout_s). Default 300.
  int watch_timeout_s = 300;
  // A watch that asked for bookmarks (the API server sends one about every
  // minute) and receives no byte for this long is stalled (a dead peer, a
  // proxy that dropped it): it ends with DeadlineExceeded and the caller
  // re-watches. Default 90.
  int watch_stall_timeout_s = 90;
  // Retries after the first attempt on 429/5xx/connection failure. Default 4.
  int max_retries = 4;
  // The process's retry policy: the options of every loop's ladder and the
  // retry budget they share (give all clients of a process the same one).
  // Default (null): the
  // client makes its own from the three fields below (initial step, cap,
  // longest Retry-After honoured; defaults 1000 / 30000 / 60000), with the
  // default jitter and stable period and a budget of 6 retries refilled one
  // per max_backoff_ms / 6, on `clock`.
  std::shared_ptr<RetryPolicy> retry_policy;
  int initial_backoff_ms = 1000;
  int max_backoff_ms = 30000;
  int max_retry_after_ms = 60000;
  // Default "hcu-device-plugin/<version>".
  std::string user_agent;
  // What backoffs sleep on and deadlines are read from. Not owned; must
  // outlive the client. Default (null): Clock::Real().
  Clock* clock = nullptr;
  // Called after every response or failed attempt (retries included), from
  // the calling thread: `verb` is the HTTP method, or "WATCH"; `code` the
  // HTTP status, 0 when no response came. Must not block. Default: none.
  std::function<void(const std::string& verb, int code)> on_response;
};

class HCUDP_EXPORT KubeClient {
 public:
  // Validates `config` (server URL, paired client cert/key). Reads nothing
  // over the network.
  static StatusOr<std::unique_ptr<KubeClient>> New(KubeConfig config,
                                                   KubeClientOptions options = {});
  ~KubeClient();
  KubeClient(const KubeClient&) = delete;
  KubeClient& operator=(const KubeClient&) = delete;

  // The clock the client sleeps its backoffs on and reads CallOptions
  // deadlines from (KubeClientOptions::clock, else Clock::Real()); code that
  // computes deadlines for this client computes them on it.
  Clock& clock() const;

  // The process's retry policy (KubeClientOptions::retry_policy, or the
  // client's own): every loop that calls the API server through this client
  // takes its own ladder from it (RetryPolicy::NewBackoff) and waits that
  // ladder's pauses after a failure.
  RetryPolicy& retry_policy() const;

  // Each returns the response body (an object or list as JSON).
  StatusOr<std::string> Get(const ResourcePath& path, const CallOptions& call = {});
  StatusOr<std::string> List(const ResourcePath& collection, const ListOptions& options = {},
                             const CallOptions& call = {});
  StatusOr<std::string> Create(const ResourcePath& collection, std::string_view object_json,
                               const CallOptions& call = {});
  // A metadata.resourceVersion inside a merge patch is a precondition: a stale
  // one gives Aborted (re-read and retry).
  StatusOr<std::string> Patch(const ResourcePath& path, PatchType type, std::string_view patch,
                              const CallOptions& call = {});
  // PUT: replaces the object; its metadata.resourceVersion is a precondition
  // (a stale one gives Aborted: re-read and retry).
  StatusOr<std::string> Update(const ResourcePath& path, std::string_view object_json,
                               const CallOptions& call = {});
  // Returns the last state of the deleted object as the server reports it.
  StatusOr<std::string> Delete(const ResourcePath& path, const DeleteOptions& options = {},
                               const CallOptions& call = {});

  // Streams WATCH events to `on_event` (called on this thread) until the
  // server ends the stream (OK), `on_event` returns false (OK), `*cancel`
  // becomes true (Cancelled; checked at least every 100 ms), or an error.
  // An ERROR event with code 410 ends the watch with OutOfRange: relist.
  // Not retried: the caller (e.g. PodCache) owns the relist/rewatch policy;
  // when the server refused the watch with a Retry-After header (429, 503;
  // seconds or an HTTP-date) its seconds are stored in `*retry_after_s` (else it is reset), for
  // that policy to honour.
  Status Watch(const ResourcePath& collection, const ListOptions& options,
               const std::function<bool(const WatchEvent&)>& on_event,
               const std::atomic<bool>* cancel = nullptr,
               std::optional<int>* retry_after_s = nullptr);

  const std::string& server() const;

 private:
  class Impl;
  explicit KubeClient(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Status predicates for the API's answers (see the mapping above).
HCUDP_EXPORT bool IsNotFound(const Status& status);
HCUDP_EXPORT bool IsConflict(const Status& status);       // 409 Conflict
HCUDP_EXPORT bool IsAlreadyExists(const Status& status);  // 409 AlreadyExists
HCUDP_EXPORT bool IsGone(const Status& status);           // 410 Expired/Gone

// The pause before asking again: `backoff`, raised to what a refusal's
// Retry-After asked for (`retry_after_s`, as Watch reports it), at most
// `cap`. A Retry-After never shortens the backoff.
inline std::chrono::milliseconds PauseForRetryAfter(std::chrono::milliseconds backoff,
                                                    const std::optional<int>& retry_after_s,
                                                    std::chrono::milliseconds cap) {
  if (!retry_after_s) return backoff;
  return std::max(backoff,
                  std::min<std::chrono::milliseconds>(std::chrono::seconds(*retry_after_s), cap));
}

}  // namespace hcudp

#endif  // HCUDP_KUBE_CLIENT_H_
