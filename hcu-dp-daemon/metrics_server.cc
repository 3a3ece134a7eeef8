#include "metrics_server.h"

#include <civetweb.h>
#include <glog/logging.h>

#include <cstring>
#include <mutex>
#include <string_view>
#include <vector>

namespace hcudp::daemon {
namespace {

// civetweb's own diagnostics about a connection (a malformed request, a
// closed peer): detail, below the default verbosity, so that clients cannot
// fill the log. Those without one come from mg_start2 (a bind
// failure), which Start reports as the flag's one-line error instead.
int LogCivetMessage(const mg_connection* conn, const char* message) {
  if (conn != nullptr) VLOG(3) << "metrics server: " << message;
  return 1;  // handled: civetweb writes nowhere else
}

void Reply(mg_connection* conn, int status, const char* reason, std::string_view content_type,
           std::string_view body, const char* extra_header = "") {
  mg_printf(conn,
            "HTTP/1.1 %d %s\r\nContent-Type: %.*s\r\nContent-Length: %zu\r\n%s"
            "Connection: close\r\n\r\n",
            status, reason, static_cast<int>(content_type.size()), content_type.data(), body.size(),
            extra_header);
  mg_write(conn, body.data(), body.size());
}

}  // namespace

StatusOr<std::unique_ptr<MetricsServer>> MetricsServer::Start(const std::string& listen_spec,
                                                              const std::string& flag_value,
                                                              Body body) {
  static std::once_flag init;
  std::call_once(init, [] { mg_init_library(0); });
  std::unique_ptr<MetricsServer> server(new MetricsServer(std::move(body)));
  const std::string workers = std::to_string(kWorkers);
  const std::string timeout = std::to_string(kRequestTimeoutMs);
  const char* options[] = {
      "listening_ports", listen_spec.c_str(), "num_threads", workers.c_str(), "request_timeout_ms",
      timeout.c_str(),   "enable_keep_alive", "no",          nullptr};
  mg_callbacks callbacks;
  std::memset(&callbacks, 0, sizeof(callbacks));
  callbacks.log_message = LogCivetMessage;
  mg_init_data init_data{&callbacks, nullptr, options};
  char error_text[256] = "";
  mg_error_data error{nullptr, error_text, sizeof(error_text)};
  server->ctx_ = mg_start2(&init_data, &error);
  if (server->ctx_ == nullptr) {
    VLOG(3) << "metrics server: civetweb: " << error_text;
    return InvalidArgumentError("--metrics-address " + flag_value +
                                ": cannot listen there (is the port in use, or the address "
                                "not one of this host's?)");
  }
  mg_server_port ports[4];
  const int n = mg_get_server_ports(server->ctx_, 4, ports);
  server->port_ = n > 0 ? ports[0].port : 0;
  mg_set_request_handler(server->ctx_, "/metrics", &MetricsServer::Handle, server.get());
  return server;
}

MetricsServer::~MetricsServer() {
  if (ctx_ != nullptr) mg_stop(ctx_);
}

int MetricsServer::Handle(mg_connection* conn, void* self) {
  const mg_request_info* req = mg_get_request_info(conn);
  constexpr std::string_view kPlain = "text/plain; charset=utf-8";
  // The handler also gets /metrics/<anything>.
  if (req->local_uri == nullptr || std::strcmp(req->local_uri, "/metrics") != 0) {
    Reply(conn, 404, "Not Found", kPlain, "404 Not Found\n");
    return 404;
  }
  if (req->request_method == nullptr || std::strcmp(req->request_method, "GET") != 0) {
    Reply(conn, 405, "Method Not Allowed", kPlain, "405 Method Not Allowed\n", "Allow: GET\r\n");
    return 405;
  }
  std::optional<std::string> body = static_cast<MetricsServer*>(self)->body_();
  if (!body) {
    Reply(conn, 404, "Not Found", kPlain, "404 Not Found: not serving kubelet yet\n");
    return 404;
  }
  Reply(conn, 200, "OK", kContentType, *body);
  return 200;
}

}  // namespace hcudp::daemon
