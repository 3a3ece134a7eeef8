// MetricsServer: the HTTP server behind --metrics-address (doc/metrics.md).
// civetweb, driven directly rather than through prometheus-cpp's Exposer:
// the Exposer adds its own exposer_* families (a summary in microseconds,
// outside the hcudp_ prefix) and answers "Content-Type: text/plain" without
// the text format's version, and neither can be turned off.
//
// GET /metrics answers what `body` returns: 200 with the text, or 404 while
// it returns nullopt (the daemon does not serve kubelet yet). Every other
// path is 404, every other method 405.
//
// Slow clients (issue 25): civetweb reads a request on one worker thread
// until it is complete, so a client that trickles its request holds a worker
// for up to kRequestTimeoutMs. kWorkers workers leave scrapes answered while
// fewer than kWorkers such clients hold them; more can still delay a scrape,
// which is why readiness does not depend on this port (the chart's exec
// probes).
//
// Thread-safety: `body` is called from the worker threads, concurrently.
#ifndef HCU_DP_DAEMON_METRICS_SERVER_H_
#define HCU_DP_DAEMON_METRICS_SERVER_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "hcudp/status.h"

struct mg_context;
struct mg_connection;

namespace hcudp::daemon {

class MetricsServer {
 public:
  // Requests answered at once (civetweb worker threads; civetweb adds its
  // master thread, which accepts). A scrape takes well under a millisecond;
  // the others are there for clients that hold a worker without finishing
  // their request (doc/metrics.md, "Slow clients").
  static constexpr int kWorkers = 8;
  // A request (line and headers) must arrive within this, or the
  // connection is closed: a scraper sends its ~200 bytes in one segment.
  static constexpr int kRequestTimeoutMs = 2000;
  // The Prometheus text format, version 0.0.4.
  static constexpr char kContentType[] = "text/plain; version=0.0.4; charset=utf-8";

  using Body = std::function<std::optional<std::string>()>;

  // Listens on `listen_spec` (civetweb's listening_ports syntax, from
  // CivetListenSpec). A bind failure is InvalidArgument naming `flag_value`.
  static StatusOr<std::unique_ptr<MetricsServer>> Start(const std::string& listen_spec,
                                                        const std::string& flag_value, Body body);
  // Stops accepting and waits for the workers (a request in flight ends);
  // connects to the port meanwhile, which wakes civetweb's accepting thread.
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  // The port actually bound (useful with port 0).
  int port() const { return port_; }

 private:
  explicit MetricsServer(Body body) : body_(std::move(body)) {}
  static int Handle(mg_connection* conn, void* self);

  const Body body_;
  mg_context* ctx_ = nullptr;
  int port_ = 0;
  std::string host_;  // where a connection to the port goes (the destructor's)
};

}  // namespace hcudp::daemon

#endif  // HCU_DP_DAEMON_METRICS_SERVER_H_
