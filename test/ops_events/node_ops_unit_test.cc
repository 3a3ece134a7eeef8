// NodeOps in process (hcu-dp-daemon/node_ops.h): which API client the labels
// and events use, and what --events=auto|true and --node-labels=node do when
// the credential files do not work. No API server is needed: nothing starts.
#include <boost/test/unit_test.hpp>

#include "node_ops.h"
#include "testing/testutil.h"

namespace hcudp::daemon {
namespace {

using testing::TempDir;

std::unique_ptr<KubeClient> SomeClient() {
  KubeConfig c;
  c.source = "test";
  c.server = "https://127.0.0.1:1";
  return std::move(KubeClient::New(c).value());
}

// A kubeconfig naming a token file, which `token` (if not empty) fills.
std::string Kubeconfig(const TempDir& dir, const std::string& token) {
  const std::string token_file = dir.Join("token");
  if (!token.empty()) testing::WriteFile(token_file, token);
  const std::string path = dir.Join("kubeconfig");
  testing::WriteFile(path,
                     "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
                     "clusters: [{name: k, cluster: {server: \"https://127.0.0.1:1\", "
                     "insecure-skip-tls-verify: true}}]\n"
                     "users: [{name: u, user: {tokenFile: " +
                         token_file +
                         "}}]\n"
                         "contexts: [{name: c, context: {cluster: k, user: u}}]\n");
  return path;
}

Options EventsOptions(EventsMode mode, const std::string& kubeconfig) {
  Options o;
  o.events = mode;
  o.node_name = "n1";
  o.kubeconfig = kubeconfig;
  return o;
}

BOOST_AUTO_TEST_SUITE(node_ops)

// HAMi and DRA hand their client over: NodeOps builds none of its own and
// reads no credentials (the kubeconfig here does not even exist).
BOOST_AUTO_TEST_CASE(uses_the_mode_client_and_builds_none) {
  std::unique_ptr<KubeClient> shared = SomeClient();
  Options o = EventsOptions(EventsMode::kTrue, "/nonexistent/kubeconfig");
  o.node_labels = NodeLabelMode::kNode;
  auto ops = NodeOps::New(o, shared.get());
  BOOST_REQUIRE_MESSAGE(ops.ok(), ops.status().ToString());
  BOOST_TEST((*ops)->events_on());
  BOOST_TEST((*ops)->labels_on());
  BOOST_TEST((*ops)->client() == shared.get());
}

BOOST_AUTO_TEST_CASE(builds_its_own_client_when_the_mode_has_none) {
  TempDir dir;
  auto ops = NodeOps::New(EventsOptions(EventsMode::kTrue, Kubeconfig(dir, "t0k3n")));
  BOOST_REQUIRE_MESSAGE(ops.ok(), ops.status().ToString());
  BOOST_TEST((*ops)->events_on());
  BOOST_TEST((*ops)->client() != nullptr);
  // Nothing on: no client at all.
  Options off;
  auto none = NodeOps::New(off);
  BOOST_REQUIRE(none.ok());
  BOOST_TEST((*none)->client() == nullptr);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp::daemon
