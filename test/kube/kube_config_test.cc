// Kubeconfig parsing and in-cluster configuration.
#include "hcudp/kube_config.h"

#include <boost/test/unit_test.hpp>
#include <string>

#include "testing/testutil.h"

namespace hcudp {
namespace {

using testing::TempDir;
using testing::WriteFile;

const char kCaPem[] = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
const char kKeyPem[] = "-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n";
// base64 of kCaPem and kKeyPem.
const char kCaData[] =
    "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUIKLS0tLS1FTkQgQ0VSVElGSUNBVEUtLS0tLQo=";
const char kKeyData[] =
    "LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0tCk1JSUUKLS0tLS1FTkQgUFJJVkFURSBLRVktLS0tLQo=";

// A kubeconfig with one context "c" → cluster "k" and user "u".
std::string Kubeconfig(const std::string& cluster, const std::string& user) {
  return "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
         "clusters:\n- name: k\n  cluster:\n" +
         cluster +
         "contexts:\n- name: c\n  context: {cluster: k, user: u}\n"
         "users:\n- name: u\n  user:\n" +
         user;
}

BOOST_AUTO_TEST_SUITE(kubeconfig)

BOOST_AUTO_TEST_CASE(inline_data_and_token_are_read) {
  StatusOr<KubeConfig> c =
      ParseKubeconfig(Kubeconfig("    server: https://10.0.0.1:6443/\n"
                                 "    certificate-authority-data: " +
                                     std::string(kCaData) + "\n",
                                 "    token: abc\n"
                                 "    client-certificate-data: " +
                                     std::string(kCaData) +
                                     "\n"
                                     "    client-key-data: " +
                                     std::string(kKeyData) + "\n"));
  BOOST_REQUIRE_MESSAGE(c.ok(), c.status().ToString());
  BOOST_TEST(c->server == "https://10.0.0.1:6443");
  BOOST_TEST(c->ca_pem == kCaPem);
  BOOST_TEST(c->client_cert_pem == kCaPem);
  BOOST_TEST(c->client_key_pem == kKeyPem);
  BOOST_TEST(c->token == "abc");
  BOOST_TEST(!c->insecure_skip_tls_verify);
}

BOOST_AUTO_TEST_CASE(file_references_resolve_against_the_kubeconfig_directory) {
  TempDir dir;
  WriteFile(dir.Join("pki/ca.crt"), kCaPem);
  WriteFile(dir.Join("pki/client.crt"), kCaPem);
  WriteFile(dir.Join("pki/client.key"), kKeyPem);
  WriteFile(dir.Join("config"),
            Kubeconfig("    server: https://k:443\n    certificate-authority: pki/ca.crt\n",
                       "    client-certificate: pki/client.crt\n"
                       "    client-key: " +
                           dir.Join("pki/client.key") +
                           "\n"
                           "    tokenFile: pki/token\n"));
  StatusOr<KubeConfig> c = LoadKubeconfig(dir.Join("config"));
  BOOST_REQUIRE_MESSAGE(c.ok(), c.status().ToString());
  BOOST_TEST(c->source == dir.Join("config"));
  BOOST_TEST(c->ca_pem == kCaPem);
  BOOST_TEST(c->client_key_pem == kKeyPem);
  BOOST_TEST(c->token_file == dir.Join("pki/token"));
}

BOOST_AUTO_TEST_CASE(insecure_skip_tls_verify_only_when_set_true) {
  StatusOr<KubeConfig> on = ParseKubeconfig(
      Kubeconfig("    server: https://k\n    insecure-skip-tls-verify: true\n", "    token: t\n"));
  BOOST_REQUIRE(on.ok());
  BOOST_TEST(on->insecure_skip_tls_verify);
  StatusOr<KubeConfig> off = ParseKubeconfig(Kubeconfig("    server: https://k\n", "    {}\n"));
  BOOST_REQUIRE_MESSAGE(off.ok(), off.status().ToString());
  BOOST_TEST(!off->insecure_skip_tls_verify);
}

BOOST_AUTO_TEST_CASE(current_context_selects_cluster_and_user) {
  StatusOr<KubeConfig> c = ParseKubeconfig(
      "current-context: second\n"
      "clusters:\n- {name: a, cluster: {server: 'https://a'}}\n"
      "- {name: b, cluster: {server: 'https://b'}}\n"
      "contexts:\n- {name: first, context: {cluster: a, user: x}}\n"
      "- {name: second, context: {cluster: b, user: y}}\n"
      "users:\n- {name: x, user: {token: tx}}\n- {name: y, user: {token: ty}}\n");
  BOOST_REQUIRE_MESSAGE(c.ok(), c.status().ToString());
  BOOST_TEST(c->server == "https://b");
  BOOST_TEST(c->token == "ty");
}

struct BadCase {
  const char* what;
  std::string yaml;
  StatusCode code;
  const char* names;  // must occur in the message
};

BOOST_AUTO_TEST_CASE(each_invalid_field_is_named) {
  const std::string ok_cluster = "    server: https://k\n";
  const std::string ok_user = "    token: t\n";
  const BadCase cases[] = {
      {"not yaml", "clusters: [\n", StatusCode::kInvalidArgument, "not YAML"},
      {"not a map", "- a\n- b\n", StatusCode::kInvalidArgument, "not a YAML map"},
      {"no current context", "clusters: []\n", StatusCode::kInvalidArgument, "current-context"},
      {"unknown context", "current-context: zz\ncontexts: []\n", StatusCode::kInvalidArgument,
       "current-context"},
      {"unknown top-level field", Kubeconfig(ok_cluster, ok_user) + "colour: red\n",
       StatusCode::kInvalidArgument, "colour"},
      {"missing server",
       Kubeconfig("    certificate-authority-data: " + std::string(kCaData) + "\n", ok_user),
       StatusCode::kInvalidArgument, "clusters[0].cluster.server"},
      {"server not a URL", Kubeconfig("    server: k8s:443\n", ok_user),
       StatusCode::kInvalidArgument, "clusters[0].cluster.server"},
      {"bad base64",
       Kubeconfig("    server: https://k\n    certificate-authority-data: '%%'\n", ok_user),
       StatusCode::kInvalidArgument, "clusters[0].cluster.certificate-authority-data"},
      {"ca not PEM",
       Kubeconfig("    server: https://k\n    certificate-authority-data: aGVsbG8=\n", ok_user),
       StatusCode::kInvalidArgument, "certificate-authority-data: not PEM"},
      {"ca file missing",
       Kubeconfig("    server: https://k\n    certificate-authority: /nope\n", ok_user),
       StatusCode::kNotFound, "clusters[0].cluster.certificate-authority"},
      {"insecure not bool",
       Kubeconfig(ok_cluster + "    insecure-skip-tls-verify: maybe\n", ok_user),
       StatusCode::kInvalidArgument, "insecure-skip-tls-verify"},
      {"key without cert",
       Kubeconfig(ok_cluster, "    client-key-data: " + std::string(kKeyData) + "\n"),
       StatusCode::kInvalidArgument, "users[0].user.client-certificate"},
      {"key data and file",
       Kubeconfig(ok_cluster,
                  "    client-key-data: " + std::string(kKeyData) + "\n    client-key: /k\n"),
       StatusCode::kInvalidArgument, "users[0].user.client-key"},
      {"token not a string", Kubeconfig(ok_cluster, "    token: [a]\n"),
       StatusCode::kInvalidArgument, "users[0].user.token"},
      {"unknown user field", Kubeconfig(ok_cluster, "    tokn: t\n"), StatusCode::kInvalidArgument,
       "users[0].user.tokn"},
      {"exec plugin", Kubeconfig(ok_cluster, "    exec: {command: aws}\n"),
       StatusCode::kUnimplemented, "users[0].user.exec"},
      {"auth provider", Kubeconfig(ok_cluster, "    auth-provider: {name: gcp}\n"),
       StatusCode::kUnimplemented, "users[0].user.auth-provider"},
      {"duplicate cluster",
       "current-context: c\nclusters:\n- {name: k, cluster: {server: "
       "'https://a'}}\n- {name: k, cluster: {server: 'https://b'}}\n",
       StatusCode::kInvalidArgument, "clusters[1].name"},
      {"context names missing user",
       "current-context: c\nclusters: [{name: k, cluster: {server: 'https://a'}}]\n"
       "contexts: [{name: c, context: {cluster: k, user: nobody}}]\n",
       StatusCode::kInvalidArgument, "contexts[0].context.user"},
  };
  for (const BadCase& c : cases) {
    StatusOr<KubeConfig> r = ParseKubeconfig(c.yaml);
    BOOST_TEST_CONTEXT(c.what) {
      BOOST_REQUIRE(!r.ok());
      BOOST_TEST(StatusCodeName(r.status().code()) == StatusCodeName(c.code));
      BOOST_TEST(r.status().message().find(c.names) != std::string::npos,
                 r.status().message() << " should name " << c.names);
    }
  }
}

BOOST_AUTO_TEST_CASE(secrets_never_appear_in_errors) {
  StatusOr<KubeConfig> r =
      ParseKubeconfig(Kubeconfig("    server: https://k\n",
                                 "    token: s3cr3t-token\n    client-key-data: "
                                 "czNjcjN0LWtleQ==\n"));  // "s3cr3t-key", not PEM
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST(r.status().message().find("s3cr3t") == std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(in_cluster)

BOOST_AUTO_TEST_CASE(service_account_files_and_environment_build_the_config) {
  TempDir dir;
  WriteFile(dir.Join("token"), "tok\n");
  WriteFile(dir.Join("ca.crt"), kCaPem);
  InClusterSource src{"10.96.0.1", "443", dir.Join("token"), dir.Join("ca.crt")};
  StatusOr<KubeConfig> c = LoadInClusterConfig(src);
  BOOST_REQUIRE_MESSAGE(c.ok(), c.status().ToString());
  BOOST_TEST(c->server == "https://10.96.0.1:443");
  BOOST_TEST(c->ca_pem == kCaPem);
  BOOST_TEST(c->token_file == dir.Join("token"));
  BOOST_TEST(c->source == "in-cluster");
}

BOOST_AUTO_TEST_CASE(ipv6_service_host_is_bracketed) {
  TempDir dir;
  WriteFile(dir.Join("token"), "tok");
  WriteFile(dir.Join("ca.crt"), kCaPem);
  StatusOr<KubeConfig> c =
      LoadInClusterConfig({"fd00::1", "443", dir.Join("token"), dir.Join("ca.crt")});
  BOOST_REQUIRE(c.ok());
  BOOST_TEST(c->server == "https://[fd00::1]:443");
}

BOOST_AUTO_TEST_CASE(missing_token_is_not_found) {
  TempDir dir;
  WriteFile(dir.Join("ca.crt"), kCaPem);
  StatusOr<KubeConfig> c =
      LoadInClusterConfig({"10.0.0.1", "443", dir.Join("token"), dir.Join("ca.crt")});
  BOOST_REQUIRE(!c.ok());
  BOOST_TEST(StatusCodeName(c.status().code()) == "NOT_FOUND");
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(resolution_order)

BOOST_AUTO_TEST_CASE(explicit_path_wins_over_in_cluster) {
  TempDir dir;
  WriteFile(dir.Join("token"), "tok");
  WriteFile(dir.Join("ca.crt"), kCaPem);
  WriteFile(dir.Join("kc"), Kubeconfig("    server: https://explicit\n", "    token: t\n"));
  StatusOr<KubeConfig> c = ResolveKubeConfig(
      dir.Join("kc"), {"10.0.0.1", "443", dir.Join("token"), dir.Join("ca.crt")}, dir.path());
  BOOST_REQUIRE_MESSAGE(c.ok(), c.status().ToString());
  BOOST_TEST(c->server == "https://explicit");
}

BOOST_AUTO_TEST_CASE(in_cluster_wins_over_home) {
  TempDir dir;
  WriteFile(dir.Join("token"), "tok");
  WriteFile(dir.Join("ca.crt"), kCaPem);
  WriteFile(dir.Join(".kube/config"), Kubeconfig("    server: https://home\n", "    token: t\n"));
  StatusOr<KubeConfig> c =
      ResolveKubeConfig("", {"10.0.0.1", "443", dir.Join("token"), dir.Join("ca.crt")}, dir.path());
  BOOST_REQUIRE(c.ok());
  BOOST_TEST(c->source == "in-cluster");
}

BOOST_AUTO_TEST_CASE(home_config_is_the_last_resort) {
  TempDir dir;
  WriteFile(dir.Join(".kube/config"), Kubeconfig("    server: https://home\n", "    token: t\n"));
  InClusterSource none;
  none.service_host = "";
  ::unsetenv("KUBERNETES_SERVICE_HOST");
  StatusOr<KubeConfig> c = ResolveKubeConfig("", none, dir.path());
  BOOST_REQUIRE_MESSAGE(c.ok(), c.status().ToString());
  BOOST_TEST(c->server == "https://home");
}

BOOST_AUTO_TEST_CASE(nothing_configured_is_failed_precondition) {
  TempDir dir;
  ::unsetenv("KUBERNETES_SERVICE_HOST");
  StatusOr<KubeConfig> c = ResolveKubeConfig("", {}, dir.path());
  BOOST_REQUIRE(!c.ok());
  BOOST_TEST(StatusCodeName(c.status().code()) == "FAILED_PRECONDITION");
}

BOOST_AUTO_TEST_CASE(first_existing_file_of_a_kubeconfig_list_is_used) {
  TempDir dir;
  WriteFile(dir.Join("b"), Kubeconfig("    server: https://b\n", "    token: t\n"));
  StatusOr<KubeConfig> c = ResolveKubeConfig(dir.Join("a") + ":" + dir.Join("b"), {}, "");
  BOOST_REQUIRE_MESSAGE(c.ok(), c.status().ToString());
  BOOST_TEST(c->server == "https://b");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp
