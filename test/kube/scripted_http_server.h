// A TCP server on 127.0.0.1 that answers each connection with a script (a
// function of the connection), over TLS when given a certificate: the
// hostile or broken servers the HTTP client must survive.
#ifndef HCUDP_TEST_KUBE_SCRIPTED_HTTP_SERVER_H_
#define HCUDP_TEST_KUBE_SCRIPTED_HTTP_SERVER_H_

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <functional>
#include <string>
#include <thread>

namespace hcudp::testing {

// One accepted connection, seen from the script.
class ScriptedConnection {
 public:
  ScriptedConnection(int fd, SSL* ssl) : fd_(fd), ssl_(ssl) {}
  // Reads up to the end of a request's header section (and a body of
  // `Content-Length`); "" when the client closed first.
  std::string ReadRequest() {
    std::string got;
    for (;;) {
      const size_t end = got.find("\r\n\r\n");
      if (end != std::string::npos) {
        const size_t cl = got.find("Content-Length: ");
        const size_t body = cl == std::string::npos ? 0 : std::stoul(got.substr(cl + 16));
        if (got.size() >= end + 4 + body) return got;
      }
      char buf[4096];
      const int n = ssl_ != nullptr ? SSL_read(ssl_, buf, sizeof(buf))
                                    : static_cast<int>(recv(fd_, buf, sizeof(buf), 0));
      if (n <= 0) return "";
      got.append(buf, static_cast<size_t>(n));
    }
  }
  // The name the client asked for (SNI); "" when none or plain HTTP.
  std::string server_name() const {
    const char* name =
        ssl_ != nullptr ? SSL_get_servername(ssl_, TLSEXT_NAMETYPE_host_name) : nullptr;
    return name != nullptr ? name : "";
  }
  // The socket, for a script that relays bytes itself (plain HTTP only).
  int fd() const { return fd_; }
  bool Send(const std::string& bytes) {
    if (bytes.empty()) return true;
    const int n = ssl_ != nullptr ? SSL_write(ssl_, bytes.data(), static_cast<int>(bytes.size()))
                                  : static_cast<int>(send(fd_, bytes.data(), bytes.size(),
                                                          MSG_NOSIGNAL));
    return n == static_cast<int>(bytes.size());
  }

 private:
  int fd_;
  SSL* ssl_;
};

class ScriptedHttpServer {
 public:
  using Script = std::function<void(ScriptedConnection&)>;
  // `ctx`: TLS server context (owned by the caller), or null for plain HTTP.
  explicit ScriptedHttpServer(Script script, SSL_CTX* ctx = nullptr)
      : script_(std::move(script)), ctx_(ctx) {
    // A script's TLS writes go through write(): a client gone must not
    // kill the test with SIGPIPE.
    signal(SIGPIPE, SIG_IGN);
    listener_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    BOOST_REQUIRE(bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
    BOOST_REQUIRE(listen(listener_, 16) == 0);
    socklen_t len = sizeof(addr);
    getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }
  ~ScriptedHttpServer() {
    stop_ = true;
    thread_.join();
    close(listener_);
  }
  int port() const { return port_; }
  std::string Url(const std::string& host = "127.0.0.1") const {
    return std::string(ctx_ != nullptr ? "https://" : "http://") + host + ":" +
           std::to_string(port_);
  }
  int connections() const { return connections_.load(); }

 private:
  // One connection at a time, on this thread: enough for one client.
  void Serve() {
    while (!stop_) {
      pollfd p{listener_, POLLIN, 0};
      if (poll(&p, 1, 20) <= 0) continue;
      const int fd = accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) continue;
      ++connections_;
      timeval tv{5, 0};  // a script never hangs the test
      setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
      SSL* ssl = nullptr;
      if (ctx_ != nullptr) {
        ssl = SSL_new(ctx_);
        SSL_set_fd(ssl, fd);
        if (SSL_accept(ssl) != 1) {
          ERR_clear_error();
          SSL_free(ssl);
          close(fd);
          continue;
        }
      }
      ScriptedConnection c(fd, ssl);
      script_(c);
      if (ssl != nullptr) {
        SSL_shutdown(ssl);
        SSL_free(ssl);
      }
      close(fd);
    }
  }

  Script script_;
  SSL_CTX* ctx_;
  int listener_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> connections_{0};
  std::thread thread_;
};

}  // namespace hcudp::testing

#endif  // HCUDP_TEST_KUBE_SCRIPTED_HTTP_SERVER_H_
