// MetricsServer: the HTTP server behind the daemon's --metrics-address
// (doc/metrics.md). Not the daemon's own business (it serves whatever text
// `body` gives), so it lives with the frontends' shared plumbing.
// Our own small HTTP/1.1 server, for one path: one thread, epoll, every
// connection non-blocking.
//
// GET /metrics answers what `body` returns: 200 with the text, or 404 while
// it returns nullopt (the daemon does not serve kubelet yet). Every other
// path is 404, every other method 405; a request that is not HTTP/1.x is
// 400, one over kMaxRequestBytes 431. Every answer closes the connection.
//
// Hostile clients (issue 29): a connection has kRequestTimeoutMs from its
// accept to send its whole request (a trickle does not extend it), and
// kResponseTimeoutMs to take the answer. At most kMaxConnections are open;
// a new one drops the oldest that has not sent its request yet (the oldest
// of any when none is waiting), so idle, trickling or held sockets by the
// thousand cannot keep a scraper out, and the server's fds, threads and
// memory stay bounded. A scrape is answered in the loop as soon as its
// request is complete (the body takes well under a millisecond).
//
// Thread-safety: `body` is called on the server's thread only.
#ifndef HCUDP_INTERNAL_METRICS_SERVER_H_
#define HCUDP_INTERNAL_METRICS_SERVER_H_

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "hcudp/status.h"

namespace hcudp {

// Where --metrics-address listens: `host` is an IP address or a host name
// ("0.0.0.0" for every IPv4 address, IPv6 without brackets).
struct MetricsAddress {
  std::string host;
  int port = 0;
};

// "host:port", ":port" or "[v6]:port" -> where to listen (":port" is
// every IPv4 address); InvalidArgument naming --metrics-address otherwise.
// A host name is resolved when the server starts, not here.
StatusOr<MetricsAddress> ParseMetricsAddress(const std::string& address);

class MetricsServer {
 public:
  static constexpr int kMaxConnections = 256;
  // A request (line and headers) must arrive within this from the accept:
  // a scraper sends its ~200 bytes in one segment.
  static constexpr int kRequestTimeoutMs = 2000;
  // The answer must be taken within this once the request is complete.
  static constexpr int kResponseTimeoutMs = 5000;
  static constexpr size_t kMaxRequestBytes = 8192;
  // The Prometheus text format, version 0.0.4.
  static constexpr char kContentType[] = "text/plain; version=0.0.4; charset=utf-8";

  using Body = std::function<std::optional<std::string>()>;

  // Listens on `address` and starts the server's thread. A host name that
  // does not resolve, or an address it cannot bind, is InvalidArgument
  // naming --metrics-address and `flag_value`.
  static StatusOr<std::unique_ptr<MetricsServer>> Start(const MetricsAddress& address,
                                                        const std::string& flag_value, Body body);
  // Wakes the thread and joins it (milliseconds: the loop never waits on a
  // client), then closes every connection.
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  // The port actually bound (useful with port 0).
  int port() const;

 private:
  class Loop;
  explicit MetricsServer(std::unique_ptr<Loop> loop);
  std::unique_ptr<Loop> loop_;
};

}  // namespace hcudp

#endif  // HCUDP_INTERNAL_METRICS_SERVER_H_
