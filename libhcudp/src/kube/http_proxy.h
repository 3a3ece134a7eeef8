// The HTTP proxy a request goes through, from the environment, as client-go
// (Go's ProxyFromEnvironment) and libcurl, which this client replaced, read
// it: HTTPS_PROXY for https URLs, HTTP_PROXY for http ones (either case),
// NO_PROXY for the exceptions. An https request reaches its server through
// a CONNECT tunnel, so TLS still runs end to end.
#ifndef HCUDP_SRC_KUBE_HTTP_PROXY_H_
#define HCUDP_SRC_KUBE_HTTP_PROXY_H_

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "hcudp/status.h"
#include "kube/http_connection.h"

namespace hcudp::kube {

struct HttpProxy {
  HttpEndpoint endpoint;      // an http:// proxy
  std::string authorization;  // "Basic ..." from the proxy URL's user info; empty: none
};

// Reads an environment variable; nullptr when unset.
using GetEnv = std::function<const char*(const char*)>;

// The proxy for `target`, or nullopt: none set, the host is in NO_PROXY
// ("*"; a name, matching itself and its subdomains, with or without a
// leading dot; an IP address; a CIDR block; each optionally ":port"), or
// the host is a loopback address or "localhost" (never proxied, as in Go).
// A proxy URL that cannot be used (not http://, no host) is
// InvalidArgument naming the variable, never a silent direct connection.
StatusOr<std::optional<HttpProxy>> ProxyFor(const HttpEndpoint& target, const GetEnv& getenv);

// Whether NO_PROXY's value `no_proxy` exempts `host`:`port`.
bool NoProxyMatches(std::string_view no_proxy, const std::string& host, int port);

}  // namespace hcudp::kube

#endif  // HCUDP_SRC_KUBE_HTTP_PROXY_H_
