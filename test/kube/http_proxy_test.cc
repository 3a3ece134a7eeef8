// Which proxy a request takes (kube/http_proxy.h), read from the environment
// as client-go and libcurl read it, and requests through one: a plain one in
// absolute form with the proxy's credentials, an https one through a
// CONNECT tunnel with TLS end to end.
#include "kube/http_proxy.h"

#include <poll.h>
#include <sys/socket.h>

#include <boost/test/unit_test.hpp>
#include <cstdlib>
#include <map>
#include <string>

#include "kube/http_request.h"
#include "kube/scripted_http_server.h"

namespace hcudp::kube {
namespace {

using testing::ScriptedConnection;
using testing::ScriptedHttpServer;

std::optional<HttpProxy> ProxyIn(const std::map<std::string, std::string>& env,
                                 const std::string& url) {
  StatusOr<HttpEndpoint> target = ParseHttpUrl(url);
  BOOST_REQUIRE(target.ok());
  StatusOr<std::optional<HttpProxy>> proxy = ProxyFor(*target, [&](const char* name) {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
  BOOST_REQUIRE_MESSAGE(proxy.ok(), proxy.status().ToString());
  return *proxy;
}

// Sets an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() { unsetenv(name_); }

 private:
  const char* name_;
};

BOOST_AUTO_TEST_SUITE(http_proxy)

BOOST_AUTO_TEST_CASE(the_variable_follows_the_scheme_in_either_case) {
  const std::map<std::string, std::string> env = {{"https_proxy", "proxy.corp:3128"},
                                                  {"HTTP_PROXY", "http://plain.corp:8080"}};
  std::optional<HttpProxy> p = ProxyIn(env, "https://10.96.0.1:443/api");
  BOOST_REQUIRE(p.has_value());
  BOOST_TEST(p->endpoint.host == "proxy.corp");
  BOOST_TEST(p->endpoint.port == 3128);
  BOOST_TEST(p->authorization.empty());
  p = ProxyIn(env, "http://api.example.test/api");
  BOOST_REQUIRE(p.has_value());
  BOOST_TEST(p->endpoint.host == "plain.corp");
  BOOST_TEST(!ProxyIn({}, "https://10.96.0.1/").has_value());
}

BOOST_AUTO_TEST_CASE(loopback_is_never_proxied) {
  const std::map<std::string, std::string> env = {{"HTTPS_PROXY", "http://proxy.corp:3128"}};
  for (const char* url : {"https://127.0.0.1:6443/", "https://127.1.2.3/", "https://[::1]:6443/",
                          "https://localhost:6443/", "https://LOCALHOST/"}) {
    BOOST_TEST(!ProxyIn(env, url).has_value(), url);
  }
}

BOOST_AUTO_TEST_CASE(no_proxy_exempts_names_addresses_blocks_and_ports) {
  struct Case {
    std::string no_proxy;
    std::string host;
    int port;
    bool exempt;
  };
  const std::vector<Case> cases = {
      {"*", "anything.test", 443, true},
      {"example.test", "example.test", 443, true},
      {"example.test", "api.example.test", 443, true},
      {".example.test", "api.example.test", 443, true},
      {"*.example.test", "api.example.test", 443, true},
      {"example.test", "badexample.test", 443, false},
      {"Example.TEST", "api.example.test", 443, true},
      {"10.96.0.1", "10.96.0.1", 443, true},
      {"10.96.0.1", "10.96.0.10", 443, false},
      {"10.96.0.0/12", "10.100.3.4", 443, true},
      {"10.96.0.0/12", "10.112.0.1", 443, false},
      {"fd00::/8", "fd12::1", 443, true},
      {"[fd00::1]:6443", "fd00::1", 6443, true},
      {"fd00::1", "fd00:0::1", 443, true},
      {"example.test:6443", "example.test", 443, false},
      {"example.test:6443", "example.test", 6443, true},
      {"a.test, b.test,,c.test", "b.test", 443, true},
      {"a.test b.test", "b.test", 443, true},
      {"", "b.test", 443, false},
      {"10.0.0.0/99", "10.0.0.1", 443, false},
  };
  for (const Case& c : cases) {
    BOOST_TEST(NoProxyMatches(c.no_proxy, c.host, c.port) == c.exempt,
               "NO_PROXY=" << c.no_proxy << " host " << c.host << ":" << c.port);
  }
  const std::map<std::string, std::string> env = {{"HTTPS_PROXY", "http://proxy.corp:3128"},
                                                  {"no_proxy", "10.96.0.0/12,.svc"}};
  BOOST_TEST(!ProxyIn(env, "https://10.96.0.1/").has_value());
  BOOST_TEST(!ProxyIn(env, "https://kubernetes.default.svc/").has_value());
  BOOST_TEST(ProxyIn(env, "https://api.example.test/").has_value());
}

BOOST_AUTO_TEST_CASE(credentials_in_the_proxy_url_become_basic_authorization) {
  std::optional<HttpProxy> p =
      ProxyIn({{"HTTPS_PROXY", "http://us%40er:p%3Ass@proxy.corp:3128/"}}, "https://10.96.0.1/");
  BOOST_REQUIRE(p.has_value());
  BOOST_TEST(p->endpoint.host == "proxy.corp");
  BOOST_TEST(p->authorization == "Basic dXNAZXI6cDpzcw==");  // "us@er:p:ss"
}

BOOST_AUTO_TEST_CASE(an_unusable_proxy_is_an_error_not_a_direct_connection) {
  StatusOr<HttpEndpoint> target = ParseHttpUrl("https://10.96.0.1/");
  BOOST_REQUIRE(target.ok());
  for (const char* value : {"socks5://user:secret@proxy.corp:1080", "https://proxy.corp",
                            "http://user:secret@", "http://proxy.corp:99999"}) {
    StatusOr<std::optional<HttpProxy>> p = ProxyFor(*target, [&](const char* name) {
      return std::string(name) == "HTTPS_PROXY" ? value : nullptr;
    });
    BOOST_TEST((p.status().code() == StatusCode::kInvalidArgument), value);
    BOOST_TEST(p.status().message().find("HTTPS_PROXY") != std::string::npos);
    BOOST_TEST(p.status().message().find("secret") == std::string::npos);
  }
}

// A plain request through a proxy names the whole URL and carries the
// proxy's credentials.
BOOST_AUTO_TEST_CASE(a_plain_request_goes_to_the_proxy_in_absolute_form) {
  std::string seen;
  ScriptedHttpServer proxy([&](ScriptedConnection& c) {
    seen = c.ReadRequest();
    c.Send("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
  });
  ScopedEnv env("HTTP_PROXY", "http://u:p@127.0.0.1:" + std::to_string(proxy.port()));
  HttpRequest request;
  request.url = "http://api.example.test:8080/api/v1/nodes?limit=1";
  request.total_timeout_ms = 5000;
  StatusOr<HttpResponse> r = Perform({}, request);
  BOOST_REQUIRE_MESSAGE(r.ok(), r.status().ToString());
  BOOST_TEST(r->body == "ok");
  BOOST_TEST(seen.rfind("GET http://api.example.test:8080/api/v1/nodes?limit=1 HTTP/1.1\r\n", 0) == 0,
             seen);
  BOOST_TEST(seen.find("\r\nHost: api.example.test:8080\r\n") != std::string::npos);
  BOOST_TEST(seen.find("\r\nProxy-Authorization: Basic dTpw\r\n") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_proxy_that_refuses_the_tunnel_is_unavailable_and_nothing_was_sent) {
  std::string seen;
  ScriptedHttpServer proxy([&](ScriptedConnection& c) {
    seen = c.ReadRequest();
    c.Send("HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 0\r\n\r\n");
  });
  ScopedEnv env("HTTPS_PROXY", "127.0.0.1:" + std::to_string(proxy.port()));
  HttpRequest request;
  request.url = "https://api.example.test:6443/api";
  request.total_timeout_ms = 5000;
  bool maybe_sent = true;
  request.maybe_sent = &maybe_sent;
  StatusOr<HttpResponse> r = Perform({}, request);
  BOOST_TEST((r.status().code() == StatusCode::kUnavailable), r.status().ToString());
  BOOST_TEST(r.status().message().find("407") != std::string::npos, r.status().ToString());
  BOOST_TEST(r.status().message().find("CONNECT api.example.test:6443") != std::string::npos);
  BOOST_TEST(!maybe_sent);
  BOOST_TEST(seen.rfind("CONNECT api.example.test:6443 HTTP/1.1\r\n", 0) == 0, seen);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp::kube
