// One HTTP/1.1 exchange, over TLS (OpenSSL) for https, with the TLS material
// held in memory; KubeClient adds Kubernetes semantics on top. The wire
// format is http_response_parser.h's, the socket and TLS
// http_connection.h's. A proxy is used as client-go and libcurl use one:
// from HTTPS_PROXY/HTTP_PROXY and NO_PROXY (http_proxy.h); kubeconfig's
// proxy-url is refused.
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
  // On a new connection, not a kept-alive one. A request other than a POST
  // is sent once more on a new connection when a kept-alive one closes
  // before any answer (the server timed it out meanwhile); a POST never is,
  // since the server may have applied it.
  bool fresh_connection = false;
};

struct HttpResponse {
  long status = 0;   // NOLINT(runtime/int): the type callers compare with
  std::string body;  // the non-streamed body
  std::optional<int> retry_after_s;
};

class HttpConnection;

// Runs requests so that consecutive requests to the same server reuse a
// kept-alive TCP+TLS connection. Thread-safe: each concurrent request takes
// its own connection; at most `max_idle` idle ones are kept (0: none, a new
// connection for every request).
class HttpChannelPool {
 public:
  explicit HttpChannelPool(size_t max_idle = 4);
  ~HttpChannelPool();
  HttpChannelPool(const HttpChannelPool&) = delete;
  HttpChannelPool& operator=(const HttpChannelPool&) = delete;

  // As Perform below.
  StatusOr<HttpResponse> Perform(const TlsMaterial& tls, const HttpRequest& request);

 private:
  // An idle connection matching `key` that is still open, or null.
  std::unique_ptr<HttpConnection> TakeIdle(const std::string& key);
  void PutIdle(std::unique_ptr<HttpConnection> connection);

  const size_t max_idle_;
  Mutex mu_;  // a leaf: no I/O under it
  std::vector<std::unique_ptr<HttpConnection>> idle_ HCUDP_GUARDED_BY(mu_);
};

// One request on a fresh connection.
// Transport failures: DeadlineExceeded (timeout), Unauthenticated (server
// certificate not trusted), Unavailable (connect/send/receive failed: worth
// a retry; also a malformed or truncated response), Cancelled (*cancel set),
// ResourceExhausted (a collected body over max_body_bytes), InvalidArgument
// (a URL, header or TLS material that cannot be used), Internal (anything
// else). An HTTP error status is not a failure here.
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
