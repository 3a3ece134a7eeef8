// The kube client's HTTP layer (kube/http_request.h) against scripted
// servers: keep-alive and its races, hostile or broken answers, every wait
// bounded, and TLS verification (IP address and DNS names, SNI, client
// certificates with RSA keys, skipping verification when told).
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

#include "kube/http_request.h"
#include "kube/scripted_http_server.h"
#include "testing/testutil.h"

namespace hcudp {
namespace {

using Clock = std::chrono::steady_clock;
using testing::ScriptedConnection;
using testing::ScriptedHttpServer;

int64_t MillisSince(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
}

kube::HttpRequest Get(const std::string& url) {
  kube::HttpRequest r;
  r.url = url + "/api/v1/nodes";
  r.total_timeout_ms = 5000;
  return r;
}

const std::string kOk = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";

// Answers every request of a connection with `answer`.
ScriptedHttpServer::Script KeepAnswering(const std::string& answer) {
  return [answer](ScriptedConnection& c) {
    while (!c.ReadRequest().empty()) {
      if (!c.Send(answer)) return;
    }
  };
}

// Answers one request with `answer`, then closes.
ScriptedHttpServer::Script AnswerOnce(const std::string& answer) {
  return [answer](ScriptedConnection& c) {
    if (!c.ReadRequest().empty()) c.Send(answer);
  };
}

std::string Code(const Status& s) { return std::string(StatusCodeName(s.code())); }

BOOST_AUTO_TEST_SUITE(http_client)

BOOST_AUTO_TEST_CASE(sequential_requests_share_one_kept_alive_connection) {
  ScriptedHttpServer server(KeepAnswering(kOk));
  kube::HttpChannelPool pool;
  for (int i = 0; i < 3; ++i) {
    StatusOr<kube::HttpResponse> r = pool.Perform({}, Get(server.Url()));
    BOOST_REQUIRE_MESSAGE(r.ok(), r.status().ToString());
    BOOST_TEST(r->body == "ok");
  }
  BOOST_TEST(server.connections() == 1);
}

// A kept-alive connection that sat idle longer than the next request's idle
// limit: the limit counts from that request, not from the connection's last
// byte. (It counted from the last byte, and such a request failed at once.)
BOOST_AUTO_TEST_CASE(the_idle_limit_counts_from_the_request_not_the_connections_last_byte) {
  ScriptedHttpServer server(KeepAnswering(kOk));
  kube::HttpChannelPool pool;
  BOOST_REQUIRE(pool.Perform({}, Get(server.Url())).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(1300));
  kube::HttpRequest request = Get(server.Url());
  request.idle_timeout_s = 1;
  StatusOr<kube::HttpResponse> r = pool.Perform({}, request);
  BOOST_TEST(r.ok(), r.status().ToString());
  BOOST_TEST(server.connections() == 1);
}

// A server that closes a kept-alive connection just as it is reused (its
// idle timeout): a GET is sent once more on a new connection; a POST is
// not, since the server may have applied it.
BOOST_AUTO_TEST_CASE(a_reused_connection_closed_unanswered_resends_a_get_but_not_a_post) {
  std::atomic<int> seen{0};
  std::atomic<int> posts{0};
  ScriptedHttpServer server([&](ScriptedConnection& c) {
    for (int i = 0;; ++i) {
      const std::string request = c.ReadRequest();
      if (request.empty()) return;
      ++seen;
      if (request.rfind("POST", 0) == 0) ++posts;
      if (i == 1) return;  // the second request on a connection: closed unanswered
      if (!c.Send(kOk)) return;
    }
  });
  kube::HttpChannelPool pool;
  BOOST_REQUIRE(pool.Perform({}, Get(server.Url())).ok());
  StatusOr<kube::HttpResponse> again = pool.Perform({}, Get(server.Url()));
  BOOST_REQUIRE_MESSAGE(again.ok(), again.status().ToString());
  BOOST_TEST(server.connections() == 2);

  kube::HttpRequest post = Get(server.Url());
  post.method = "POST";
  post.body = "{}";
  bool maybe_sent = false;
  post.maybe_sent = &maybe_sent;
  StatusOr<kube::HttpResponse> posted = pool.Perform({}, post);
  BOOST_TEST(Code(posted.status()) == "UNAVAILABLE", posted.status().ToString());
  BOOST_TEST(maybe_sent);
  BOOST_TEST(posts.load() == 1);
}

// Broken or hostile answers end the request with a clear status; none
// crashes or grows memory without bound.
BOOST_AUTO_TEST_CASE(hostile_answers_are_clear_errors) {
  struct Case {
    std::string answer;
    std::string code;
    std::string says;
  };
  const std::vector<Case> cases = {
      {"HTTP/1.1 200 OK\r\nX: " + std::string(200000, 'h') + "\r\n\r\n", "UNAVAILABLE",
       "header section"},
      {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nnot-hex\r\n", "UNAVAILABLE",
       "chunk size"},
      {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nfffffffffffffffffffff\r\n",
       "UNAVAILABLE", "chunk size"},
      {"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly this", "UNAVAILABLE",
       "middle of the body"},
      {"HTTP/1.1 200 OK\r\nContent-Le", "UNAVAILABLE", "middle of the headers"},
      {"", "UNAVAILABLE", "before any response"},
      {"garbage\r\n\r\n", "UNAVAILABLE", "status line"},
      {"HTTP/1.1 200 OK\r\nContent-Length: 5000\r\n\r\n" + std::string(5000, 'b'),
       "RESOURCE_EXHAUSTED", "larger than 1024"},
  };
  for (const Case& c : cases) {
    ScriptedHttpServer server(AnswerOnce(c.answer));
    kube::HttpRequest request = Get(server.Url());
    request.max_body_bytes = 1024;
    bool maybe_sent = false;
    request.maybe_sent = &maybe_sent;
    StatusOr<kube::HttpResponse> r = kube::Perform({}, request);
    BOOST_REQUIRE_MESSAGE(!r.ok(), c.answer.substr(0, 40));
    BOOST_TEST(Code(r.status()) == c.code, r.status().ToString());
    BOOST_TEST(r.status().message().find(c.says) != std::string::npos, r.status().ToString());
    BOOST_TEST(r.status().message().find("GET http://127.0.0.1") == 0, r.status().ToString());
    BOOST_TEST(maybe_sent);
  }
}

// A server that trickles a byte every 50 ms never finishes: the request
// ends at its total timeout.
BOOST_AUTO_TEST_CASE(slow_bytes_end_at_the_total_timeout) {
  std::atomic<bool> done{false};
  ScriptedHttpServer server([&](ScriptedConnection& c) {
    c.ReadRequest();
    c.Send("HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n");
    while (!done && c.Send("x")) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  });
  kube::HttpRequest request = Get(server.Url());
  request.total_timeout_ms = 400;
  request.idle_timeout_s = 1;  // never reached: a byte comes every 50 ms
  const Clock::time_point start = Clock::now();
  StatusOr<kube::HttpResponse> r = kube::Perform({}, request);
  done = true;
  BOOST_TEST(Code(r.status()) == "DEADLINE_EXCEEDED", r.status().ToString());
  BOOST_TEST(MillisSince(start) >= 350);
  BOOST_TEST(MillisSince(start) < 2000);
}

BOOST_AUTO_TEST_CASE(a_silent_stream_ends_at_the_idle_timeout_and_a_cancel_at_once) {
  std::atomic<bool> done{false};
  ScriptedHttpServer server([&](ScriptedConnection& c) {
    c.ReadRequest();
    c.Send("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nline1\n\r\n");
    while (!done) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  });
  kube::HttpRequest watch = Get(server.Url());
  watch.total_timeout_ms = 0;
  watch.idle_timeout_s = 1;
  std::string streamed;
  watch.on_body_data = [&](std::string_view data) {
    streamed.append(data);
    return true;
  };
  Clock::time_point start = Clock::now();
  StatusOr<kube::HttpResponse> r = kube::Perform({}, watch);
  BOOST_TEST(Code(r.status()) == "DEADLINE_EXCEEDED", r.status().ToString());
  BOOST_TEST(MillisSince(start) >= 900);
  BOOST_TEST(MillisSince(start) < 3000);
  BOOST_TEST(streamed == "line1\n");

  std::atomic<bool> cancel{false};
  watch.idle_timeout_s = 0;
  watch.cancel = &cancel;
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    cancel = true;
  });
  start = Clock::now();
  r = kube::Perform({}, watch);
  canceller.join();
  done = true;
  BOOST_TEST(Code(r.status()) == "CANCELLED", r.status().ToString());
  BOOST_TEST(MillisSince(start) < 1000);
}

// A watch's chunked body is handed over as it comes; the consumer ends it.
// An error answer's body is collected instead, for its message.
BOOST_AUTO_TEST_CASE(a_2xx_body_is_streamed_and_an_error_body_collected) {
  ScriptedHttpServer server(KeepAnswering(
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
      "4\r\none\n\r\n4\r\ntwo\n\r\n6\r\nthree\n\r\n0\r\n\r\n"));
  kube::HttpRequest watch = Get(server.Url());
  std::string streamed;
  watch.on_body_data = [&](std::string_view data) {
    streamed.append(data);
    return streamed.find("two") == std::string::npos;  // stops after "two"
  };
  StatusOr<kube::HttpResponse> r = kube::Perform({}, watch);
  BOOST_REQUIRE_MESSAGE(r.ok(), r.status().ToString());
  BOOST_TEST(streamed == "one\ntwo\n");
  BOOST_TEST(r->body.empty());

  ScriptedHttpServer refusing(AnswerOnce(
      "HTTP/1.1 429 Too Many Requests\r\nRetry-After: 7\r\nContent-Length: 4\r\n\r\nslow"));
  watch.url = refusing.Url() + "/api/v1/pods?watch=true";
  streamed.clear();
  r = kube::Perform({}, watch);
  BOOST_REQUIRE_MESSAGE(r.ok(), r.status().ToString());
  BOOST_TEST(r->status == 429);
  BOOST_TEST(r->body == "slow");
  BOOST_TEST((r->retry_after_s == std::optional<int>(7)));
  BOOST_TEST(streamed.empty());
}

BOOST_AUTO_TEST_CASE(nothing_listening_is_unavailable_and_not_sent) {
  int port = 0;
  { port = ScriptedHttpServer(KeepAnswering(kOk)).port(); }  // closed again
  kube::HttpRequest request = Get("http://127.0.0.1:" + std::to_string(port));
  bool maybe_sent = true;
  request.maybe_sent = &maybe_sent;
  StatusOr<kube::HttpResponse> r = kube::Perform({}, request);
  BOOST_TEST(Code(r.status()) == "UNAVAILABLE", r.status().ToString());
  BOOST_TEST(!maybe_sent);
}

BOOST_AUTO_TEST_CASE(unusable_requests_are_refused_before_sending) {
  ScriptedHttpServer server(KeepAnswering(kOk));
  kube::HttpRequest injected = Get(server.Url());
  injected.headers = {"Authorization: Bearer x\r\nX-Evil: 1"};
  BOOST_TEST(Code(kube::Perform({}, injected).status()) == "INVALID_ARGUMENT");
  for (const char* url : {"ftp://127.0.0.1/", "http://user@127.0.0.1/", "http://127.0.0.1:99999/",
                          "http://[::1/", "http://127.0.0.1/a b"}) {
    kube::HttpRequest bad = Get(server.Url());
    bad.url = url;
    BOOST_TEST(Code(kube::Perform({}, bad).status()) == "INVALID_ARGUMENT", url);
  }
  BOOST_TEST(server.connections() == 0);
}

// ---- TLS

// A throwaway PKI (openssl CLI, as the fake API server's): an RSA CA, server
// certificates naming only a DNS name or only 127.0.0.1, an RSA client.
class Pki {
 public:
  Pki() {
    Run("req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 2 -subj /CN=ca");
    Leaf("dns", "subjectAltName=DNS:localhost\nextendedKeyUsage=serverAuth\n");
    Leaf("ip", "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n");
    Leaf("client", "extendedKeyUsage=clientAuth\n");
    Leaf("proxied", "subjectAltName=DNS:api.example.test\nextendedKeyUsage=serverAuth\n");
  }
  std::string Path(const std::string& name) const { return dir_.Join(name); }
  std::string Pem(const std::string& name) const { return testing::ReadFile(Path(name)); }

  // A server context presenting `leaf`'s certificate; `want_client`: a
  // client certificate from the CA is required.
  SSL_CTX* ServerContext(const std::string& leaf, bool want_client = false) {
    SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
    BOOST_REQUIRE(SSL_CTX_use_certificate_file(ctx, Path(leaf + ".crt").c_str(),
                                               SSL_FILETYPE_PEM) == 1);
    BOOST_REQUIRE(SSL_CTX_use_PrivateKey_file(ctx, Path(leaf + ".key").c_str(),
                                              SSL_FILETYPE_PEM) == 1);
    if (want_client) {
      BOOST_REQUIRE(SSL_CTX_load_verify_locations(ctx, Path("ca.crt").c_str(), nullptr) == 1);
      SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
    }
    contexts_.emplace_back(ctx, SSL_CTX_free);
    return ctx;
  }

 private:
  void Run(const std::string& args) {
    const std::string command =
        "cd '" + dir_.path() + "' && openssl " + args + " >/dev/null 2>&1";
    BOOST_REQUIRE_MESSAGE(std::system(command.c_str()) == 0, command);
  }
  void Leaf(const std::string& name, const std::string& ext) {
    testing::WriteFile(Path(name + ".ext"), ext);
    Run("req -newkey rsa:2048 -nodes -keyout " + name + ".key -out " + name + ".csr -subj /CN=" +
        name);
    Run("x509 -req -in " + name + ".csr -CA ca.crt -CAkey ca.key -CAcreateserial -out " + name +
        ".crt -days 2 -extfile " + name + ".ext");
  }

  testing::TempDir dir_;
  std::vector<std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)>> contexts_;
};

Pki& SharedPki() {
  static Pki* pki = new Pki();
  return *pki;
}

// The server name the client sent (SNI), as the body.
ScriptedHttpServer::Script AnswerWithSni() {
  return [](ScriptedConnection& c) {
    if (c.ReadRequest().empty()) return;
    const std::string sni = c.server_name();
    c.Send("HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(sni.size()) + "\r\n\r\n" + sni);
  };
}

BOOST_AUTO_TEST_CASE(an_ip_address_is_checked_against_the_certificates_ip_addresses) {
  Pki& pki = SharedPki();
  kube::TlsMaterial tls;
  tls.ca_pem = pki.Pem("ca.crt");
  ScriptedHttpServer ip(AnswerWithSni(), pki.ServerContext("ip"));
  StatusOr<kube::HttpResponse> r = kube::Perform(tls, Get(ip.Url()));
  BOOST_REQUIRE_MESSAGE(r.ok(), r.status().ToString());
  BOOST_TEST(r->body == "");  // no SNI for an address (RFC 6066)

  // The same address, a certificate naming only "localhost": refused.
  ScriptedHttpServer dns(AnswerWithSni(), pki.ServerContext("dns"));
  r = kube::Perform(tls, Get(dns.Url()));
  BOOST_TEST(Code(r.status()) == "UNAUTHENTICATED", r.status().ToString());
  BOOST_TEST(r.status().message().find("not trusted") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_name_is_checked_against_the_certificates_names_and_sent_as_sni) {
  Pki& pki = SharedPki();
  kube::TlsMaterial tls;
  tls.ca_pem = pki.Pem("ca.crt");
  ScriptedHttpServer dns(AnswerWithSni(), pki.ServerContext("dns"));
  StatusOr<kube::HttpResponse> r = kube::Perform(tls, Get(dns.Url("localhost")));
  BOOST_REQUIRE_MESSAGE(r.ok(), r.status().ToString());
  BOOST_TEST(r->body == "localhost");

  ScriptedHttpServer ip(AnswerWithSni(), pki.ServerContext("ip"));
  r = kube::Perform(tls, Get(ip.Url("localhost")));
  BOOST_TEST(Code(r.status()) == "UNAUTHENTICATED", r.status().ToString());
}

BOOST_AUTO_TEST_CASE(insecure_skip_verify_accepts_any_certificate) {
  Pki& pki = SharedPki();
  ScriptedHttpServer dns(AnswerWithSni(), pki.ServerContext("dns"));
  kube::TlsMaterial tls;
  tls.insecure_skip_verify = true;
  StatusOr<kube::HttpResponse> r = kube::Perform(tls, Get(dns.Url()));
  BOOST_TEST(r.ok(), r.status().ToString());
}

BOOST_AUTO_TEST_CASE(a_client_certificate_with_an_rsa_key_is_presented) {
  Pki& pki = SharedPki();
  ScriptedHttpServer server(AnswerOnce(kOk), pki.ServerContext("ip", /*want_client=*/true));
  kube::TlsMaterial tls;
  tls.ca_pem = pki.Pem("ca.crt");
  tls.client_cert_pem = pki.Pem("client.crt");
  tls.client_key_pem = pki.Pem("client.key");
  StatusOr<kube::HttpResponse> r = kube::Perform(tls, Get(server.Url()));
  BOOST_REQUIRE_MESSAGE(r.ok(), r.status().ToString());
  BOOST_TEST(r->body == "ok");

  // A key that does not belong to the certificate, or no PEM at all.
  tls.client_key_pem = pki.Pem("dns.key");
  BOOST_TEST(Code(kube::Perform(tls, Get(server.Url())).status()) == "INVALID_ARGUMENT");
  tls.client_key_pem = "not a key";
  StatusOr<kube::HttpResponse> bad = kube::Perform(tls, Get(server.Url()));
  BOOST_TEST(Code(bad.status()) == "INVALID_ARGUMENT");
  BOOST_TEST(bad.status().message().find("client key") != std::string::npos);
  BOOST_TEST(bad.status().message().find("not a key") == std::string::npos);  // never quoted
  // OpenSSL's reason in words (its strings load at the first error), not
  // "error:1E08010C:lib(30)::reason(268)".
  BOOST_TEST(bad.status().message().find("lib(") == std::string::npos, bad.status().message());
  BOOST_TEST(bad.status().message().find("routines::") != std::string::npos,
             bad.status().message());
}

BOOST_AUTO_TEST_CASE(a_server_below_tls_1_2_is_refused) {
  Pki& pki = SharedPki();
  SSL_CTX* old = pki.ServerContext("ip");
  SSL_CTX_set_min_proto_version(old, TLS1_VERSION);
  SSL_CTX_set_max_proto_version(old, TLS1_1_VERSION);
  SSL_CTX_set_security_level(old, 0);
  ScriptedHttpServer server(AnswerOnce(kOk), old);
  kube::TlsMaterial tls;
  tls.ca_pem = pki.Pem("ca.crt");
  bool maybe_sent = true;
  kube::HttpRequest request = Get(server.Url());
  request.maybe_sent = &maybe_sent;
  StatusOr<kube::HttpResponse> r = kube::Perform(tls, request);
  BOOST_TEST(Code(r.status()) == "UNAVAILABLE", r.status().ToString());
  BOOST_TEST(!maybe_sent);
}

// Through an https proxy's CONNECT tunnel, TLS runs end to end: the
// certificate is checked against the requested name, not the proxy's.
BOOST_AUTO_TEST_CASE(https_through_a_proxy_tunnels_and_verifies_the_server_itself) {
  Pki& pki = SharedPki();
  ScriptedHttpServer server(AnswerWithSni(), pki.ServerContext("proxied"));
  std::string asked;
  ScriptedHttpServer proxy([&](ScriptedConnection& c) {
    asked = c.ReadRequest();
    const int upstream = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<uint16_t>(server.port()));
    if (connect(upstream, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) return;
    c.Send("HTTP/1.1 200 Connection established\r\n\r\n");
    for (;;) {  // relays both ways until one side closes
      pollfd p[2] = {{c.fd(), POLLIN, 0}, {upstream, POLLIN, 0}};
      if (poll(p, 2, 5000) <= 0) break;
      char buf[16384];
      const int from = (p[0].revents & (POLLIN | POLLHUP)) != 0 ? 0 : 1;
      const ssize_t n = recv(p[from].fd, buf, sizeof(buf), 0);
      if (n <= 0 || send(p[1 - from].fd, buf, static_cast<size_t>(n), MSG_NOSIGNAL) != n) break;
    }
    close(upstream);
  });
  setenv("HTTPS_PROXY", ("http://127.0.0.1:" + std::to_string(proxy.port())).c_str(), 1);
  kube::TlsMaterial tls;
  tls.ca_pem = pki.Pem("ca.crt");
  StatusOr<kube::HttpResponse> r = kube::Perform(tls, Get("https://api.example.test:6443"));
  unsetenv("HTTPS_PROXY");
  BOOST_REQUIRE_MESSAGE(r.ok(), r.status().ToString());
  BOOST_TEST(r->body == "api.example.test");  // the SNI the server saw
  BOOST_TEST(asked.rfind("CONNECT api.example.test:6443 HTTP/1.1\r\n", 0) == 0, asked);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp
