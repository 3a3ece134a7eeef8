#include "hcudp_internal/metrics_server.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <map>
#include <string_view>
#include <thread>

#include "hcudp_internal/log.h"

namespace hcudp {
// (A namespace of its own: the product's unity build joins this file with
// others whose anonymous names would collide.)
namespace metrics_http {
namespace {

using Clock = std::chrono::steady_clock;

// epoll tags: connections count up from kFirstConnection.
constexpr uint64_t kWakeTag = 0;
constexpr uint64_t kListenTag = 1;
constexpr uint64_t kFirstConnection = 2;
// Connections taken per readiness of the listening socket, so that a flood
// of connects does not starve the requests already in.
constexpr int kAcceptBatch = 64;
// When accept finds no fd left and no connection to drop, the listening
// socket is left alone this long (level-triggered, it would spin).
constexpr auto kAcceptPause = std::chrono::milliseconds(100);
// After the answer, the peer's close is awaited this long (closing with
// unread input would reset the connection and could lose the answer).
constexpr auto kLingerTime = std::chrono::milliseconds(500);

// An answer, closing the connection.
std::string Response(int status, std::string_view reason, std::string_view content_type,
                     std::string_view body, std::string_view extra_header = {}) {
  std::string r = "HTTP/1.1 " + std::to_string(status) + " ";
  r.append(reason).append("\r\nContent-Type: ").append(content_type);
  r.append("\r\nContent-Length: ").append(std::to_string(body.size())).append("\r\n");
  r.append(extra_header).append("Connection: close\r\n\r\n").append(body);
  return r;
}

constexpr std::string_view kPlain = "text/plain; charset=utf-8";

// Where the request's head ends (after its blank line), or npos.
size_t HeadEnd(const std::string& in) {
  const size_t crlf = in.find("\r\n\r\n");
  const size_t lf = in.find("\n\n");
  if (crlf == std::string::npos && lf == std::string::npos) return std::string::npos;
  if (crlf != std::string::npos && (lf == std::string::npos || crlf + 2 < lf)) return crlf + 4;
  return lf + 2;
}

std::string Answer(const std::string& head, const MetricsServer::Body& body) {
  const std::string line = head.substr(0, head.find_first_of("\r\n"));
  const size_t sp1 = line.find(' ');
  const size_t sp2 = sp1 == std::string::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string::npos || line.compare(sp2 + 1, 7, "HTTP/1.") != 0 ||
      line.size() != sp2 + 9) {
    return Response(400, "Bad Request", kPlain, "400 Bad Request\n");
  }
  const std::string method = line.substr(0, sp1);
  const std::string target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  if (target.substr(0, target.find('?')) != "/metrics") {
    return Response(404, "Not Found", kPlain, "404 Not Found\n");
  }
  if (method != "GET") {
    return Response(405, "Method Not Allowed", kPlain, "405 Method Not Allowed\n",
                    "Allow: GET\r\n");
  }
  std::optional<std::string> text = body();
  if (!text) return Response(404, "Not Found", kPlain, "404 Not Found: not serving kubelet yet\n");
  return Response(200, "OK", MetricsServer::kContentType, *text);
}

bool AllDigits(const std::string& s) {
  if (s.empty() || s.size() > 5) return false;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return std::stoi(s) <= 65535;
}

}  // namespace
}  // namespace metrics_http

// The server's thread and everything it owns. Only Run (the thread) touches
// the connections; Stop only writes the eventfd.
class MetricsServer::Loop {
 public:
  using Clock = metrics_http::Clock;

  Loop(int listen_fd, int port, Body body)
      : listen_fd_(listen_fd), port_(port), body_(std::move(body)) {}
  ~Loop() {
    for (auto& [tag, c] : connections_) ::close(c.fd);
    if (epoll_fd_ >= 0) ::close(epoll_fd_);
    if (wake_fd_ >= 0) ::close(wake_fd_);
    ::close(listen_fd_);
  }

  Status Init() {
    epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
    wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (epoll_fd_ < 0 || wake_fd_ < 0 ||
        !Watch(wake_fd_, metrics_http::kWakeTag, EPOLLIN, EPOLL_CTL_ADD) ||
        !Watch(listen_fd_, metrics_http::kListenTag, EPOLLIN, EPOLL_CTL_ADD)) {
      return InternalError(std::string("metrics server: epoll: ") + std::strerror(errno));
    }
    thread_ = std::thread([this] { Run(); });
    pthread_setname_np(thread_.native_handle(), "hcudp-metrics");
    return OkStatus();
  }

  void Stop() {
    const uint64_t one = 1;
    (void)!::write(wake_fd_, &one, sizeof one);
    if (thread_.joinable()) thread_.join();
  }

  int port() const { return port_; }

 private:
  enum class Phase { kRequest, kResponse, kLinger };
  struct Connection {
    int fd = -1;
    Phase phase = Phase::kRequest;
    Clock::time_point deadline;
    std::string in;
    std::string out;
    size_t sent = 0;
  };

  bool Watch(int fd, uint64_t tag, uint32_t events, int op) {
    epoll_event ev{};
    ev.events = events;
    ev.data.u64 = tag;
    return ::epoll_ctl(epoll_fd_, op, fd, &ev) == 0;
  }

  void Run() {
    epoll_event events[64];
    for (;;) {
      const int n = ::epoll_wait(epoll_fd_, events, 64, TimeoutMs(Clock::now()));
      if (n < 0 && errno != EINTR) {
        LOG(ERROR) << "metrics server: epoll_wait: " << std::strerror(errno);
        return;
      }
      for (int i = 0; i < n; ++i) {
        const uint64_t tag = events[i].data.u64;
        if (tag == metrics_http::kWakeTag) return;
        if (tag == metrics_http::kListenTag) {
          AcceptSome();
          continue;
        }
        auto it = connections_.find(tag);
        if (it != connections_.end()) Serve(it, events[i].events);
      }
      Expire(Clock::now());
    }
  }

  // Until the earliest deadline or the listener's resumption; -1: none.
  int TimeoutMs(Clock::time_point now) const {
    std::optional<Clock::time_point> next = paused_until_;
    for (const auto& [tag, c] : connections_) {
      if (!next || c.deadline < *next) next = c.deadline;
    }
    if (!next) return -1;
    const auto ms = std::chrono::ceil<std::chrono::milliseconds>(*next - now).count();
    return static_cast<int>(std::clamp<int64_t>(ms, 0, 60'000));
  }

  void AcceptSome() {
    for (int i = 0; i < metrics_http::kAcceptBatch; ++i) {
      const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
          // Out of fds: the oldest connection gives way, or the listener
          // rests until one closes or its deadline passes.
          if (!connections_.empty()) {
            DropOldest();
            continue;
          }
          VLOG(2) << "metrics server: accept: " << std::strerror(errno);
          Watch(listen_fd_, metrics_http::kListenTag, 0, EPOLL_CTL_MOD);
          paused_until_ = Clock::now() + metrics_http::kAcceptPause;
        }
        return;  // EAGAIN: none left; ECONNABORTED and the like: next time
      }
      // At the cap, the new connection takes the place of the oldest.
      if (connections_.size() >= static_cast<size_t>(kMaxConnections)) DropOldest();
      const uint64_t tag = next_tag_++;
      Connection c;
      c.fd = fd;
      c.deadline = Clock::now() + std::chrono::milliseconds(kRequestTimeoutMs);
      if (!Watch(fd, tag, EPOLLIN | EPOLLRDHUP, EPOLL_CTL_ADD)) {
        ::close(fd);
        continue;
      }
      connections_.emplace(tag, std::move(c));
    }
  }

  // The oldest connection still sending its request (an idle or trickling
  // client), or else the oldest of all.
  void DropOldest() {
    if (connections_.empty()) return;
    auto victim = connections_.begin();
    for (auto it = connections_.begin(); it != connections_.end(); ++it) {
      if (it->second.phase == Phase::kRequest) {
        victim = it;
        break;
      }
    }
    Close(victim);
  }

  void Close(std::map<uint64_t, Connection>::iterator it) {
    ::close(it->second.fd);  // also leaves the epoll set
    connections_.erase(it);
  }

  void Serve(std::map<uint64_t, Connection>::iterator it, uint32_t events) {
    Connection& c = it->second;
    if (c.phase == Phase::kResponse) {
      if (!Send(it->first, c)) return Close(it);
      if (c.phase == Phase::kResponse) return;
    }
    // kRequest or kLinger: read what is there.
    char buf[4096];
    for (;;) {
      const ssize_t n = ::recv(c.fd, buf, sizeof buf, 0);
      if (n == 0) return Close(it);  // the peer is done (or gave up)
      if (n < 0) {
        if (errno == EAGAIN || errno == EINTR) break;
        return Close(it);
      }
      if (c.phase == Phase::kLinger) continue;  // input after the answer is dropped
      c.in.append(buf, static_cast<size_t>(n));
      const size_t end = metrics_http::HeadEnd(c.in);
      if (end == std::string::npos && c.in.size() <= kMaxRequestBytes) continue;
      if (end == std::string::npos || end > kMaxRequestBytes) {
        c.out = metrics_http::Response(431, "Request Header Fields Too Large", metrics_http::kPlain,
                                       "431 Request Header Fields Too Large\n");
      } else {
        c.out = metrics_http::Answer(c.in.substr(0, end), body_);
      }
      c.in = std::string();
      c.phase = Phase::kResponse;
      c.deadline = Clock::now() + std::chrono::milliseconds(kResponseTimeoutMs);
      if (!Send(it->first, c)) return Close(it);
      if (c.phase == Phase::kResponse) {
        Watch(c.fd, it->first, EPOLLOUT, EPOLL_CTL_MOD);
        return;
      }
    }
    if ((events & (EPOLLHUP | EPOLLERR)) != 0) Close(it);
  }

  // Sends what the socket takes; when all is sent, half-closes and lingers.
  // False when the connection failed.
  bool Send(uint64_t tag, Connection& c) {
    while (c.sent < c.out.size()) {
      const ssize_t n = ::send(c.fd, c.out.data() + c.sent, c.out.size() - c.sent, MSG_NOSIGNAL);
      if (n < 0) return errno == EAGAIN || errno == EINTR;
      c.sent += static_cast<size_t>(n);
    }
    c.out = std::string();
    ::shutdown(c.fd, SHUT_WR);
    c.phase = Phase::kLinger;
    c.deadline = Clock::now() + metrics_http::kLingerTime;
    Watch(c.fd, tag, EPOLLIN | EPOLLRDHUP, EPOLL_CTL_MOD);
    return true;
  }

  void Expire(Clock::time_point now) {
    for (auto it = connections_.begin(); it != connections_.end();) {
      auto here = it++;
      if (here->second.deadline <= now) Close(here);
    }
    if (paused_until_ && *paused_until_ <= now) {
      paused_until_.reset();
      Watch(listen_fd_, metrics_http::kListenTag, EPOLLIN, EPOLL_CTL_MOD);
    }
  }

  const int listen_fd_;
  const int port_;
  const Body body_;
  int epoll_fd_ = -1;
  int wake_fd_ = -1;
  std::thread thread_;
  // The server thread's own, after Init.
  std::map<uint64_t, Connection> connections_;  // by tag: oldest first
  uint64_t next_tag_ = metrics_http::kFirstConnection;
  std::optional<Clock::time_point> paused_until_;
};

MetricsServer::MetricsServer(std::unique_ptr<Loop> loop) : loop_(std::move(loop)) {}

MetricsServer::~MetricsServer() { loop_->Stop(); }

int MetricsServer::port() const { return loop_->port(); }

StatusOr<std::unique_ptr<MetricsServer>> MetricsServer::Start(const MetricsAddress& address,
                                                              const std::string& flag_value,
                                                              Body body) {
  const std::string flag = "--metrics-address " + flag_value + ": ";
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const int rc =
      ::getaddrinfo(address.host.c_str(), std::to_string(address.port).c_str(), &hints, &found);
  if (rc != 0) {
    return InvalidArgumentError(
        flag + "host name \"" + address.host + "\" did not resolve (" + ::gai_strerror(rc) +
        "); give an IP address, e.g. 127.0.0.1:" + std::to_string(address.port));
  }
  int fd = -1;
  int bind_errno = 0;
  for (const addrinfo* a = found; a != nullptr && fd < 0; a = a->ai_next) {
    fd = ::socket(a->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) continue;
    const int on = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    if (a->ai_family == AF_INET6) ::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof on);
    if (::bind(fd, a->ai_addr, a->ai_addrlen) != 0 || ::listen(fd, SOMAXCONN) != 0) {
      bind_errno = errno;
      ::close(fd);
      fd = -1;
    }
  }
  ::freeaddrinfo(found);
  if (fd < 0) {
    VLOG(3) << "metrics server: bind: " << std::strerror(bind_errno);
    return InvalidArgumentError(flag +
                                "cannot listen there (is the port in use, or the address "
                                "not one of this host's?)");
  }
  sockaddr_storage bound{};
  socklen_t len = sizeof bound;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len);
  const int port =
      ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<const sockaddr_in6*>(&bound)->sin6_port
                                        : reinterpret_cast<const sockaddr_in*>(&bound)->sin_port);
  auto loop = std::make_unique<Loop>(fd, port, std::move(body));
  HCUDP_RETURN_IF_ERROR(loop->Init());
  return std::unique_ptr<MetricsServer>(new MetricsServer(std::move(loop)));
}

StatusOr<MetricsAddress> ParseMetricsAddress(const std::string& address) {
  const std::string accepted = "--metrics-address: \"" + address +
                               "\" is not host:port (e.g. :9400, 127.0.0.1:9400, [::1]:9400)";
  size_t colon = address.rfind(':');
  if (colon == std::string::npos) return InvalidArgumentError(accepted);
  std::string host = address.substr(0, colon);
  std::string port = address.substr(colon + 1);
  if (!metrics_http::AllDigits(port)) return InvalidArgumentError(accepted);
  MetricsAddress out;
  out.port = std::stoi(port);
  if (host.empty() || host == "0.0.0.0") {  // every IPv4 address
    out.host = "0.0.0.0";
    return out;
  }
  if (host.front() == '[') {
    if (host.back() != ']' || host.size() < 3) return InvalidArgumentError(accepted);
    out.host = host.substr(1, host.size() - 2);
    for (char c : out.host) {
      if (!std::isxdigit(static_cast<unsigned char>(c)) && c != ':' && c != '.') {
        return InvalidArgumentError(accepted);
      }
    }
    return out;
  }
  for (char c : host) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-') {
      return InvalidArgumentError(accepted);
    }
  }
  out.host = host;
  return out;
}

}  // namespace hcudp
