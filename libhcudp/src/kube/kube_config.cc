// Kubeconfig parsing (yaml-cpp) and in-cluster configuration.
#include "hcudp/kube_config.h"

#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <vector>

#include "hcudp_internal/file_util.h"
#include "kube/base64.h"

namespace hcudp {
namespace {

namespace fs = std::filesystem;

// Keys of the kubeconfig schema that we accept but do not use, and keys whose
// meaning we cannot honour (an ignored proxy or impersonation would silently
// change who talks to whom).
const std::set<std::string> kIgnoredKeys = {"extensions", "preferences", "namespace",
                                            "disable-compression"};
const std::set<std::string> kUnsupportedKeys = {
    "exec",   "auth-provider", "username",      "password",  "as",
    "as-uid", "as-groups",     "as-user-extra", "proxy-url", "tls-server-name"};

Status FieldError(const std::string& field, const std::string& what) {
  return InvalidArgumentError("kubeconfig field " + field + ": " + what);
}

// Checks that every key of `map` is in `known` (or ignorable); names the
// first one that is not.
Status CheckKeys(const YAML::Node& map, const std::string& where,
                 const std::set<std::string>& known) {
  for (const auto& kv : map) {
    if (!kv.first.IsScalar()) return FieldError(where, "a key is not a string");
    std::string key = kv.first.Scalar();
    std::string field = where.empty() ? key : where + "." + key;
    if (kUnsupportedKeys.count(key) != 0) {
      return UnimplementedError("kubeconfig field " + field +
                                ": not supported (use a token, tokenFile or client certificate)");
    }
    if (known.count(key) == 0 && kIgnoredKeys.count(key) == 0) {
      return FieldError(field, "unknown field");
    }
  }
  return OkStatus();
}

StatusOr<std::string> ScalarField(const YAML::Node& map, const std::string& where,
                                  const std::string& key) {
  YAML::Node n = map[key];
  if (!n || n.IsNull()) return std::string();
  if (!n.IsScalar()) return FieldError(where.empty() ? key : where + "." + key, "must be a string");
  return n.Scalar();
}

StatusOr<bool> BoolField(const YAML::Node& map, const std::string& where, const std::string& key) {
  HCUDP_ASSIGN_OR_RETURN(std::string v, ScalarField(map, where, key));
  if (v.empty() || v == "false") return false;
  if (v == "true") return true;
  return FieldError(where + "." + key, "must be true or false, got \"" + v + "\"");
}

struct NamedEntry {
  std::string field;  // "clusters[2]"
  YAML::Node body;    // the "cluster"/"context"/"user" map
};

// Parses a list of {name, <body_key>: {...}} into name → entry.
StatusOr<std::map<std::string, NamedEntry>> NamedList(const YAML::Node& root,
                                                      const std::string& list_key,
                                                      const std::string& body_key) {
  std::map<std::string, NamedEntry> out;
  YAML::Node list = root[list_key];
  if (!list || list.IsNull()) return out;
  if (!list.IsSequence()) return FieldError(list_key, "must be a list");
  for (size_t i = 0; i < list.size(); ++i) {
    std::string field = list_key + "[" + std::to_string(i) + "]";
    const YAML::Node& item = list[i];
    if (!item.IsMap()) return FieldError(field, "must be a map");
    HCUDP_RETURN_IF_ERROR(CheckKeys(item, field, {"name", body_key}));
    HCUDP_ASSIGN_OR_RETURN(std::string name, ScalarField(item, field, "name"));
    if (name.empty()) return FieldError(field + ".name", "required");
    if (out.count(name) != 0) return FieldError(field + ".name", "duplicate \"" + name + "\"");
    YAML::Node body = item[body_key];
    if (!body || !body.IsMap()) return FieldError(field + "." + body_key, "must be a map");
    out[name] = NamedEntry{field + "." + body_key, body};
  }
  return out;
}

std::string ResolvePath(const std::string& path, std::string_view base_dir) {
  if (path.empty() || path[0] == '/' || base_dir.empty()) return path;
  return (fs::path(std::string(base_dir)) / path).lexically_normal().string();
}

// Reads `<key>-data` (base64) or `<key>` (a file). `pem_marker` must occur
// in the result so a wrong file is caught at load time, not at the handshake.
StatusOr<std::string> PemField(const YAML::Node& map, const std::string& where,
                               const std::string& key, std::string_view base_dir,
                               std::string_view pem_marker) {
  HCUDP_ASSIGN_OR_RETURN(std::string data, ScalarField(map, where, key + "-data"));
  HCUDP_ASSIGN_OR_RETURN(std::string file, ScalarField(map, where, key));
  if (!data.empty() && !file.empty()) {
    return FieldError(where + "." + key, "set both " + key + " and " + key + "-data");
  }
  std::string pem;
  std::string field = where + "." + key;
  if (!data.empty()) {
    field += "-data";
    std::optional<std::string> decoded = kube::Base64Decode(data);
    if (!decoded) return FieldError(field, "not valid base64");
    pem = std::move(*decoded);
  } else if (!file.empty()) {
    StatusOr<std::string> read = file_util::ReadFile(ResolvePath(file, base_dir));
    if (!read.ok()) return read.status().WithContext("kubeconfig field " + field);
    pem = std::move(read).value();
  } else {
    return std::string();
  }
  if (pem.find(pem_marker) == std::string::npos) {
    return FieldError(field, "not PEM (no \"" + std::string(pem_marker) + "\")");
  }
  return pem;
}

Status ParseCluster(const NamedEntry& entry, std::string_view base_dir, KubeConfig* config) {
  const std::string& w = entry.field;
  HCUDP_RETURN_IF_ERROR(CheckKeys(entry.body, w,
                                  {"server", "certificate-authority", "certificate-authority-data",
                                   "insecure-skip-tls-verify"}));
  HCUDP_ASSIGN_OR_RETURN(config->server, ScalarField(entry.body, w, "server"));
  if (config->server.empty()) return FieldError(w + ".server", "required");
  if (config->server.rfind("https://", 0) != 0 && config->server.rfind("http://", 0) != 0) {
    return FieldError(w + ".server", "must start with https:// or http://");
  }
  while (config->server.size() > 8 && config->server.back() == '/') config->server.pop_back();
  HCUDP_ASSIGN_OR_RETURN(config->insecure_skip_tls_verify,
                         BoolField(entry.body, w, "insecure-skip-tls-verify"));
  HCUDP_ASSIGN_OR_RETURN(config->ca_pem, PemField(entry.body, w, "certificate-authority", base_dir,
                                                  "BEGIN CERTIFICATE"));
  if (config->insecure_skip_tls_verify && !config->ca_pem.empty()) {
    return FieldError(w + ".insecure-skip-tls-verify",
                      "cannot be combined with certificate-authority");
  }
  return OkStatus();
}

Status ParseUser(const NamedEntry& entry, std::string_view base_dir, KubeConfig* config) {
  const std::string& w = entry.field;
  HCUDP_RETURN_IF_ERROR(CheckKeys(entry.body, w,
                                  {"token", "tokenFile", "client-certificate",
                                   "client-certificate-data", "client-key", "client-key-data"}));
  HCUDP_ASSIGN_OR_RETURN(config->token, ScalarField(entry.body, w, "token"));
  HCUDP_ASSIGN_OR_RETURN(std::string token_file, ScalarField(entry.body, w, "tokenFile"));
  config->token_file = ResolvePath(token_file, base_dir);
  HCUDP_ASSIGN_OR_RETURN(config->client_cert_pem, PemField(entry.body, w, "client-certificate",
                                                           base_dir, "BEGIN CERTIFICATE"));
  HCUDP_ASSIGN_OR_RETURN(config->client_key_pem,
                         PemField(entry.body, w, "client-key", base_dir, "PRIVATE KEY"));
  if (config->client_cert_pem.empty() != config->client_key_pem.empty()) {
    return FieldError(
        w + (config->client_cert_pem.empty() ? ".client-certificate" : ".client-key"),
        "required together with " +
            std::string(config->client_cert_pem.empty() ? "client-key" : "client-certificate"));
  }
  return OkStatus();
}

StatusOr<KubeConfig> ParseKubeconfigNode(const YAML::Node& root, std::string_view base_dir) {
  if (!root.IsMap()) return InvalidArgumentError("kubeconfig: not a YAML map");
  HCUDP_RETURN_IF_ERROR(CheckKeys(
      root, "", {"apiVersion", "kind", "current-context", "clusters", "contexts", "users"}));
  HCUDP_ASSIGN_OR_RETURN(std::string kind, ScalarField(root, "", "kind"));
  if (!kind.empty() && kind != "Config") return FieldError("kind", "must be Config");
  HCUDP_ASSIGN_OR_RETURN(std::string api_version, ScalarField(root, "", "apiVersion"));
  if (!api_version.empty() && api_version != "v1") return FieldError("apiVersion", "must be v1");
  HCUDP_ASSIGN_OR_RETURN(auto clusters, NamedList(root, "clusters", "cluster"));
  HCUDP_ASSIGN_OR_RETURN(auto contexts, NamedList(root, "contexts", "context"));
  HCUDP_ASSIGN_OR_RETURN(auto users, NamedList(root, "users", "user"));
  HCUDP_ASSIGN_OR_RETURN(std::string current, ScalarField(root, "", "current-context"));
  if (current.empty()) return FieldError("current-context", "required");
  auto ctx = contexts.find(current);
  if (ctx == contexts.end()) {
    return FieldError("current-context", "no context named \"" + current + "\"");
  }
  const std::string& cw = ctx->second.field;
  HCUDP_RETURN_IF_ERROR(CheckKeys(ctx->second.body, cw, {"cluster", "user"}));
  HCUDP_ASSIGN_OR_RETURN(std::string cluster_name, ScalarField(ctx->second.body, cw, "cluster"));
  HCUDP_ASSIGN_OR_RETURN(std::string user_name, ScalarField(ctx->second.body, cw, "user"));
  auto cluster = clusters.find(cluster_name);
  if (cluster == clusters.end()) {
    return FieldError(cw + ".cluster", "no cluster named \"" + cluster_name + "\"");
  }
  KubeConfig config;
  HCUDP_RETURN_IF_ERROR(ParseCluster(cluster->second, base_dir, &config));
  if (!user_name.empty()) {
    auto user = users.find(user_name);
    if (user == users.end()) return FieldError(cw + ".user", "no user named \"" + user_name + "\"");
    HCUDP_RETURN_IF_ERROR(ParseUser(user->second, base_dir, &config));
  }
  return config;
}

std::string Getenv(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? std::string() : std::string(v);
}

}  // namespace

StatusOr<KubeConfig> ParseKubeconfig(std::string_view yaml, std::string_view base_dir) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::Exception& e) {
    return InvalidArgumentError("kubeconfig: not YAML: line " + std::to_string(e.mark.line + 1) +
                                ": " + e.msg);
  }
  try {
    StatusOr<KubeConfig> config = ParseKubeconfigNode(root, base_dir);
    if (config.ok()) config->source = "<inline>";
    return config;
  } catch (const YAML::Exception& e) {
    return InvalidArgumentError("kubeconfig: line " + std::to_string(e.mark.line + 1) + ": " +
                                e.msg);
  }
}

StatusOr<KubeConfig> LoadKubeconfig(const std::string& path) {
  HCUDP_ASSIGN_OR_RETURN(std::string text, file_util::ReadFile(path));
  std::string dir = fs::path(path).parent_path().string();
  StatusOr<KubeConfig> config = ParseKubeconfig(text, dir.empty() ? "." : dir);
  if (!config.ok()) return config.status().WithContext(path);
  config->source = path;
  return config;
}

StatusOr<KubeConfig> LoadInClusterConfig(const InClusterSource& source) {
  std::string host =
      source.service_host.empty() ? Getenv("KUBERNETES_SERVICE_HOST") : source.service_host;
  std::string port =
      source.service_port.empty() ? Getenv("KUBERNETES_SERVICE_PORT") : source.service_port;
  if (host.empty() || port.empty()) {
    return FailedPreconditionError(
        "not running in a cluster: KUBERNETES_SERVICE_HOST/KUBERNETES_SERVICE_PORT unset");
  }
  KubeConfig config;
  config.source = "in-cluster";
  bool ipv6 = host.find(':') != std::string::npos;
  config.server = "https://" + (ipv6 ? "[" + host + "]" : host) + ":" + port;
  StatusOr<std::string> ca = file_util::ReadFile(source.ca_file);
  if (!ca.ok()) return ca.status().WithContext("in-cluster CA");
  if (ca->find("BEGIN CERTIFICATE") == std::string::npos) {
    return InvalidArgumentError("in-cluster CA " + source.ca_file + ": not PEM");
  }
  config.ca_pem = std::move(ca).value();
  // Fail early if the token is missing; it is re-read on every change later.
  StatusOr<std::string> token = file_util::ReadFile(source.token_file);
  if (!token.ok()) return token.status().WithContext("in-cluster token");
  config.token_file = source.token_file;
  return config;
}

StatusOr<KubeConfig> ResolveKubeConfig(const std::string& explicit_path,
                                       const InClusterSource& in_cluster, const std::string& home) {
  if (!explicit_path.empty()) {
    // KUBECONFIG may be a ':'-separated list; merging is not supported, the
    // first existing file is used.
    size_t start = 0;
    std::string first;
    while (start <= explicit_path.size()) {
      size_t end = explicit_path.find(':', start);
      std::string p = explicit_path.substr(start, end == std::string::npos ? end : end - start);
      if (!p.empty()) {
        if (first.empty()) first = p;
        std::error_code ec;
        if (fs::exists(p, ec)) return LoadKubeconfig(p);
      }
      if (end == std::string::npos) break;
      start = end + 1;
    }
    return LoadKubeconfig(first.empty() ? explicit_path : first);
  }
  std::string host =
      in_cluster.service_host.empty() ? Getenv("KUBERNETES_SERVICE_HOST") : in_cluster.service_host;
  if (!host.empty()) return LoadInClusterConfig(in_cluster);
  std::string home_dir = home.empty() ? Getenv("HOME") : home;
  if (home_dir.empty()) {
    return FailedPreconditionError(
        "no Kubernetes configuration: not in a cluster, no --kubeconfig and $HOME unset");
  }
  std::string path = home_dir + "/.kube/config";
  StatusOr<KubeConfig> config = LoadKubeconfig(path);
  if (!config.ok() && config.status().code() == StatusCode::kNotFound) {
    return FailedPreconditionError(
        "no Kubernetes configuration: not in a cluster (KUBERNETES_SERVICE_HOST unset), no "
        "--kubeconfig, and " +
        path + " does not exist");
  }
  return config;
}

}  // namespace hcudp
