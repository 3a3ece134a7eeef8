// FakeApiServer: runs test/fake_apiserver/fake_apiserver.py as a child
// process for one test (or suite), and talks to its control endpoints. It
// plays the kube-apiserver (and, through the normal API, the scheduler).
#ifndef HCUDP_TEST_FAKE_APISERVER_FAKE_APISERVER_PROCESS_H_
#define HCUDP_TEST_FAKE_APISERVER_FAKE_APISERVER_PROCESS_H_

#include <sys/types.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "testing/testutil.h"

namespace hcudp::testing {

struct FakeApiServerOptions {
  int event_window = 1000;   // watch events retained (older RV → 410)
  int watch_timeout_s = 60;  // longest watch stream
  // When > 0, each watch's longest duration is drawn from
  // [watch_timeout_min_s, watch_timeout_s] (a real server: 1800 to 3600).
  int watch_timeout_min_s = 0;
  int bookmark_interval_ms = 500;  // BOOKMARK cadence when requested
};

// What the fake saw: one entry per API request (control requests excluded).
struct FakeRequest {
  std::string method;  // GET, POST, PUT, PATCH, DELETE
  std::string path;    // /api/v1/nodes/n1
  std::string query;   // "watch=true&resourceVersion=5"
  std::string content_type;
  bool watch = false;
  int peer_port = 0;  // the client's TCP port: one per connection
  // When it arrived: CLOCK_MONOTONIC seconds, steady_clock's clock.
  double t = 0;
  std::string user;      // the user of its token (AddTokens); "" for token()
  std::string verb;      // get list watch create update patch delete deletecollection
  std::string resource;  // "nodes", "nodes/status", "pods", "events", "discovery", ...
  int status = 0;        // the HTTP status answered (0: none yet, e.g. a hung request)
};

// The server's clock (CLOCK_MONOTONIC) as steady_clock reads it on Linux.
double MonotonicSeconds();

struct FakeResponse {
  long status = 0;  // NOLINT(runtime/int)
  std::string body;
};

class FakeApiServer {
 public:
  // Starts the server and waits until it is ready (BOOST_REQUIRE, 20 s).
  explicit FakeApiServer(FakeApiServerOptions options = {});
  // SIGTERM, then SIGKILL after 5 s; waits for the child.
  ~FakeApiServer();
  FakeApiServer(const FakeApiServer&) = delete;
  FakeApiServer& operator=(const FakeApiServer&) = delete;

  int port() const { return port_; }
  std::string server_url() const;            // https://127.0.0.1:<port>
  std::string kubeconfig_path() const;       // bearer-token auth
  std::string kubeconfig_cert_path() const;  // client-certificate auth
  std::string ca_file() const;               // the CA that signed the server
  std::string wrong_ca_file() const;         // an unrelated CA
  std::string client_cert_file() const;
  std::string client_key_file() const;
  std::string token_file() const;  // the server reads it per request
  std::string token() const;
  // The server accepts only `token` from now on.
  void SetToken(const std::string& token);

  // One HTTPS request with the current token; never retried.
  FakeResponse Request(const std::string& method, const std::string& path,
                       const std::string& body = "",
                       const std::string& content_type = "application/json") const;
  // Like Request, but BOOST_REQUIREs a 2xx answer and returns the body.
  std::string MustRequest(const std::string& method, const std::string& path,
                          const std::string& body = "",
                          const std::string& content_type = "application/json") const;

  // Fault injection: {"method","path","query","status","count","delay_ms",
  // "retry_after","user_agent","hang","stall"} (regexes; status 0 = delay only;
  // count -1 = every request; see fake_apiserver.py).
  void AddFault(const std::string& fault_json) const;
  // From now on every request of our KubeClient (User-Agent
  // hcu-device-plugin/...) with this method (exact; "" any) and a path
  // matching `path_regex` ("" any) is accepted and never answered; the
  // test's own Request()s are spared. ClearFaults() lets them go.
  void NeverAnswer(const std::string& method = "", const std::string& path_regex = "") const;
  void ClearFaults() const;
  std::vector<FakeRequest> Requests() const;
  // Only those that arrived at or after `since` (MonotonicSeconds()).
  std::vector<FakeRequest> RequestsSince(double since) const;
  // These tokens authenticate too; their requests carry the user's name.
  void AddTokens(const std::map<std::string, std::string>& token_to_user) const;
  // Cuts every open watch (no last chunk: a server going away) and answers
  // every API request 503 for `seconds`. Returns when it ends. `restart`:
  // the server comes back as a restarted one, a watch from any RV before the
  // outage getting 410 Gone (fake_fleet.py).
  double StartOutage(double seconds, bool restart = false) const;
  // Open watch streams per user.
  std::map<std::string, int> OpenWatches() const;
  void ClearRequests() const;
  // Ends every open watch stream (clients re-watch).
  void CloseWatches() const;
  // Forgets the event history: watches from any older RV get 410.
  void Compact() const;

 private:
  TempDir dir_;
  pid_t pid_ = -1;
  int port_ = 0;
};

// Number of recorded requests with this method whose path equals `path` and
// that are (or are not) watches.
int CountRequests(const std::vector<FakeRequest>& requests, const std::string& method,
                  const std::string& path, bool watch = false);

}  // namespace hcudp::testing

#endif  // HCUDP_TEST_FAKE_APISERVER_FAKE_APISERVER_PROCESS_H_
