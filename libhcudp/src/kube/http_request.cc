#include "kube/http_request.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <utility>

#include "kube/http_connection.h"
#include "kube/http_proxy.h"
#include "kube/http_response_parser.h"

namespace hcudp::kube {
namespace {

using SteadyClock = std::chrono::steady_clock;

// What one attempt on one connection did, for the caller's retry decisions.
struct Attempt {
  bool wrote_any = false;      // some of the request may have reached the server
  bool got_any_byte = false;   // some of an answer came back
  bool reusable = false;       // the connection may carry the next request
};

// The request as it goes on the wire. The caller's headers are checked for
// line breaks: one would let a value (a token read from a file) add header
// lines of its own.
// `proxy`: a plain http request through a proxy names the whole URL and
// carries the proxy's credentials (an https one goes through a tunnel).
StatusOr<std::string> RequestBytes(const HttpRequest& request, const HttpEndpoint& endpoint,
                                   const HttpProxy* proxy) {
  if (request.method.empty() ||
      !std::all_of(request.method.begin(), request.method.end(),
                   [](unsigned char c) { return std::isupper(c); })) {
    return InvalidArgumentError("method '" + request.method.substr(0, 16) + "'");
  }
  const bool via_proxy = proxy != nullptr && !endpoint.https;
  const std::string target =
      via_proxy ? "http://" + endpoint.host_header + endpoint.target : endpoint.target;
  std::string out =
      request.method + " " + target + " HTTP/1.1\r\nHost: " + endpoint.host_header + "\r\n";
  if (via_proxy && !proxy->authorization.empty()) {
    out += "Proxy-Authorization: " + proxy->authorization + "\r\n";
  }
  for (const std::string& h : request.headers) {
    if (h.find_first_of("\r\n") != std::string::npos || h.find(':') == std::string::npos) {
      // The header is not quoted: it may hold a credential.
      return InvalidArgumentError("a request header with a line break or no ':'");
    }
    out += h;
    out += "\r\n";
  }
  const bool has_body = request.method != "GET" && request.method != "HEAD" &&
                        (!request.body.empty() || request.method != "DELETE");
  if (has_body) out += "Content-Length: " + std::to_string(request.body.size()) + "\r\n";
  out += "\r\n";
  if (has_body) out += request.body;
  return out;
}

// Sends the request on `connection` and reads the answer.
StatusOr<HttpResponse> Exchange(HttpConnection& connection, const HttpRequest& request,
                                const std::string& bytes, const IoLimits& limits,
                                Attempt* attempt) {
  attempt->wrote_any = true;  // from the first send() on, it may have arrived
  connection.StartExchange();
  if (Status s = connection.Write(bytes, limits); !s.ok()) return s;
  HttpResponse response;
  HttpResponseParser parser(request.method == "HEAD");
  bool body_too_large = false;
  const HttpResponseParser::BodySink sink = [&](std::string_view data) {
    if (request.on_body_data && parser.status() >= 200 && parser.status() < 300) {
      return request.on_body_data(data);
    }
    if (data.size() > request.max_body_bytes - std::min(request.max_body_bytes,
                                                        response.body.size())) {
      body_too_large = true;
      return false;
    }
    response.body.append(data);
    return true;
  };
  char buffer[16 * 1024];
  while (!parser.complete() && !parser.stopped()) {
    StatusOr<size_t> n = connection.Read(buffer, sizeof(buffer), limits);
    attempt->got_any_byte = parser.got_any_byte();
    if (!n.ok()) return n.status();
    Status parsed = *n == 0 ? parser.FinishAtEof()
                            : parser.Feed(std::string_view(buffer, *n), sink);
    attempt->got_any_byte = parser.got_any_byte();
    if (!parsed.ok()) return parsed;
  }
  if (body_too_large) {
    return Status(StatusCode::kResourceExhausted,
                  "response body larger than " + std::to_string(request.max_body_bytes) +
                      " bytes");
  }
  attempt->reusable = parser.reusable();
  response.status = parser.status();
  if (!parser.retry_after().empty()) {
    response.retry_after_s = ParseRetryAfter(parser.retry_after(), parser.date(),
                                             static_cast<int64_t>(std::time(nullptr)));
  }
  return response;
}

}  // namespace

std::string UrlEscape(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

HttpChannelPool::HttpChannelPool(size_t max_idle) : max_idle_(max_idle) {}
HttpChannelPool::~HttpChannelPool() = default;

std::unique_ptr<HttpConnection> HttpChannelPool::TakeIdle(const std::string& key) {
  std::unique_ptr<HttpConnection> found;
  {
    MutexLock lock(mu_);
    for (auto it = idle_.end(); it != idle_.begin();) {
      --it;
      if ((*it)->key() == key) {
        found = std::move(*it);
        idle_.erase(it);
        break;
      }
    }
  }
  // Closed by the server while idle (its keep-alive timeout): dropped here,
  // outside the lock.
  if (found && !found->LooksReusable()) found.reset();
  return found;
}

void HttpChannelPool::PutIdle(std::unique_ptr<HttpConnection> connection) {
  std::unique_ptr<HttpConnection> dropped;  // closed outside the lock
  MutexLock lock(mu_);
  if (max_idle_ == 0) {
    dropped = std::move(connection);
    return;
  }
  if (idle_.size() >= max_idle_) {
    dropped = std::move(idle_.front());
    idle_.erase(idle_.begin());
  }
  idle_.push_back(std::move(connection));
}

StatusOr<HttpResponse> HttpChannelPool::Perform(const TlsMaterial& tls,
                                                const HttpRequest& request) {
  const std::string what = request.method + " " + request.url;
  auto fail = [&](const Status& s, bool sent) {
    if (request.maybe_sent != nullptr) *request.maybe_sent = sent;
    return Status(s.code(), what + ": " + s.message());
  };
  // What is left of the caller's deadline bounds the connect and the whole
  // exchange, each ending at the earlier of its own limit and the deadline.
  const SteadyClock::time_point start = SteadyClock::now();
  SteadyClock::time_point end = SteadyClock::time_point::max();
  if (request.total_timeout_ms > 0) {
    end = start + std::chrono::milliseconds(request.total_timeout_ms);
  }
  if (request.deadline) {
    if (*request.deadline <= start) {
      return fail(DeadlineExceededError("deadline passed before the request"), false);
    }
    end = std::min(end, *request.deadline);
  }
  IoLimits limits;
  limits.deadline = end;
  limits.cancel = request.cancel;
  if (request.idle_timeout_s > 0) limits.idle = std::chrono::seconds(request.idle_timeout_s);

  StatusOr<HttpEndpoint> endpoint = ParseHttpUrl(request.url);
  if (!endpoint.ok()) return fail(endpoint.status(), false);
  StatusOr<std::optional<HttpProxy>> proxy = ProxyFor(*endpoint, ::getenv);
  if (!proxy.ok()) return fail(proxy.status(), false);
  const HttpProxy* via = proxy->has_value() ? &**proxy : nullptr;
  StatusOr<std::string> bytes = RequestBytes(request, *endpoint, via);
  if (!bytes.ok()) return fail(bytes.status(), false);
  std::shared_ptr<SSL_CTX> ctx;
  if (endpoint->https) {
    StatusOr<std::shared_ptr<SSL_CTX>> made = TlsContextFor(tls);
    if (!made.ok()) return fail(made.status(), false);
    ctx = std::move(*made);
  }
  const bool verify = !tls.insecure_skip_verify;
  std::unique_ptr<HttpConnection> connection;
  if (!request.fresh_connection) {
    connection = TakeIdle(HttpConnection::KeyFor(*endpoint, via, ctx.get(), verify));
  }
  for (bool reused = connection != nullptr;; reused = false) {
    if (!connection) {
      IoLimits connect_limits = limits;
      connect_limits.deadline = std::min(
          end, SteadyClock::now() + std::chrono::milliseconds(std::max(request.connect_timeout_ms, 1)));
      StatusOr<std::unique_ptr<HttpConnection>> opened =
          HttpConnection::Open(*endpoint, via, ctx, verify, connect_limits);
      if (!opened.ok()) return fail(opened.status(), false);
      connection = std::move(*opened);
    }
    Attempt attempt;
    StatusOr<HttpResponse> response =
        Exchange(*connection, request, *bytes, limits, &attempt);
    if (response.ok()) {
      if (attempt.reusable) PutIdle(std::move(connection));
      return response;
    }
    connection.reset();
    // A kept-alive connection the server closed just as it was reused: the
    // request did not reach it, or was not answered; sent once more on a
    // new connection, unless it is a POST.
    const StatusCode code = response.status().code();
    if (reused && !attempt.got_any_byte && code == StatusCode::kUnavailable &&
        request.method != "POST") {
      continue;
    }
    return fail(response.status(), attempt.wrote_any);
  }
}

StatusOr<HttpResponse> Perform(const TlsMaterial& tls, const HttpRequest& request) {
  HttpChannelPool one_shot(0);
  return one_shot.Perform(tls, request);
}

std::optional<int> ParseRetryAfter(std::string_view value, std::string_view date, int64_t now) {
  constexpr int64_t kDay = 86400;
  if (value.empty()) return std::nullopt;
  if (std::all_of(value.begin(), value.end(),
                  [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
    if (value.size() > 6) return std::nullopt;
    const int64_t seconds = std::stoll(std::string(value));
    if (seconds >= kDay) return std::nullopt;
    return static_cast<int>(seconds);
  }
  const std::optional<int64_t> at = ParseHttpDate(value);
  if (!at) return std::nullopt;
  int64_t from = now;
  if (!date.empty()) {
    if (std::optional<int64_t> server_now = ParseHttpDate(date)) from = *server_now;
  }
  const int64_t seconds = std::max<int64_t>(0, *at - from);
  if (seconds >= kDay) return std::nullopt;
  return static_cast<int>(seconds);
}

}  // namespace hcudp::kube
