// What a TLS request reads from disk: with a CA given, that CA alone, never
// the system's CA directory. The libcurl on GnuTLS this client once used
// parsed every file there (/etc/ssl/certs, ~450 files) for each connection
// unless told not to: ~65 ms of CPU a request, and minutes per test run
// under ASan (BENCHMARKS.md, "GnuTLS start cost"); the guard stays.
// The bytes this process read come from /proc/self/io (`rchar`).
#include <dirent.h>
#include <openssl/x509.h>
#include <sys/stat.h>

#include <boost/test/unit_test.hpp>
#include <cstdint>
#include <functional>
#include <string>

#include "kube/http_request.h"
#include "kube/kube_test_util.h"

namespace hcudp {
namespace {

// The system's CA directory, as OpenSSL names it (/usr/lib/ssl/certs, a
// link to /etc/ssl/certs on Debian).
std::string SystemCaDirectory() { return X509_get_default_cert_dir(); }

// Bytes in the regular files (followed through symlinks) of `dir`.
uint64_t BytesIn(const std::string& dir) {
  uint64_t total = 0;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return 0;
  while (const dirent* e = readdir(d)) {
    struct stat st {};
    if (stat((dir + "/" + e->d_name).c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
      total += static_cast<uint64_t>(st.st_size);
    }
  }
  closedir(d);
  return total;
}

uint64_t BytesReadSoFar() {
  const std::string io = testing::ReadFile("/proc/self/io");
  const size_t at = io.find("rchar:");
  BOOST_REQUIRE_MESSAGE(at != std::string::npos, "/proc/self/io has no rchar: " << io);
  return std::stoull(io.substr(at + 6));
}

// Without a CA directory worth reading, these tests could not tell: they
// need the system's CA certificates (Debian's ca-certificates; the build
// image has them).
constexpr uint64_t kLeast = 128 * 1024;
void RequireACaDirectoryToAvoid() {
  const std::string dir = SystemCaDirectory();
  const uint64_t bytes = dir.empty() ? 0 : BytesIn(dir);
  BOOST_REQUIRE_MESSAGE(bytes >= kLeast, "the system's CA directory '" << dir << "' holds " << bytes
                                                                    << " bytes, under " << kLeast
                                                                    << ": install ca-certificates");
}

// Three requests may read the CA, the token and a little more; reading the
// CA directory once would be over kLeast.
constexpr uint64_t kAllowed = 32 * 1024;
constexpr int kRequests = 3;

// Bytes this process read while `request` ran kRequests times.
uint64_t BytesReadBy(const std::function<void()>& request) {
  const uint64_t before = BytesReadSoFar();
  for (int i = 0; i < kRequests; ++i) request();
  return BytesReadSoFar() - before;
}

BOOST_AUTO_TEST_SUITE(kube_tls_reads)

BOOST_AUTO_TEST_CASE(the_kube_client_reads_only_the_given_ca) {
  RequireACaDirectoryToAvoid();
  testing::FakeApiServer& api = testing::SharedApiServer();
  kube::HttpRequest request;
  request.url = api.server_url() + "/api/v1/nodes";
  request.headers = {"Authorization: Bearer " + api.token()};
  kube::TlsMaterial tls;
  tls.ca_pem = testing::ReadFile(api.ca_file());
  kube::HttpChannelPool pool(0);  // a new connection for each request
  const uint64_t read = BytesReadBy([&] {
    StatusOr<kube::HttpResponse> r = pool.Perform(tls, request);
    BOOST_REQUIRE_MESSAGE(r.ok(), r.status().ToString());
    BOOST_REQUIRE(r->status == 200);
  });
  BOOST_TEST(read < kAllowed, kRequests << " requests read " << read << " bytes");
}

// The fake API server's own client (FakeApiServer::Request), which every
// daemon test uses to set up and check the API's objects.
BOOST_AUTO_TEST_CASE(the_fake_servers_client_reads_only_its_ca) {
  RequireACaDirectoryToAvoid();
  testing::FakeApiServer& api = testing::SharedApiServer();
  const uint64_t read =
      BytesReadBy([&] { BOOST_REQUIRE(api.Request("GET", "/api/v1/nodes").status == 200); });
  BOOST_TEST(read < kAllowed, kRequests << " requests read " << read << " bytes");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp
