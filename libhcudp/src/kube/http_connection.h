// One TCP connection to an HTTP server, TLS (OpenSSL) on it for https, with
// every wait bounded by a deadline and a cancel flag. The transport under
// HttpChannelPool (http_request.h); it knows nothing of HTTP itself.
#ifndef HCUDP_SRC_KUBE_HTTP_CONNECTION_H_
#define HCUDP_SRC_KUBE_HTTP_CONNECTION_H_

#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "hcudp/status.h"

typedef struct ssl_ctx_st SSL_CTX;
typedef struct ssl_st SSL;

namespace hcudp::kube {

struct TlsMaterial;
struct HttpProxy;

// The parts of an http(s) URL a request needs.
struct HttpEndpoint {
  bool https = false;
  std::string host;  // an IPv6 address without its brackets
  int port = 0;
  std::string target;       // path and query: "/api/v1/nodes?x=y"
  std::string host_header;  // "host[:port]", the port only when not the default
};

// Parses "http[s]://host[:port][/path][?query]"; user info, fragments and
// other schemes are refused (InvalidArgument).
StatusOr<HttpEndpoint> ParseHttpUrl(std::string_view url);

// The TLS client context for `tls`: the CA (or the system store when none),
// the client certificate and key, TLS 1.2 or later. One per distinct
// material for the whole process, made on first use and shared by every
// pool (OpenSSL fills its algorithm tables once, on the first context).
// InvalidArgument names the PEM that could not be used.
StatusOr<std::shared_ptr<SSL_CTX>> TlsContextFor(const TlsMaterial& tls);

// When a wait gives up: the caller's deadline (connect or whole request),
// no byte for `idle`, or *cancel set (looked at every 50 ms).
struct IoLimits {
  std::chrono::steady_clock::time_point deadline;
  std::chrono::steady_clock::duration idle{};  // zero: none
  const std::atomic<bool>* cancel = nullptr;
};

class HttpConnection {
 public:
  // Resolves, connects (TCP keepalive: 30 s idle, 10 s interval, 3 probes;
  // no Nagle) to the endpoint or `proxy` (null: none; for https through a
  // CONNECT tunnel) and for https shakes hands, verifying the server
  // against `ctx`'s trust and the endpoint's name or IP address unless
  // `verify` is false. Errors: DeadlineExceeded, Cancelled,
  // Unauthenticated (certificate not trusted), Unavailable (resolve,
  // connect, the proxy's CONNECT or the handshake failed).
  static StatusOr<std::unique_ptr<HttpConnection>> Open(const HttpEndpoint& endpoint,
                                                        const HttpProxy* proxy,
                                                        std::shared_ptr<SSL_CTX> ctx, bool verify,
                                                        const IoLimits& limits);
  ~HttpConnection();
  HttpConnection(const HttpConnection&) = delete;
  HttpConnection& operator=(const HttpConnection&) = delete;

  // A new exchange begins: the idle limit counts from now, not from the
  // last byte of the previous one (a kept-alive connection may have sat
  // idle for longer than a watch's idle limit).
  void StartExchange() { last_byte_ = std::chrono::steady_clock::now(); }
  // Sends all of `bytes`. Errors as Read.
  Status Write(std::string_view bytes, const IoLimits& limits);
  // Up to `size` bytes into `buffer`; 0 when the server closed the
  // connection. Errors: DeadlineExceeded, Cancelled, Unavailable.
  StatusOr<size_t> Read(char* buffer, size_t size, const IoLimits& limits);
  // For a kept-alive connection about to be used again: false when the
  // server closed it (or sent something unasked) meanwhile.
  bool LooksReusable();
  // What a kept-alive connection is matched by: scheme, host, port, proxy,
  // TLS context and verification.
  const std::string& key() const { return key_; }
  static std::string KeyFor(const HttpEndpoint& endpoint, const HttpProxy* proxy,
                            const SSL_CTX* ctx, bool verify);

 private:
  HttpConnection(int fd, std::string key) : fd_(fd), key_(std::move(key)) {}
  // Waits until the socket is ready for `events` (POLLIN/POLLOUT).
  Status WaitFor(short events, const IoLimits& limits);
  Status Handshake(const HttpEndpoint& endpoint, bool verify, const IoLimits& limits);
  // Asks the proxy for a tunnel to `endpoint` (CONNECT), before TLS.
  Status Tunnel(const HttpEndpoint& endpoint, const HttpProxy& proxy, const IoLimits& limits);

  const int fd_;
  const std::string key_;
  std::shared_ptr<SSL_CTX> ctx_;  // kept alive as long as ssl_ uses it
  SSL* ssl_ = nullptr;
  std::chrono::steady_clock::time_point last_byte_ = std::chrono::steady_clock::now();
};

}  // namespace hcudp::kube

#endif  // HCUDP_SRC_KUBE_HTTP_CONNECTION_H_
