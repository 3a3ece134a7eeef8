#include "kube/http_connection.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <vector>

#include "hcudp_internal/thread_annotations.h"
#include "kube/http_proxy.h"
#include "kube/http_request.h"
#include "kube/http_response_parser.h"

namespace hcudp::kube {
namespace {

using SteadyClock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// TCP keepalive on every connection: a peer that vanished without a reset
// (its route gone, a NAT that dropped the state) is found within
// idle + count * interval = 60 s, instead of never on a quiet watch. The
// idle time is client-go's dialer keepalive (30 s).
constexpr int kKeepIdleS = 30;
constexpr int kKeepIntervalS = 10;
constexpr int kKeepCount = 3;
constexpr milliseconds kCancelPoll{50};

// Modern suites only (the API server's Go TLS offers all of them); fewer
// suites and groups also mean fewer algorithms OpenSSL fetches and keeps.
constexpr char kTls12Ciphers[] =
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"
    "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"
    "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305";
constexpr char kGroups[] = "X25519:P-256:P-384";

// OpenSSL's error strings, loaded the first time an error is worded: a
// process that never meets one never pays for them (MakeTlsContext), and an
// operator still reads "SSL routines::no cipher match", not a bare code.
// OpenSSL 3 deprecates these calls (its init loads the strings, which we
// turned off), but they still load them.
void LoadOpenSslErrorStrings() {
  static std::once_flag once;
  std::call_once(once, [] {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    ERR_load_CRYPTO_strings();
    ERR_load_SSL_strings();
#pragma GCC diagnostic pop
  });
}

std::string OpenSslError(const char* fallback) {
  const unsigned long code = ERR_get_error();  // NOLINT(runtime/int): OpenSSL's type
  ERR_clear_error();
  if (code == 0) return fallback;
  LoadOpenSslErrorStrings();
  char text[256];
  ERR_error_string_n(code, text, sizeof(text));
  return text;
}

bool IsIpAddress(const std::string& host) {
  in6_addr addr6{};
  in_addr addr4{};
  return inet_pton(AF_INET, host.c_str(), &addr4) == 1 ||
         inet_pton(AF_INET6, host.c_str(), &addr6) == 1;
}

// ---- the socket BIO: send() with MSG_NOSIGNAL, so that a peer gone away is
// an error and never SIGPIPE (OpenSSL's socket BIO uses write()).

int BioWrite(BIO* bio, const char* data, int size) {
  const int fd = static_cast<int>(reinterpret_cast<intptr_t>(BIO_get_data(bio)));
  BIO_clear_retry_flags(bio);
  const ssize_t n = send(fd, data, static_cast<size_t>(size), MSG_NOSIGNAL);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
    BIO_set_retry_write(bio);
  }
  return static_cast<int>(n);
}

int BioRead(BIO* bio, char* data, int size) {
  const int fd = static_cast<int>(reinterpret_cast<intptr_t>(BIO_get_data(bio)));
  BIO_clear_retry_flags(bio);
  const ssize_t n = recv(fd, data, static_cast<size_t>(size), 0);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
    BIO_set_retry_read(bio);
  }
  return static_cast<int>(n);
}

long BioCtrl(BIO*, int cmd, long, void*) {  // NOLINT(runtime/int): OpenSSL's type
  return cmd == BIO_CTRL_FLUSH ? 1 : 0;
}

int BioCreate(BIO* bio) {
  BIO_set_init(bio, 1);
  return 1;
}

const BIO_METHOD* SocketBioMethod() {
  static BIO_METHOD* method = [] {
    BIO_METHOD* m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "hcudp socket");
    if (m != nullptr) {
      BIO_meth_set_write(m, BioWrite);
      BIO_meth_set_read(m, BioRead);
      BIO_meth_set_ctrl(m, BioCtrl);
      BIO_meth_set_create(m, BioCreate);
    }
    return m;
  }();
  return method;
}

// ---- TLS contexts, one per distinct material for the process.

std::string MaterialKey(const TlsMaterial& tls) {
  return std::string(tls.insecure_skip_verify ? "1" : "0") + '\0' + tls.ca_pem + '\0' +
         tls.client_cert_pem + '\0' + tls.client_key_pem;
}

Status AddCaPem(SSL_CTX* ctx, const std::string& pem) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())),
                                                BIO_free);
  X509_STORE* store = SSL_CTX_get_cert_store(ctx);
  int added = 0;
  while (X509* cert = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) {
    X509_STORE_add_cert(store, cert);
    X509_free(cert);
    ++added;
  }
  ERR_clear_error();  // the end of the PEM reads as an error
  if (added == 0) return InvalidArgumentError("the CA: no PEM certificate in it");
  return OkStatus();
}

Status UseClientPem(SSL_CTX* ctx, const TlsMaterial& tls) {
  std::unique_ptr<BIO, decltype(&BIO_free)> cert_bio(
      BIO_new_mem_buf(tls.client_cert_pem.data(), static_cast<int>(tls.client_cert_pem.size())),
      BIO_free);
  X509* cert = PEM_read_bio_X509(cert_bio.get(), nullptr, nullptr, nullptr);
  if (cert == nullptr || SSL_CTX_use_certificate(ctx, cert) != 1) {
    X509_free(cert);
    return InvalidArgumentError("the client certificate: " + OpenSslError("not a PEM certificate"));
  }
  X509_free(cert);
  // Intermediate certificates after the first go with it.
  while (X509* extra = PEM_read_bio_X509(cert_bio.get(), nullptr, nullptr, nullptr)) {
    if (SSL_CTX_add0_chain_cert(ctx, extra) != 1) X509_free(extra);
  }
  ERR_clear_error();
  std::unique_ptr<BIO, decltype(&BIO_free)> key_bio(
      BIO_new_mem_buf(tls.client_key_pem.data(), static_cast<int>(tls.client_key_pem.size())),
      BIO_free);
  // RSA or EC, PKCS#8 or the traditional form; never a passphrase prompt.
  EVP_PKEY* key = PEM_read_bio_PrivateKey(key_bio.get(), nullptr, nullptr, const_cast<char*>(""));
  if (key == nullptr || SSL_CTX_use_PrivateKey(ctx, key) != 1) {
    EVP_PKEY_free(key);
    return InvalidArgumentError("the client key: " + OpenSslError("not a PEM private key"));
  }
  EVP_PKEY_free(key);
  if (SSL_CTX_check_private_key(ctx) != 1) {
    return InvalidArgumentError("the client key does not match the client certificate");
  }
  return OkStatus();
}

StatusOr<std::shared_ptr<SSL_CTX>> MakeTlsContext(const TlsMaterial& tls) {
  // Without OpenSSL's error strings: loading them touches ~190 KiB of
  // libcrypto and keeps ~60 KiB of heap for the life of the process
  // (BENCHMARKS.md, "The kube client's own HTTP client"). OpenSslError loads
  // them when it first words an error, and the errors a user meets most (an
  // untrusted certificate, a closed connection, a timeout) are worded here.
  // The first initialisation decides, so this comes before the first
  // context; a no-op when something else initialised OpenSSL.
  OPENSSL_init_ssl(OPENSSL_INIT_NO_LOAD_SSL_STRINGS | OPENSSL_INIT_NO_LOAD_CRYPTO_STRINGS, nullptr);
  std::shared_ptr<SSL_CTX> ctx(SSL_CTX_new(TLS_client_method()), SSL_CTX_free);
  if (!ctx) return InternalError("TLS context: " + OpenSslError("SSL_CTX_new failed"));
  SSL_CTX* c = ctx.get();
  SSL_CTX_set_min_proto_version(c, TLS1_2_VERSION);
  // A server that closes without close_notify ends the stream; whether the
  // response was whole is HTTP's to say (Content-Length, the last chunk).
  SSL_CTX_set_options(c, SSL_OP_IGNORE_UNEXPECTED_EOF | SSL_OP_NO_TICKET |
                             SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION);
  SSL_CTX_set_session_cache_mode(c, SSL_SESS_CACHE_OFF);
  SSL_CTX_set_mode(c, SSL_MODE_RELEASE_BUFFERS);
  if (SSL_CTX_set_cipher_list(c, kTls12Ciphers) != 1 || SSL_CTX_set1_groups_list(c, kGroups) != 1) {
    return InternalError("TLS context: " + OpenSslError("cipher or group list refused"));
  }
  if (tls.insecure_skip_verify) {
    SSL_CTX_set_verify(c, SSL_VERIFY_NONE, nullptr);
  } else {
    SSL_CTX_set_verify(c, SSL_VERIFY_PEER, nullptr);
    if (!tls.ca_pem.empty()) {
      // The given CA is the only trust anchor, as in kubectl.
      if (Status s = AddCaPem(c, tls.ca_pem); !s.ok()) return s;
    } else if (SSL_CTX_set_default_verify_paths(c) != 1) {
      return InternalError("TLS context: " + OpenSslError("no system trust store"));
    }
  }
  if (!tls.client_cert_pem.empty() || !tls.client_key_pem.empty()) {
    if (Status s = UseClientPem(c, tls); !s.ok()) return s;
  }
  return ctx;
}

class TlsContextCache {
 public:
  StatusOr<std::shared_ptr<SSL_CTX>> Get(const TlsMaterial& tls) {
    std::string key = MaterialKey(tls);
    {
      MutexLock lock(mu_);
      for (const auto& [k, ctx] : entries_) {
        if (k == key) return ctx;
      }
    }
    StatusOr<std::shared_ptr<SSL_CTX>> made = MakeTlsContext(tls);  // not under mu_
    if (!made.ok()) return made.status();
    MutexLock lock(mu_);
    for (const auto& [k, ctx] : entries_) {
      if (k == key) return ctx;  // another thread made it meanwhile
    }
    // A few contexts: the material of each client, and a rotation of it.
    if (entries_.size() >= 4) entries_.erase(entries_.begin());
    entries_.emplace_back(std::move(key), *made);
    return made;
  }

 private:
  Mutex mu_;  // a leaf
  std::vector<std::pair<std::string, std::shared_ptr<SSL_CTX>>> entries_ HCUDP_GUARDED_BY(mu_);
};

// ---- resolving and connecting

struct AddrInfoDeleter {
  void operator()(addrinfo* a) const { freeaddrinfo(a); }
};
using AddrInfoPtr = std::unique_ptr<addrinfo, AddrInfoDeleter>;

Status CheckLimits(const IoLimits& limits, SteadyClock::time_point last_byte) {
  if (limits.cancel != nullptr && limits.cancel->load()) {
    return Status(StatusCode::kCancelled, "cancelled");
  }
  const SteadyClock::time_point now = SteadyClock::now();
  if (now >= limits.deadline) return DeadlineExceededError("timed out");
  if (limits.idle != SteadyClock::duration::zero() && now - last_byte >= limits.idle) {
    return DeadlineExceededError(
        "no byte received for " +
        std::to_string(std::chrono::duration_cast<std::chrono::seconds>(limits.idle).count()) +
        " s");
  }
  return OkStatus();
}

// How long one poll may sleep: up to the next look at the cancel flag, the
// deadline or the idle limit.
int PollSliceMs(const IoLimits& limits, SteadyClock::time_point last_byte) {
  SteadyClock::time_point until = std::min(limits.deadline, SteadyClock::now() + kCancelPoll);
  if (limits.idle != SteadyClock::duration::zero()) until = std::min(until, last_byte + limits.idle);
  const auto ms = std::chrono::duration_cast<milliseconds>(until - SteadyClock::now()).count() + 1;
  return static_cast<int>(std::max<int64_t>(ms, 1));
}

Status WaitFd(int fd, short events, const IoLimits& limits, SteadyClock::time_point last_byte) {
  for (;;) {
    if (Status s = CheckLimits(limits, last_byte); !s.ok()) return s;
    pollfd p{fd, events, 0};
    const int n = poll(&p, 1, PollSliceMs(limits, last_byte));
    if (n > 0) return OkStatus();
    if (n < 0 && errno != EINTR) {
      return UnavailableError(std::string("poll: ") + std::strerror(errno));
    }
  }
}

// Resolves `host` without blocking past the limits: a numeric address at
// once, a name through glibc's asynchronous resolver.
StatusOr<AddrInfoPtr> ResolveHost(const HttpEndpoint& endpoint, const IoLimits& limits) {
  const std::string port = std::to_string(endpoint.port);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (getaddrinfo(endpoint.host.c_str(), port.c_str(), &hints, &found) == 0) {
    return AddrInfoPtr(found);
  }
  // A name. The request lives on the heap: when it is abandoned (deadline,
  // cancel) while glibc still works on it, it is left to glibc, a small
  // leak rather than a write into freed memory.
  struct Lookup {
    std::string host, port;
    addrinfo hints{};
    gaicb cb{};
  };
  auto* lookup = new Lookup{endpoint.host, port, {}, {}};
  lookup->hints.ai_family = AF_UNSPEC;
  lookup->hints.ai_socktype = SOCK_STREAM;
  lookup->hints.ai_flags = AI_ADDRCONFIG | AI_NUMERICSERV;
  lookup->cb.ar_name = lookup->host.c_str();
  lookup->cb.ar_service = lookup->port.c_str();
  lookup->cb.ar_request = &lookup->hints;
  gaicb* list[] = {&lookup->cb};
  if (getaddrinfo_a(GAI_NOWAIT, list, 1, nullptr) != 0) {
    delete lookup;
    return UnavailableError("could not resolve " + endpoint.host);
  }
  for (;;) {
    const int rc = gai_error(&lookup->cb);
    if (rc != EAI_INPROGRESS) {
      AddrInfoPtr result(lookup->cb.ar_result);
      delete lookup;
      if (rc != 0) {
        return UnavailableError("could not resolve " + endpoint.host + ": " + gai_strerror(rc));
      }
      return result;
    }
    Status stop = CheckLimits(limits, SteadyClock::now());
    if (!stop.ok()) {
      const int cancelled = gai_cancel(&lookup->cb);
      if (cancelled == EAI_CANCELED || cancelled == EAI_ALLDONE) {
        if (lookup->cb.ar_result != nullptr) freeaddrinfo(lookup->cb.ar_result);
        delete lookup;
      }
      return Status(stop.code(), "resolving " + endpoint.host + ": " + stop.message());
    }
    timespec slice{0, 50 * 1000 * 1000};
    const gaicb* waiting[] = {&lookup->cb};
    gai_suspend(waiting, 1, &slice);
  }
}

void SetSocketOptions(int fd) {
  const int on = 1;
  // Best effort: a kernel without one of these keeps its default.
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
  setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof(on));
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &kKeepIdleS, sizeof(kKeepIdleS));
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &kKeepIntervalS, sizeof(kKeepIntervalS));
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &kKeepCount, sizeof(kKeepCount));
}

// Connects to the first address that answers; the fd, or the last error.
StatusOr<int> ConnectTo(const HttpEndpoint& endpoint, const addrinfo* addresses,
                      const IoLimits& limits) {
  Status last = UnavailableError("no address for " + endpoint.host);
  for (const addrinfo* a = addresses; a != nullptr; a = a->ai_next) {
    const int fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
                          a->ai_protocol);
    if (fd < 0) {
      last = UnavailableError(std::string("socket: ") + std::strerror(errno));
      continue;
    }
    SetSocketOptions(fd);
    int rc = connect(fd, a->ai_addr, a->ai_addrlen);
    if (rc != 0 && errno == EINPROGRESS) {
      Status waited = WaitFd(fd, POLLOUT, limits, SteadyClock::now());
      if (!waited.ok()) {
        close(fd);
        return Status(waited.code(), "connecting to " + endpoint.host_header + ": " +
                                         waited.message());
      }
      int error = 0;
      socklen_t len = sizeof(error);
      getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &len);
      rc = error == 0 ? 0 : -1;
      errno = error;
    }
    if (rc == 0) return fd;
    last = UnavailableError("could not connect to " + endpoint.host_header + ": " +
                            std::strerror(errno));
    close(fd);
  }
  return last;
}

}  // namespace

StatusOr<HttpEndpoint> ParseHttpUrl(std::string_view url) {
  HttpEndpoint e;
  std::string_view rest;
  if (url.substr(0, 8) == "https://") {
    e.https = true;
    rest = url.substr(8);
  } else if (url.substr(0, 7) == "http://") {
    rest = url.substr(7);
  } else {
    return InvalidArgumentError("URL '" + std::string(url.substr(0, 64)) +
                                "': only http and https are supported");
  }
  const size_t path_at = rest.find_first_of("/?");
  std::string_view authority = rest.substr(0, path_at);
  e.target = path_at == std::string_view::npos ? "/" : std::string(rest.substr(path_at));
  if (!e.target.empty() && e.target.front() == '?') e.target.insert(0, "/");
  if (e.target.find('#') != std::string::npos ||
      std::any_of(e.target.begin(), e.target.end(), [](unsigned char c) { return c <= ' '; })) {
    return InvalidArgumentError("URL path '" + e.target.substr(0, 64) +
                                "': a fragment, space or control character");
  }
  if (authority.find('@') != std::string_view::npos) {
    return InvalidArgumentError("URL: user information is not supported");
  }
  std::string_view port;
  if (!authority.empty() && authority.front() == '[') {
    const size_t close = authority.find(']');
    if (close == std::string_view::npos) return InvalidArgumentError("URL: unclosed '['");
    e.host = std::string(authority.substr(1, close - 1));
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return InvalidArgumentError("URL: junk after ']'");
      port = after.substr(1);
    }
  } else {
    const size_t colon = authority.rfind(':');
    e.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) port = authority.substr(colon + 1);
  }
  if (e.host.empty() || !std::all_of(e.host.begin(), e.host.end(), [](unsigned char c) {
        return std::isalnum(c) || c == '.' || c == '-' || c == ':' || c == '_' || c == '%';
      })) {
    return InvalidArgumentError("URL host '" + e.host.substr(0, 64) + "' is not a host name");
  }
  const int default_port = e.https ? 443 : 80;
  e.port = default_port;
  if (!port.empty()) {
    if (port.size() > 5 || !std::all_of(port.begin(), port.end(), [](unsigned char c) {
          return std::isdigit(c);
        })) {
      return InvalidArgumentError("URL port '" + std::string(port) + "'");
    }
    e.port = std::stoi(std::string(port));
    if (e.port < 1 || e.port > 65535) {
      return InvalidArgumentError("URL port " + std::string(port) + " out of range");
    }
  }
  const bool v6 = e.host.find(':') != std::string::npos;
  e.host_header = v6 ? "[" + e.host + "]" : e.host;
  if (e.port != default_port) e.host_header += ":" + std::to_string(e.port);
  return e;
}

StatusOr<std::shared_ptr<SSL_CTX>> TlsContextFor(const TlsMaterial& tls) {
  static TlsContextCache* cache = new TlsContextCache();  // never destroyed: used at exit
  return cache->Get(tls);
}

std::string HttpConnection::KeyFor(const HttpEndpoint& endpoint, const HttpProxy* proxy,
                                   const SSL_CTX* ctx, bool verify) {
  char context[32];
  std::snprintf(context, sizeof(context), "%p/%d", static_cast<const void*>(ctx), verify ? 1 : 0);
  std::string key = std::string(endpoint.https ? "https://" : "http://") + endpoint.host + "|" +
                    std::to_string(endpoint.port) + "|" + context;
  if (proxy != nullptr) {
    key += "|via " + proxy->endpoint.host_header + "|" + proxy->authorization;
  }
  return key;
}

StatusOr<std::unique_ptr<HttpConnection>> HttpConnection::Open(const HttpEndpoint& endpoint,
                                                               const HttpProxy* proxy,
                                                               std::shared_ptr<SSL_CTX> ctx,
                                                               bool verify,
                                                               const IoLimits& limits) {
  const HttpEndpoint& first_hop = proxy != nullptr ? proxy->endpoint : endpoint;
  StatusOr<AddrInfoPtr> addresses = ResolveHost(first_hop, limits);
  if (!addresses.ok()) return addresses.status();
  StatusOr<int> fd = ConnectTo(first_hop, addresses->get(), limits);
  if (!fd.ok()) {
    if (proxy == nullptr) return fd.status();
    return Status(fd.status().code(), "proxy " + fd.status().message());
  }
  std::unique_ptr<HttpConnection> c(
      new HttpConnection(*fd, KeyFor(endpoint, proxy, ctx.get(), verify)));
  if (proxy != nullptr && endpoint.https) {
    if (Status s = c->Tunnel(endpoint, *proxy, limits); !s.ok()) return s;
  }
  if (endpoint.https) {
    c->ctx_ = std::move(ctx);
    if (Status s = c->Handshake(endpoint, verify, limits); !s.ok()) return s;
  }
  return c;
}

Status HttpConnection::Handshake(const HttpEndpoint& endpoint, bool verify,
                                 const IoLimits& limits) {
  ssl_ = SSL_new(ctx_.get());
  BIO* bio = SocketBioMethod() != nullptr ? BIO_new(SocketBioMethod()) : nullptr;
  if (ssl_ == nullptr || bio == nullptr) {
    BIO_free(bio);
    return InternalError("TLS: " + OpenSslError("SSL_new failed"));
  }
  BIO_set_data(bio, reinterpret_cast<void*>(static_cast<intptr_t>(fd_)));
  SSL_set_bio(ssl_, bio, bio);  // ssl_ owns it
  const bool ip = IsIpAddress(endpoint.host);
  // SNI for a name only (RFC 6066: never an address).
  if (!ip) SSL_set_tlsext_host_name(ssl_, endpoint.host.c_str());
  if (verify) {
    // The name against the certificate's DNS names, an address against its
    // IP addresses (in-cluster the API server is an IP).
    X509_VERIFY_PARAM* param = SSL_get0_param(ssl_);
    X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
    const int set = ip ? X509_VERIFY_PARAM_set1_ip_asc(param, endpoint.host.c_str())
                       : X509_VERIFY_PARAM_set1_host(param, endpoint.host.c_str(), 0);
    if (set != 1) return InternalError("TLS: cannot check the name " + endpoint.host);
  }
  for (;;) {
    ERR_clear_error();
    const int rc = SSL_connect(ssl_);
    if (rc == 1) break;
    const int error = SSL_get_error(ssl_, rc);
    if (error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE) {
      Status waited = WaitFor(error == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, limits);
      if (!waited.ok()) {
        return Status(waited.code(), "TLS handshake with " + endpoint.host_header + ": " +
                                         waited.message());
      }
      continue;
    }
    const long verdict = SSL_get_verify_result(ssl_);  // NOLINT(runtime/int)
    if (verify && verdict != X509_V_OK) {
      return Status(StatusCode::kUnauthenticated,
                    "server certificate not trusted: " +
                        std::string(X509_verify_cert_error_string(verdict)));
    }
    return UnavailableError("TLS handshake with " + endpoint.host_header + " failed: " +
                            OpenSslError(error == SSL_ERROR_SYSCALL ? "connection closed"
                                                                    : "protocol error"));
  }
  return OkStatus();
}

Status HttpConnection::Tunnel(const HttpEndpoint& endpoint, const HttpProxy& proxy,
                              const IoLimits& limits) {
  const std::string authority = (endpoint.host.find(':') != std::string::npos
                                     ? "[" + endpoint.host + "]"
                                     : endpoint.host) +
                                ":" + std::to_string(endpoint.port);
  std::string connect = "CONNECT " + authority + " HTTP/1.1\r\nHost: " + authority + "\r\n";
  if (!proxy.authorization.empty()) {
    connect += "Proxy-Authorization: " + proxy.authorization + "\r\n";
  }
  connect += "\r\n";
  const std::string where = "proxy " + proxy.endpoint.host_header + ", CONNECT " + authority;
  if (Status s = Write(connect, limits); !s.ok()) {
    return Status(s.code(), where + ": " + s.message());
  }
  // The answer to a CONNECT ends with its header section (RFC 9110 §9.3.6);
  // a proxy sends nothing more before the client's first TLS bytes, so
  // reading a byte at a time never takes one of the tunnel's.
  HttpResponseParser parser(/*head_request=*/true);
  while (!parser.complete()) {
    char byte;
    StatusOr<size_t> n = Read(&byte, 1, limits);
    if (!n.ok()) return Status(n.status().code(), where + ": " + n.status().message());
    Status parsed = *n == 0 ? parser.FinishAtEof() : parser.Feed(std::string_view(&byte, 1), {});
    if (!parsed.ok()) return Status(parsed.code(), where + ": " + parsed.message());
  }
  if (parser.status() < 200 || parser.status() > 299) {
    return UnavailableError(where + ": refused with HTTP " + std::to_string(parser.status()));
  }
  return OkStatus();
}

HttpConnection::~HttpConnection() {
  if (ssl_ != nullptr) {
    SSL_shutdown(ssl_);  // close_notify if the socket takes it now; never waits
    SSL_free(ssl_);
    ERR_clear_error();
  }
  close(fd_);
}

Status HttpConnection::WaitFor(short events, const IoLimits& limits) {
  return WaitFd(fd_, events, limits, last_byte_);
}

Status HttpConnection::Write(std::string_view bytes, const IoLimits& limits) {
  while (!bytes.empty()) {
    if (Status s = CheckLimits(limits, last_byte_); !s.ok()) return s;
    const int chunk = static_cast<int>(std::min<size_t>(bytes.size(), 1 << 30));
    if (ssl_ != nullptr) {
      ERR_clear_error();
      const int n = SSL_write(ssl_, bytes.data(), chunk);
      if (n > 0) {
        bytes.remove_prefix(static_cast<size_t>(n));
        continue;
      }
      const int error = SSL_get_error(ssl_, n);
      if (error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE) {
        if (Status s = WaitFor(error == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, limits); !s.ok()) {
          return s;
        }
        continue;
      }
      return UnavailableError("send failed: " + OpenSslError(std::strerror(errno)));
    }
    const ssize_t n = send(fd_, bytes.data(), static_cast<size_t>(chunk), MSG_NOSIGNAL);
    if (n > 0) {
      bytes.remove_prefix(static_cast<size_t>(n));
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
      if (Status s = WaitFor(POLLOUT, limits); !s.ok()) return s;
    } else {
      return UnavailableError(std::string("send failed: ") + std::strerror(errno));
    }
  }
  return OkStatus();
}

StatusOr<size_t> HttpConnection::Read(char* buffer, size_t size, const IoLimits& limits) {
  const int want = static_cast<int>(std::min<size_t>(size, 1 << 30));
  for (;;) {
    if (Status s = CheckLimits(limits, last_byte_); !s.ok()) return s;
    if (ssl_ != nullptr) {
      ERR_clear_error();
      const int n = SSL_read(ssl_, buffer, want);
      if (n > 0) {
        last_byte_ = SteadyClock::now();
        return static_cast<size_t>(n);
      }
      const int error = SSL_get_error(ssl_, n);
      if (error == SSL_ERROR_ZERO_RETURN) return size_t{0};
      if (error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE) {
        if (Status s = WaitFor(error == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, limits); !s.ok()) {
          return s;
        }
        continue;
      }
      // With SSL_OP_IGNORE_UNEXPECTED_EOF a close without close_notify is
      // SSL_ERROR_ZERO_RETURN; anything else is a broken connection.
      return UnavailableError("receive failed: " + OpenSslError(std::strerror(errno)));
    }
    const ssize_t n = recv(fd_, buffer, static_cast<size_t>(want), 0);
    if (n >= 0) {
      if (n > 0) last_byte_ = SteadyClock::now();
      return static_cast<size_t>(n);
    }
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
      if (Status s = WaitFor(POLLIN, limits); !s.ok()) return s;
      continue;
    }
    return UnavailableError(std::string("receive failed: ") + std::strerror(errno));
  }
}

bool HttpConnection::LooksReusable() {
  // Idle, a healthy connection has nothing to read: readable means closed
  // (EOF, a reset) or bytes nobody asked for, except TLS records that carry
  // no data (a TLS 1.3 server's session tickets, sent after the handshake).
  pollfd p{fd_, POLLIN, 0};
  if (poll(&p, 1, 0) == 0) return true;
  if (ssl_ == nullptr) return false;
  char byte;
  ERR_clear_error();
  const int n = SSL_read(ssl_, &byte, 1);
  const bool only_records = n <= 0 && SSL_get_error(ssl_, n) == SSL_ERROR_WANT_READ;
  ERR_clear_error();
  return only_records && poll(&p, 1, 0) == 0;
}

}  // namespace hcudp::kube
