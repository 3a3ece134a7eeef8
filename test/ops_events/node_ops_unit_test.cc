// NodeOps in process (hcudp/node_ops.h): which API client the labels
// and events use, and what --events=auto|true and --node-labels=node do when
// the credential files do not work. No API server is needed: nothing starts.
#include <boost/test/unit_test.hpp>

#include "hcudp/node_ops.h"
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

// A token file that cannot be read would fail every call: auto runs
// without events, true and node fail at start-up naming the file.
BOOST_AUTO_TEST_CASE(unreadable_token_file_auto_runs_without_events_true_fails) {
  TempDir dir;
  const std::string kubeconfig = Kubeconfig(dir, "");  // the token file is missing
  auto automatic = NodeOps::New(EventsOptions(EventsMode::kAuto, kubeconfig));
  BOOST_REQUIRE_MESSAGE(automatic.ok(), automatic.status().ToString());
  BOOST_TEST(!(*automatic)->events_on());
  BOOST_TEST((*automatic)->client() == nullptr);

  auto strict = NodeOps::New(EventsOptions(EventsMode::kTrue, kubeconfig));
  BOOST_REQUIRE(!strict.ok());
  BOOST_TEST(IsInputError(strict.status()), strict.status().ToString());
  BOOST_TEST(strict.status().message().find("--events=true: ") == 0u, strict.status().message());
  BOOST_TEST(strict.status().message().find(dir.Join("token")) != std::string::npos,
             strict.status().message());

  Options node;
  node.node_labels = NodeLabelMode::kNode;
  node.node_name = "n1";
  node.kubeconfig = kubeconfig;
  auto labels = NodeOps::New(node);
  BOOST_REQUIRE(!labels.ok());
  BOOST_TEST(labels.status().message().find(dir.Join("token")) != std::string::npos,
             labels.status().message());
}

BOOST_AUTO_TEST_CASE(bad_kubeconfig_or_no_node_name_auto_runs_without_events) {
  TempDir dir;
  testing::WriteFile(dir.Join("kubeconfig"), "clusters: [not a kubeconfig\n");
  auto bad = NodeOps::New(EventsOptions(EventsMode::kAuto, dir.Join("kubeconfig")));
  BOOST_REQUIRE_MESSAGE(bad.ok(), bad.status().ToString());
  BOOST_TEST(!(*bad)->events_on());
  auto strict = NodeOps::New(EventsOptions(EventsMode::kTrue, dir.Join("kubeconfig")));
  BOOST_TEST(!strict.ok());

  Options no_name = EventsOptions(EventsMode::kAuto, Kubeconfig(dir, "t0k3n"));
  no_name.node_name.clear();
  auto nameless = NodeOps::New(no_name);
  BOOST_REQUIRE(nameless.ok());
  BOOST_TEST(!(*nameless)->events_on());
  BOOST_TEST((*nameless)->client() == nullptr);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp::daemon
