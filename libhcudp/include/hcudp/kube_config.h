// KubeConfig: where the Kubernetes API server is and how to authenticate to
// it, from a kubeconfig file or from the pod's service account (in-cluster).
//
// Resolution order (DESIGN §3, --kubeconfig / KUBECONFIG): an explicit path
// wins; else the in-cluster service account when KUBERNETES_SERVICE_HOST is
// set; else $HOME/.kube/config.
//
// Credentials (token, client key) live only in memory and in the files named
// here; no function of this library logs or returns them in a Status message.
#ifndef HCUDP_KUBE_CONFIG_H_
#define HCUDP_KUBE_CONFIG_H_

#include <string>
#include <string_view>

#include "hcudp/export.h"
#include "hcudp/status.h"

namespace hcudp {

struct KubeConfig {
  // Where this configuration came from, for messages: "in-cluster" or the
  // kubeconfig path (or "<inline>" for ParseKubeconfig).
  std::string source;

  // Base URL of the API server, "https://10.0.0.1:443", without a trailing '/'.
  std::string server;

  // PEM bundle of CAs that may sign the server certificate. Empty: the system
  // trust store. Verification is always on unless insecure_skip_tls_verify.
  std::string ca_pem;
  // Only when the kubeconfig sets `insecure-skip-tls-verify: true` explicitly.
  bool insecure_skip_tls_verify = false;

  // TLS client certificate and key (PEM). Both or neither.
  std::string client_cert_pem;
  std::string client_key_pem;  // secret

  // Bearer token. When token_file is set it wins and is re-read whenever the
  // file changes (service-account token rotation); `token` is then unused.
  std::string token;  // secret
  std::string token_file;
};

// Parses kubeconfig YAML and selects its current context. Relative file paths
// (certificate-authority, client-certificate, client-key, tokenFile) resolve
// against `base_dir`; referenced certificate files are read now. Errors are
// InvalidArgument naming the field ("users[0].user.client-key-data: not
// base64"); exec and auth-provider plugins are Unimplemented.
HCUDP_EXPORT StatusOr<KubeConfig> ParseKubeconfig(std::string_view yaml,
                                                  std::string_view base_dir = "");

// Reads and parses a kubeconfig file (relative paths resolve against its
// directory). NotFound when the file does not exist.
HCUDP_EXPORT StatusOr<KubeConfig> LoadKubeconfig(const std::string& path);

// Where the in-cluster configuration is read from; tests point these at a
// temporary directory. Empty host/port fields mean "read the environment".
struct InClusterSource {
  std::string service_host;  // default: $KUBERNETES_SERVICE_HOST
  std::string service_port;  // default: $KUBERNETES_SERVICE_PORT
  std::string token_file = "/var/run/secrets/kubernetes.io/serviceaccount/token";
  std::string ca_file = "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt";
};

// The pod's service account: server https://<host>:<port> (IPv6 bracketed),
// the CA read now, the token file re-read on change. FailedPrecondition when
// not running in a cluster (no service host), NotFound for a missing file.
HCUDP_EXPORT StatusOr<KubeConfig> LoadInClusterConfig(const InClusterSource& source = {});

// Applies the resolution order above. `explicit_path` is --kubeconfig (the
// caller folds in $KUBECONFIG, flag > env); `home` defaults to $HOME.
HCUDP_EXPORT StatusOr<KubeConfig> ResolveKubeConfig(const std::string& explicit_path,
                                                    const InClusterSource& in_cluster = {},
                                                    const std::string& home = "");

}  // namespace hcudp

#endif  // HCUDP_KUBE_CONFIG_H_
