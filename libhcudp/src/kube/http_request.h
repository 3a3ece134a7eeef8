// One HTTP exchange over libcurl, with TLS material held in memory. The only
// place that touches CURL; KubeClient adds Kubernetes semantics on top.
#ifndef HCUDP_SRC_KUBE_HTTP_REQUEST_H_
#define HCUDP_SRC_KUBE_HTTP_REQUEST_H_

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hcudp/status.h"
#include "hcudp_internal/thread_annotations.h"

namespace hcudp::kube {

struct TlsMaterial {
  std::string ca_pem;  // empty: system trust store
  bool insecure_skip_verify = false;
  std::string client_cert_pem;
  std::string client_key_pem;
};

struct HttpRequest {
  std::string method = "GET";
  std::string url;
  // "Name: value" lines. May hold the Authorization header: never logged.
  std::vector<std::string> headers;
  std::string body;
  int connect_timeout_ms = 5000;
  int total_timeout_ms = 0;  // 0: none (watch)
  int idle_timeout_s = 0;    // abort when no byte arrives for this long; 0: none
  // Streaming: when set, a 2xx body is handed over as it arrives instead of
  // being collected; returning false ends the transfer (not an error).
  std::function<bool(std::string_view)> on_body_data;
  const std::atomic<bool>* cancel = nullptr;  // polled every 50 ms
  // The transfer (connect included) is aborted with DeadlineExceeded when
  // this passes; one already past fails at once.
  std::optional<std::chrono::steady_clock::time_point> deadline;
  // A collected (non-streamed) body longer than this ends the transfer with
  // ResourceExhausted: a broken or hostile server cannot exhaust memory. The
  // default is far above any object the API server stores (~1.5 MiB each).
  size_t max_body_bytes = size_t{64} << 20;
  // When set, a failed transfer sets it to whether the request can have
  // reached the server (false only when no connection was made): a
  // non-idempotent request (POST) is retried only when it was not.
  bool* maybe_sent = nullptr;
  // On a new connection, not a kept-alive one: libcurl silently sends a
  // request again when a reused connection closes before any answer, which
  // for a POST the server may have applied means applying it twice.
  bool fresh_connection = false;
};

struct HttpResponse {
  long status = 0;   // NOLINT(runtime/int): CURL's type
  std::string body;  // the non-streamed body
  std::optional<int> retry_after_s;
};

// An in-memory PEM (CA, client certificate or key) as a file, for a libcurl
// that takes these only by path (libcurl on GnuTLS before 8.x has no
// CURLOPT_*_BLOB): a memfd named /proc/self/fd/N, never on disk.
class PemFile;

// Runs requests on pooled CURL handles so that consecutive requests to the
// same server reuse a kept-alive TCP+TLS connection. Thread-safe: each
// concurrent request takes its own handle; at most `max_idle` are kept.
class HttpChannelPool {
 public:
  explicit HttpChannelPool(size_t max_idle = 4);
  ~HttpChannelPool();
  HttpChannelPool(const HttpChannelPool&) = delete;
  HttpChannelPool& operator=(const HttpChannelPool&) = delete;

  // As Perform below.
  StatusOr<HttpResponse> Perform(const TlsMaterial& tls, const HttpRequest& request);

 private:
  struct Channel;
  // The file holding `pem`, made once per content (a kept-alive connection
  // is reused only while the path stays the same).
  StatusOr<std::shared_ptr<const PemFile>> PemFileFor(const std::string& pem);

  const size_t max_idle_;
  Mutex mu_;  // a leaf: no I/O under it
  std::vector<std::unique_ptr<Channel>> idle_ HCUDP_GUARDED_BY(mu_);
  std::vector<std::shared_ptr<const PemFile>> pem_files_ HCUDP_GUARDED_BY(mu_);
};

// One request on a fresh connection.
// Transport failures: DeadlineExceeded (timeout), Unauthenticated (server
// certificate not trusted), Unavailable (connect/send/receive failed: worth
// a retry), Cancelled (*cancel set), ResourceExhausted (a collected body over
// max_body_bytes), Internal (anything else). An HTTP error
// status is not a failure here.
StatusOr<HttpResponse> Perform(const TlsMaterial& tls, const HttpRequest& request);

// The seconds a Retry-After header value asks for: delay-seconds ("120") or
// an HTTP-date ("Wed, 21 Oct 2026 07:28:00 GMT", and the obsolete RFC 850
// and asctime forms), the latter counted from the response's Date header
// when it has one (`date`; the server's own clock, so a skewed local clock
// does not matter), else from `now` (seconds since the epoch). A date in
// the past is 0. Nullopt for a value that is neither, or a day or more.
std::optional<int> ParseRetryAfter(std::string_view value, std::string_view date, int64_t now);

// Percent-escapes one URL path segment or query value.
std::string UrlEscape(std::string_view text);

}  // namespace hcudp::kube

#endif  // HCUDP_SRC_KUBE_HTTP_REQUEST_H_
