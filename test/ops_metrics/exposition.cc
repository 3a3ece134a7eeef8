#include "ops_metrics/exposition.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <vector>

namespace hcudp::testing {
namespace {

bool NameChar(char c, bool first) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == ':' ||
         (!first && std::isdigit(static_cast<unsigned char>(c)));
}

bool ValidName(const std::string& s) {
  if (s.empty()) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    if (!NameChar(s[i], i == 0)) return false;
  }
  return true;
}

StatusOr<double> ParseValue(const std::string& s) {
  if (s == "+Inf" || s == "Inf") return HUGE_VAL;
  if (s == "-Inf") return -HUGE_VAL;
  if (s == "NaN" || s == "Nan" || s == "nan") return std::nan("");
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (s.empty() || end == nullptr || *end != '\0') {
    return InvalidArgumentError("bad value \"" + s + "\"");
  }
  return v;
}

// Parses `{a="x",b="y"}` starting at s[*pos] == '{'.
Status ParseLabels(const std::string& s, size_t* pos, std::map<std::string, std::string>* out) {
  size_t i = *pos + 1;
  for (;;) {
    if (i >= s.size()) return InvalidArgumentError("unterminated label set");
    if (s[i] == '}') break;
    size_t eq = s.find('=', i);
    if (eq == std::string::npos) return InvalidArgumentError("label without '='");
    std::string name = s.substr(i, eq - i);
    if (!ValidName(name)) return InvalidArgumentError("bad label name \"" + name + "\"");
    if (eq + 1 >= s.size() || s[eq + 1] != '"') return InvalidArgumentError("unquoted label");
    std::string value;
    size_t j = eq + 2;
    for (;; ++j) {
      if (j >= s.size()) return InvalidArgumentError("unterminated label value");
      if (s[j] == '"') break;
      if (s[j] == '\\') {
        if (++j >= s.size()) return InvalidArgumentError("dangling escape");
        if (s[j] == 'n') {
          value += '\n';
        } else if (s[j] == '\\' || s[j] == '"') {
          value += s[j];
        } else {
          return InvalidArgumentError("bad escape");
        }
        continue;
      }
      value += s[j];
    }
    if (!out->emplace(name, value).second) return InvalidArgumentError("label repeated: " + name);
    i = j + 1;
    if (i < s.size() && s[i] == ',') ++i;
  }
  *pos = i + 1;
  return OkStatus();
}

// The family a sample name belongs to, given the announced types.
std::string FamilyOf(const std::string& name, const std::map<std::string, std::string>& types) {
  if (types.count(name)) return name;
  for (const char* suffix : {"_bucket", "_sum", "_count"}) {
    std::string sfx = suffix;
    if (name.size() > sfx.size() && name.compare(name.size() - sfx.size(), sfx.size(), sfx) == 0) {
      std::string base = name.substr(0, name.size() - sfx.size());
      auto it = types.find(base);
      if (it != types.end() && (it->second == "histogram" || it->second == "summary")) return base;
    }
  }
  return "";
}

}  // namespace

std::string SeriesKey(const std::string& name, const std::map<std::string, std::string>& labels) {
  std::string key = name + "{";
  bool first = true;
  for (const auto& [k, v] : labels) {
    if (!first) key += ",";
    first = false;
    key += k + "=\"" + v + "\"";
  }
  return key + "}";
}

std::optional<double> Exposition::Get(const std::string& name,
                                      const std::map<std::string, std::string>& labels) const {
  auto it = samples.find(SeriesKey(name, labels));
  if (it == samples.end()) return std::nullopt;
  return it->second;
}

double Exposition::Sum(const std::string& name,
                       const std::map<std::string, std::string>& labels) const {
  double sum = 0;
  const std::string prefix = name + "{";
  for (auto it = samples.lower_bound(prefix); it != samples.end(); ++it) {
    if (it->first.compare(0, prefix.size(), prefix) != 0) break;
    bool match = true;
    for (const auto& [k, v] : labels) {
      if (it->first.find(k + "=\"" + v + "\"") == std::string::npos) match = false;
    }
    if (match) sum += it->second;
  }
  return sum;
}

size_t Exposition::Count(const std::string& name) const {
  size_t n = 0;
  const std::string prefix = name + "{";
  for (auto it = samples.lower_bound(prefix); it != samples.end(); ++it) {
    if (it->first.compare(0, prefix.size(), prefix) != 0) break;
    ++n;
  }
  return n;
}

StatusOr<Exposition> ParseExposition(const std::string& text) {
  Exposition out;
  std::istringstream in(text);
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    auto fail = [&](const std::string& why) {
      return InvalidArgumentError("line " + std::to_string(number) + " (" + line + "): " + why);
    };
    if (line.empty()) continue;
    if (line[0] == '#') {
      std::istringstream words(line);
      std::string hash, kind, name, rest;
      words >> hash >> kind >> name;
      if (kind == "TYPE") {
        words >> rest;
        if (!ValidName(name)) return fail("bad metric name");
        if (rest != "counter" && rest != "gauge" && rest != "histogram" && rest != "summary" &&
            rest != "untyped") {
          return fail("bad type");
        }
        if (!out.types.emplace(name, rest).second) return fail("family typed twice");
      } else if (kind == "HELP" && !ValidName(name)) {
        return fail("bad metric name");
      }
      continue;
    }
    size_t i = 0;
    while (i < line.size() && NameChar(line[i], i == 0)) ++i;
    std::string name = line.substr(0, i);
    if (!ValidName(name)) return fail("bad metric name");
    std::map<std::string, std::string> labels;
    if (i < line.size() && line[i] == '{') {
      Status st = ParseLabels(line, &i, &labels);
      if (!st.ok()) return fail(st.message());
    }
    if (i >= line.size() || line[i] != ' ') return fail("no value");
    std::string value = line.substr(i + 1);
    size_t space = value.find(' ');  // an optional timestamp follows
    if (space != std::string::npos) value = value.substr(0, space);
    StatusOr<double> v = ParseValue(value);
    if (!v.ok()) return fail(v.status().message());
    if (FamilyOf(name, out.types).empty()) return fail("sample of a family without # TYPE");
    if (!out.samples.emplace(SeriesKey(name, labels), *v).second) return fail("duplicate series");
  }
  return out;
}

StatusOr<HttpResult> HttpGet(int port, const std::string& path, std::chrono::milliseconds within) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return InternalError("socket");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    return UnavailableError("connect to 127.0.0.1:" + std::to_string(port) + " failed");
  }
  const std::string request = "GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
  if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) !=
      static_cast<ssize_t>(request.size())) {
    ::close(fd);
    return UnavailableError("send failed");
  }
  std::string response;
  const auto deadline = std::chrono::steady_clock::now() + within;
  char buf[65536];
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    deadline - std::chrono::steady_clock::now())
                    .count();
    if (left <= 0) {
      ::close(fd);
      return DeadlineExceededError("no complete response within " + std::to_string(within.count()) +
                                   " ms");
    }
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left)) <= 0) continue;
    ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n < 0) {
      ::close(fd);
      return UnavailableError("recv failed");
    }
    if (n == 0) break;
    response.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  size_t header_end = response.find("\r\n\r\n");
  if (response.rfind("HTTP/1.", 0) != 0 || header_end == std::string::npos) {
    return InvalidArgumentError("not an HTTP response: " + response.substr(0, 80));
  }
  HttpResult r;
  r.status = std::atoi(response.c_str() + response.find(' ') + 1);
  r.body = response.substr(header_end + 4);
  // Header names are case-insensitive; civetweb and we write this spelling.
  const std::string headers = response.substr(0, header_end + 2);
  const std::string name = "\r\nContent-Type: ";
  if (size_t at = headers.find(name); at != std::string::npos) {
    const size_t from = at + name.size();
    r.content_type = headers.substr(from, headers.find("\r\n", from) - from);
  }
  return r;
}

}  // namespace hcudp::testing
