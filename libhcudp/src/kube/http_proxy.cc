#include "kube/http_proxy.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>
#include <cstring>

#include "kube/base64.h"

namespace hcudp::kube {
namespace {

std::string LowerAscii(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view TrimSpace(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// The first of `names` that is set and not empty.
const char* FirstSet(const GetEnv& getenv, std::initializer_list<const char*> names,
                     const char** which) {
  for (const char* name : names) {
    const char* value = getenv(name);
    if (value != nullptr && *value != '\0') {
      *which = name;
      return value;
    }
  }
  return nullptr;
}

// An address of either family, for comparisons and CIDR blocks.
struct Address {
  int family = 0;
  unsigned char bytes[16] = {};
};

std::optional<Address> ParseAddress(const std::string& text) {
  Address a;
  if (inet_pton(AF_INET, text.c_str(), a.bytes) == 1) {
    a.family = AF_INET;
    return a;
  }
  if (inet_pton(AF_INET6, text.c_str(), a.bytes) == 1) {
    a.family = AF_INET6;
    return a;
  }
  return std::nullopt;
}

bool InBlock(const Address& host, const Address& block, int bits) {
  if (host.family != block.family) return false;
  for (int i = 0; i < bits / 8; ++i) {
    if (host.bytes[i] != block.bytes[i]) return false;
  }
  if (bits % 8 == 0) return true;
  const unsigned char mask = static_cast<unsigned char>(0xff << (8 - bits % 8));
  return (host.bytes[bits / 8] & mask) == (block.bytes[bits / 8] & mask);
}

bool IsLoopback(const std::string& host) {
  if (LowerAscii(host) == "localhost") return true;
  const std::optional<Address> a = ParseAddress(host);
  if (!a) return false;
  if (a->family == AF_INET) return a->bytes[0] == 127;
  static const unsigned char kV6Loopback[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  return std::memcmp(a->bytes, kV6Loopback, 16) == 0;
}

// One NO_PROXY entry against the host (lower case) and port.
bool EntryMatches(std::string_view entry, const std::string& host, int port) {
  std::string pattern = LowerAscii(TrimSpace(entry));
  if (pattern.empty()) return false;
  if (pattern == "*") return true;
  // A port after the host ("example.com:8443", "[::1]:6443"): only that port.
  std::optional<int> only_port;
  const size_t bracket = pattern.find(']');
  const size_t colon = pattern.rfind(':');
  const bool v6_bare = bracket == std::string::npos && pattern.find(':') != colon;
  if (colon != std::string::npos && !v6_bare &&
      (bracket == std::string::npos || colon > bracket)) {
    const std::string digits = pattern.substr(colon + 1);
    if (!digits.empty() && std::all_of(digits.begin(), digits.end(), [](unsigned char c) {
          return std::isdigit(c);
        }) && digits.size() <= 5) {
      only_port = std::stoi(digits);
      pattern.resize(colon);
    }
  }
  if (only_port && *only_port != port) return false;
  if (pattern.size() >= 2 && pattern.front() == '[' && pattern.back() == ']') {
    pattern = pattern.substr(1, pattern.size() - 2);
  }
  // A CIDR block.
  if (const size_t slash = pattern.find('/'); slash != std::string::npos) {
    const std::optional<Address> block = ParseAddress(pattern.substr(0, slash));
    const std::optional<Address> address = ParseAddress(host);
    const std::string bits_text = pattern.substr(slash + 1);
    if (!block || !address || bits_text.empty() || bits_text.size() > 3 ||
        !std::all_of(bits_text.begin(), bits_text.end(),
                     [](unsigned char c) { return std::isdigit(c); })) {
      return false;
    }
    const int bits = std::stoi(bits_text);
    if (bits > (block->family == AF_INET ? 32 : 128)) return false;
    return InBlock(*address, *block, bits);
  }
  // An address: the same address, however written.
  const std::optional<Address> entry_address = ParseAddress(pattern);
  if (entry_address) {
    const std::optional<Address> address = ParseAddress(host);
    return address && address->family == entry_address->family &&
           std::memcmp(address->bytes, entry_address->bytes, 16) == 0;
  }
  // A name: itself and its subdomains, with or without a leading dot
  // (".example.com", "*.example.com" and "example.com" alike).
  if (pattern.rfind("*.", 0) == 0) pattern.erase(0, 1);
  if (pattern.front() == '.') pattern.erase(0, 1);
  if (pattern.empty()) return false;
  if (host == pattern) return true;
  return host.size() > pattern.size() &&
         host.compare(host.size() - pattern.size(), pattern.size(), pattern) == 0 &&
         host[host.size() - pattern.size() - 1] == '.';
}

std::string PercentDecode(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && std::isxdigit(static_cast<unsigned char>(s[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
      out.push_back(static_cast<char>(std::stoi(std::string(s.substr(i + 1, 2)), nullptr, 16)));
      i += 2;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

}  // namespace

bool NoProxyMatches(std::string_view no_proxy, const std::string& host, int port) {
  const std::string lower = LowerAscii(host);
  while (!no_proxy.empty()) {
    const size_t comma = no_proxy.find_first_of(", ");
    if (EntryMatches(no_proxy.substr(0, comma), lower, port)) return true;
    if (comma == std::string_view::npos) break;
    no_proxy.remove_prefix(comma + 1);
  }
  return false;
}

StatusOr<std::optional<HttpProxy>> ProxyFor(const HttpEndpoint& target, const GetEnv& getenv) {
  const char* variable = nullptr;
  const char* value = target.https ? FirstSet(getenv, {"HTTPS_PROXY", "https_proxy"}, &variable)
                                   : FirstSet(getenv, {"HTTP_PROXY", "http_proxy"}, &variable);
  if (value == nullptr || IsLoopback(target.host)) return std::optional<HttpProxy>();
  const char* no_variable = nullptr;
  if (const char* no_proxy = FirstSet(getenv, {"NO_PROXY", "no_proxy"}, &no_variable)) {
    if (NoProxyMatches(no_proxy, target.host, target.port)) return std::optional<HttpProxy>();
  }
  std::string url = std::string(TrimSpace(value));
  // Go and libcurl take "host:port" as http://host:port.
  if (url.find("://") == std::string::npos) url = "http://" + url;
  if (url.rfind("http://", 0) != 0) {
    // The URL may hold credentials: only the variable is named.
    return InvalidArgumentError(std::string(variable) + ": only an http:// proxy is supported");
  }
  HttpProxy proxy;
  const size_t authority_end = url.find_first_of("/?", 7);
  const size_t at = url.rfind('@', authority_end);
  if (at != std::string::npos && at >= 7) {
    proxy.authorization = "Basic " + Base64Encode(PercentDecode(url.substr(7, at - 7)));
    url.erase(7, at - 7 + 1);
  }
  StatusOr<HttpEndpoint> endpoint = ParseHttpUrl(url);
  if (!endpoint.ok()) {
    return InvalidArgumentError(std::string(variable) + ": not a usable proxy URL");
  }
  proxy.endpoint = std::move(*endpoint);
  return std::optional<HttpProxy>(std::move(proxy));
}

}  // namespace hcudp::kube
