#include "metrics_server.h"

#include <civetweb.h>
#include <fcntl.h>
#include <glog/logging.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <mutex>
#include <string_view>
#include <thread>
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

// The host a connection to `listen_spec` (CivetListenSpec's forms: "port",
// "host:port", "[v6]:port") reaches: loopback for every address.
std::string HostOf(const std::string& listen_spec) {
  const size_t colon = listen_spec.rfind(':');
  if (colon == std::string::npos) return "127.0.0.1";
  std::string host = listen_spec.substr(0, colon);
  if (host.size() > 2 && host.front() == '[') host = host.substr(1, host.size() - 2);
  if (host == "::") return "::1";
  return host;
}

// Opens and drops a connection to host:port, waiting at most 100 ms for it.
void Knock(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found) != 0) return;
  for (const addrinfo* a = found; a != nullptr; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) continue;
    if (::connect(fd, a->ai_addr, a->ai_addrlen) != 0 && errno == EINPROGRESS) {
      pollfd p{fd, POLLOUT, 0};
      ::poll(&p, 1, 100);
    }
    ::close(fd);
  }
  freeaddrinfo(found);
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
  server->host_ = HostOf(listen_spec);
  mg_set_request_handler(server->ctx_, "/metrics", &MetricsServer::Handle, server.get());
  return server;
}

// civetweb's master thread waits for connections 2 s at a time
// (SOCKET_TIMEOUT_QUANTUM) and sees mg_stop's flag only between waits: a
// connection wakes it, so that a stop takes milliseconds, not up to 2 s.
// Knocks stop after the 2 s a stop took without them; mg_stop still waits
// for a worker busy with a request (kRequestTimeoutMs at most).
MetricsServer::~MetricsServer() {
  if (ctx_ == nullptr) return;
  std::atomic<bool> stopped{false};
  std::thread stop([this, &stopped] {
    mg_stop(ctx_);
    stopped = true;
  });
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (!stopped && std::chrono::steady_clock::now() < until) {
    Knock(host_, port_);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  stop.join();
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
