#include "kube/http_request.h"

#include <curl/curl.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <mutex>
#include <tuple>

namespace hcudp::kube {

// libcurl reads the TLS material from these paths; it takes no in-memory
// PEM with every TLS backend (GnuTLS, which we link, has no CURLOPT_*_BLOB
// in curl 7.88, and ignores SSLCERT_BLOB silently), so one way for all.
class PemFile {
 public:
  static StatusOr<std::shared_ptr<const PemFile>> Create(const std::string& pem) {
    const int fd = memfd_create("hcudp-pem", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0) return InternalError(std::string("memfd_create: ") + std::strerror(errno));
    auto file = std::shared_ptr<PemFile>(new PemFile(fd, pem));
    size_t done = 0;
    while (done < pem.size()) {
      const ssize_t n = write(fd, pem.data() + done, pem.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return InternalError(std::string("memfd write: ") + std::strerror(errno));
      done += static_cast<size_t>(n);
    }
    // Read-only from here on, for libcurl and anyone else who opens it.
    fcntl(fd, F_ADD_SEALS, F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE);
    return std::shared_ptr<const PemFile>(std::move(file));
  }
  ~PemFile() { close(fd_); }
  PemFile(const PemFile&) = delete;
  PemFile& operator=(const PemFile&) = delete;

  const std::string& pem() const { return pem_; }
  // Opening it opens the memfd afresh, at offset 0.
  const std::string& path() const { return path_; }

 private:
  PemFile(int fd, std::string pem)
      : fd_(fd), pem_(std::move(pem)), path_("/proc/self/fd/" + std::to_string(fd)) {}
  const int fd_;
  const std::string pem_;
  const std::string path_;
};

namespace {

// The paths of a request's TLS material; empty: not given.
struct TlsPaths {
  std::string ca;
  std::string client_cert;
  std::string client_key;
};

StatusOr<HttpResponse> PerformOn(CURL* curl, CURLM* multi_handle, const TlsMaterial& tls,
                                 const TlsPaths& paths, const HttpRequest& request);

constexpr size_t kMaxPemFiles = 6;  // CA, certificate, key, and one rotation of each

// TCP keepalive on every connection: a peer that vanished without a reset
// (its route gone, a NAT that dropped the state) is found within
// idle + count * interval = 60 s, instead of never on a quiet watch. The
// idle time is client-go's dialer keepalive (30 s); libcurl before 8.9 sets
// no probe count (Linux default 9), so it is set on the socket here.
constexpr long kKeepIdleS = 30;      // NOLINT(runtime/int): CURL's type
constexpr long kKeepIntervalS = 10;  // NOLINT(runtime/int)
constexpr int kKeepCount = 3;

int OnSocketOpen(void*, curl_socket_t fd, curlsocktype purpose) {
  if (purpose == CURLSOCKTYPE_IPCXN) {
    // Best effort: a socket that is not TCP (or a kernel without it) keeps
    // the system default.
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &kKeepCount, sizeof(kKeepCount));
  }
  return CURL_SOCKOPT_OK;
}

// Debian's libcurl links libssh2, and curl_global_init calls libssh2_init,
// which on its OpenSSL backend loads OpenSSL's config and every built-in
// engine: ~1.7 MiB of code pages touched (BENCHMARKS.md, "Footprint"), for
// a protocol this client never enables (CURLOPT_PROTOCOLS_STR). libssh2
// initialises its crypto only on the first libssh2_init, so one made first
// without crypto leaves curl's a no-op. Found by name: a libcurl without
// libssh2 simply has no such symbol.
void SkipSshCryptoInit() {
  constexpr int kLibssh2InitNoCrypto = 0x1;  // LIBSSH2_INIT_NO_CRYPTO
  using Libssh2Init = int (*)(int);
  if (void* init = ::dlsym(RTLD_DEFAULT, "libssh2_init")) {
    (void)reinterpret_cast<Libssh2Init>(init)(kLibssh2InitNoCrypto);
  }
}

void GlobalInitOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    SkipSshCryptoInit();
    curl_global_init(CURL_GLOBAL_DEFAULT);
  });
}

struct Transfer {
  CURL* curl = nullptr;
  const HttpRequest* request = nullptr;
  HttpResponse* response = nullptr;
  bool stopped_by_consumer = false;
  bool body_too_large = false;
  // The Retry-After and Date headers of the response being received: libcurl
  // hands over the headers of every response of a transfer (an interim
  // 1xx, a redirect), and only the final one's count.
  std::string retry_after;
  std::string date;
};

// The value of header `name` (lower case, with the colon) in `line`, or
// nullopt when the line is another header.
std::optional<std::string_view> HeaderValue(std::string_view line, std::string_view name) {
  if (line.size() < name.size()) return std::nullopt;
  for (size_t i = 0; i < name.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(line[i])) != name[i]) return std::nullopt;
  }
  std::string_view value = line.substr(name.size());
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
  while (!value.empty() && std::isspace(static_cast<unsigned char>(value.back()))) {
    value.remove_suffix(1);
  }
  return value;
}

size_t OnHeader(char* data, size_t size, size_t nitems, void* user) {
  auto* t = static_cast<Transfer*>(user);
  size_t n = size * nitems;
  std::string_view line(data, n);
  if (line.rfind("HTTP/", 0) == 0) {  // a status line: a new response begins
    t->retry_after.clear();
    t->date.clear();
  } else if (auto v = HeaderValue(line, "retry-after:")) {
    t->retry_after = std::string(*v);
  } else if (auto d = HeaderValue(line, "date:")) {
    t->date = std::string(*d);
  }
  return n;
}

size_t OnBody(char* data, size_t size, size_t nmemb, void* user) {
  auto* t = static_cast<Transfer*>(user);
  size_t n = size * nmemb;
  long status = 0;  // NOLINT(runtime/int)
  curl_easy_getinfo(t->curl, CURLINFO_RESPONSE_CODE, &status);
  if (t->request->on_body_data && status >= 200 && status < 300) {
    if (!t->request->on_body_data(std::string_view(data, n))) {
      t->stopped_by_consumer = true;
      return 0;  // a short write ends the transfer
    }
    return n;
  }
  if (n >
      t->request->max_body_bytes - std::min(t->request->max_body_bytes, t->response->body.size())) {
    t->body_too_large = true;
    return 0;  // a short write ends the transfer
  }
  t->response->body.append(data, n);
  return n;
}

Status MapCurlError(CURLcode code, const char* error_buffer, const std::string& what) {
  std::string detail = error_buffer[0] != '\0' ? error_buffer : curl_easy_strerror(code);
  std::string message = what + ": " + detail;
  switch (code) {
    case CURLE_OPERATION_TIMEDOUT:
      return DeadlineExceededError(message);
    case CURLE_PEER_FAILED_VERIFICATION:
      return Status(StatusCode::kUnauthenticated,
                    what + ": server certificate not trusted: " + detail);
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_CONNECT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PARTIAL_FILE:
      return UnavailableError(message);
    default:
      return InternalError(message);
  }
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

// An easy handle and the multi handle that drives it. The multi handle owns
// the connection cache, so a channel reused for the next request reuses its
// TCP+TLS connection (keep-alive).
struct HttpChannelPool::Channel {
  Channel() : easy(curl_easy_init()), multi(curl_multi_init()) {}
  ~Channel() {
    if (multi != nullptr) curl_multi_cleanup(multi);
    if (easy != nullptr) curl_easy_cleanup(easy);
  }
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;
  CURL* easy;
  CURLM* multi;
};

HttpChannelPool::HttpChannelPool(size_t max_idle) : max_idle_(max_idle) { GlobalInitOnce(); }
HttpChannelPool::~HttpChannelPool() = default;

StatusOr<HttpResponse> HttpChannelPool::Perform(const TlsMaterial& tls,
                                                const HttpRequest& request) {
  std::unique_ptr<Channel> channel;
  {
    MutexLock lock(mu_);
    if (!idle_.empty()) {
      channel = std::move(idle_.back());
      idle_.pop_back();
    }
  }
  if (!channel) channel = std::make_unique<Channel>();
  if (channel->easy == nullptr || channel->multi == nullptr) {
    return InternalError("curl initialisation failed");
  }
  // Held until the transfer ends: libcurl opens them when it connects.
  std::shared_ptr<const PemFile> ca, cert, key;
  TlsPaths paths;
  for (auto [pem, file, path, what] :
       {std::tuple(&tls.ca_pem, &ca, &paths.ca, "the CA"),
        std::tuple(&tls.client_cert_pem, &cert, &paths.client_cert, "the client certificate"),
        std::tuple(&tls.client_key_pem, &key, &paths.client_key, "the client key")}) {
    if (pem->empty()) continue;
    StatusOr<std::shared_ptr<const PemFile>> made = PemFileFor(*pem);
    if (!made.ok()) {
      return Status(made.status().code(), request.method + " " + request.url + ": " + what + ": " +
                                              made.status().message());
    }
    *file = *std::move(made);
    *path = (*file)->path();
  }
  StatusOr<HttpResponse> response = PerformOn(channel->easy, channel->multi, tls, paths, request);
  MutexLock lock(mu_);
  if (idle_.size() < max_idle_) idle_.push_back(std::move(channel));
  return response;
}

StatusOr<std::shared_ptr<const PemFile>> HttpChannelPool::PemFileFor(const std::string& pem) {
  {
    MutexLock lock(mu_);
    for (const auto& file : pem_files_) {
      if (file->pem() == pem) return file;
    }
  }
  StatusOr<std::shared_ptr<const PemFile>> made = PemFile::Create(pem);  // not under mu_
  if (!made.ok()) return made.status();
  MutexLock lock(mu_);
  for (const auto& file : pem_files_) {
    if (file->pem() == pem) return file;  // another thread made it meanwhile
  }
  if (pem_files_.size() >= kMaxPemFiles) pem_files_.erase(pem_files_.begin());
  pem_files_.push_back(*made);
  return made;
}

StatusOr<HttpResponse> Perform(const TlsMaterial& tls, const HttpRequest& request) {
  HttpChannelPool one_shot(0);
  return one_shot.Perform(tls, request);
}

namespace {

StatusOr<HttpResponse> PerformOn(CURL* curl, CURLM* multi_handle, const TlsMaterial& tls,
                                 const TlsPaths& paths, const HttpRequest& request) {
  const std::string what = request.method + " " + request.url;
  // What is left of the caller's deadline bounds the connect and the whole
  // transfer; curl aborts at the earlier of the two limits.
  int64_t connect_ms = request.connect_timeout_ms;
  int64_t total_ms = request.total_timeout_ms;
  if (request.deadline) {
    const int64_t left = std::chrono::duration_cast<std::chrono::milliseconds>(
                             *request.deadline - std::chrono::steady_clock::now())
                             .count();
    if (left <= 0) {
      if (request.maybe_sent != nullptr) *request.maybe_sent = false;
      return DeadlineExceededError(what + ": deadline passed before the request");
    }
    connect_ms = std::min(connect_ms, left);
    total_ms = total_ms > 0 ? std::min(total_ms, left) : left;
  }
  curl_easy_reset(curl);  // keeps live connections and the TLS session cache

  HttpResponse response;
  Transfer transfer{curl, &request, &response, false, false, {}, {}};
  char error_buffer[CURL_ERROR_SIZE] = {0};

  curl_slist* headers = nullptr;
  for (const std::string& h : request.headers) headers = curl_slist_append(headers, h.c_str());
  std::unique_ptr<curl_slist, void (*)(curl_slist*)> header_list(headers, curl_slist_free_all);

  curl_easy_setopt(curl, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, request.method.c_str());
  if (request.fresh_connection) curl_easy_setopt(curl, CURLOPT_FRESH_CONNECT, 1L);
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_1_1);
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error_buffer);
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "https,http");
  curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
  if (request.method == "GET") {
    curl_easy_setopt(curl, CURLOPT_HTTPGET, 1L);
  } else if (!request.body.empty() || request.method != "DELETE") {
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, request.body.data());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE,
                     static_cast<curl_off_t>(request.body.size()));
  }
  curl_easy_setopt(curl, CURLOPT_TCP_KEEPALIVE, 1L);
  curl_easy_setopt(curl, CURLOPT_TCP_KEEPIDLE, kKeepIdleS);
  curl_easy_setopt(curl, CURLOPT_TCP_KEEPINTVL, kKeepIntervalS);
  curl_easy_setopt(curl, CURLOPT_SOCKOPTFUNCTION, OnSocketOpen);
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(connect_ms));  // NOLINT
  if (total_ms > 0) {
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(total_ms));  // NOLINT
  }
  if (request.idle_timeout_s > 0) {
    curl_easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(curl, CURLOPT_LOW_SPEED_TIME,
                     static_cast<long>(request.idle_timeout_s));  // NOLINT
  }
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, OnHeader);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &transfer);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, OnBody);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &transfer);

  curl_easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, tls.insecure_skip_verify ? 0L : 1L);
  curl_easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, tls.insecure_skip_verify ? 0L : 2L);
  // The given CA replaces the system trust store, as in kubectl; without
  // one, the system store is libcurl's CA bundle (ca-certificates.crt). Never
  // libcurl's CA directory as well (/etc/ssl/certs): on GnuTLS it parses
  // every file there for each connection (+11 MiB of heap in the daemon).
  curl_easy_setopt(curl, CURLOPT_CAPATH, nullptr);
  if (!paths.ca.empty()) curl_easy_setopt(curl, CURLOPT_CAINFO, paths.ca.c_str());
  if (!paths.client_cert.empty()) {
    curl_easy_setopt(curl, CURLOPT_SSLCERTTYPE, "PEM");
    curl_easy_setopt(curl, CURLOPT_SSLCERT, paths.client_cert.c_str());
    curl_easy_setopt(curl, CURLOPT_SSLKEYTYPE, "PEM");
    curl_easy_setopt(curl, CURLOPT_SSLKEY, paths.client_key.c_str());
  }

  // The multi interface lets us look at `cancel` every 50 ms while idle.
  CURLM* multi = multi_handle;
  curl_multi_add_handle(multi, curl);
  CURLcode result = CURLE_OK;
  bool cancelled = false;
  for (;;) {
    int running = 0;
    CURLMcode mc = curl_multi_perform(multi, &running);
    if (mc != CURLM_OK) {
      curl_multi_remove_handle(multi, curl);
      return InternalError(std::string("curl: ") + curl_multi_strerror(mc));
    }
    if (running == 0) {
      int queued = 0;
      CURLMsg* msg = curl_multi_info_read(multi, &queued);
      if (msg != nullptr && msg->msg == CURLMSG_DONE) result = msg->data.result;
      break;
    }
    if (request.cancel != nullptr && request.cancel->load()) {
      cancelled = true;
      break;
    }
    curl_multi_poll(multi, nullptr, 0, 50, nullptr);
  }
  curl_multi_remove_handle(multi, curl);

  if (cancelled) return Status(StatusCode::kCancelled, what + ": cancelled");
  if (result == CURLE_WRITE_ERROR && transfer.stopped_by_consumer) result = CURLE_OK;
  if (result == CURLE_WRITE_ERROR && transfer.body_too_large) {
    return Status(
        StatusCode::kResourceExhausted,
        what + ": response body larger than " + std::to_string(request.max_body_bytes) + " bytes");
  }
  if (result != CURLE_OK) {
    if (request.maybe_sent != nullptr) {
      *request.maybe_sent = !(result == CURLE_COULDNT_RESOLVE_HOST ||
                              result == CURLE_COULDNT_CONNECT || result == CURLE_SSL_CONNECT_ERROR);
    }
    return MapCurlError(result, error_buffer, what);
  }
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &response.status);
  if (!transfer.retry_after.empty()) {
    response.retry_after_s = ParseRetryAfter(transfer.retry_after, transfer.date,
                                             static_cast<int64_t>(std::time(nullptr)));
  }
  return response;
}

}  // namespace

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
  const time_t at = curl_getdate(std::string(value).c_str(), nullptr);
  if (at == static_cast<time_t>(-1)) return std::nullopt;
  int64_t from = now;
  if (!date.empty()) {
    const time_t server_now = curl_getdate(std::string(date).c_str(), nullptr);
    if (server_now != static_cast<time_t>(-1)) from = static_cast<int64_t>(server_now);
  }
  const int64_t seconds = std::max<int64_t>(0, static_cast<int64_t>(at) - from);
  if (seconds >= kDay) return std::nullopt;
  return static_cast<int>(seconds);
}

}  // namespace hcudp::kube
