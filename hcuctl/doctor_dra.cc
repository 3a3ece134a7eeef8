#include "doctor_dra.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <utility>

#include "hcudp/dra/checkpoint.h"
#include "hcudp/dra/slices.h"
#include "hcudp_internal/host_fs.h"

namespace hcuctl {
namespace {

using hcudp::CheckStatus;
using hcudp::DoctorCheck;

DoctorCheck Check(std::string name, CheckStatus status, std::string detail, std::string fix = "") {
  return DoctorCheck{std::move(name), status, std::move(detail),
                     status == CheckStatus::kOk ? "" : std::move(fix)};
}

using hcudp::internal::HostFs;

std::string Parent(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos || slash == 0) return "/";
  return path.substr(0, slash);
}

// What happens when a directory is missing.
enum class WhenMissing {
  kFail,    // someone else (kubelet) must have made it: nothing would work
  kWarn,    // the daemon creates it, but its absence says something is off
  kCreate,  // the daemon creates it; fine when it can
};

// The directory `shown` (a host path, at `real` under host-root) as the
// daemon needs it: a directory it can create entries in (the same test as the
// daemon's start-up: write and search permission, which also fails on a
// read-only mount). A missing one is judged by `missing`, and by whether its
// nearest existing parent would let the daemon create it.
DoctorCheck DirCheck(const std::string& name, const std::string& shown, const std::string& real,
                     WhenMissing missing, const std::string& why, const std::string& fix) {
  struct stat st {};
  if (::stat(real.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode)) {
      return Check(name, CheckStatus::kFail, shown + " is not a directory (" + why + ")",
                   "remove it; the daemon (or kubelet) creates the directory");
    }
    if (::access(real.c_str(), W_OK | X_OK) != 0) {
      return Check(name, CheckStatus::kFail,
                   shown + " is not writable: " + std::strerror(errno) + " (" + why + ")",
                   "mount it read-write into the pod and run the daemon as root");
    }
    return Check(name, CheckStatus::kOk, shown + " writable (" + why + ")");
  }
  const int lost = errno;
  if (lost != ENOENT) {
    return Check(name, CheckStatus::kFail, shown + ": " + std::strerror(lost), fix);
  }
  std::string parent = Parent(real);
  while (::stat(parent.c_str(), &st) != 0 && parent != "/") parent = Parent(parent);
  const bool creatable = S_ISDIR(st.st_mode) && ::access(parent.c_str(), W_OK | X_OK) == 0;
  if (missing == WhenMissing::kFail || !creatable) {
    return Check(
        name, CheckStatus::kFail,
        shown + " missing" + (creatable ? "" : " and cannot be created") + " (" + why + ")", fix);
  }
  return Check(name, missing == WhenMissing::kWarn ? CheckStatus::kWarn : CheckStatus::kOk,
               shown + " missing; the daemon creates it (" + why + ")", fix);
}

DoctorCheck SocketCheck(const DraDoctorOptions& o, const HostFs& host) {
  const std::string shown = JoinDir(JoinDir(o.plugins_dir, o.driver_name), "dra.sock");
  struct stat st {};
  if (::stat(host.Path(shown).c_str(), &st) != 0) {
    return Check("dra-socket", CheckStatus::kWarn,
                 shown + " missing: the DRA driver is not serving on this node",
                 "start the DaemonSet with strategy dra here (label the node hcu-mode=dra)");
  }
  if (!S_ISSOCK(st.st_mode)) {
    return Check("dra-socket", CheckStatus::kFail, shown + " exists but is not a socket",
                 "remove it; the daemon binds its socket there");
  }
  return Check("dra-socket", CheckStatus::kOk, shown + " present");
}

DoctorCheck CheckpointCheck(const HostFs& host) {
  const std::string shown(hcudp::internal::host_path::kDraCheckpointDir);
  DoctorCheck dir = DirCheck("dra-checkpoint", shown, host.DraCheckpointDir(),
                             WhenMissing::kCreate, "prepared claims, kept across reboots",
                             "mount the host's /var/lib/hcu-device-plugin read-write");
  struct stat st {};
  if (dir.status != CheckStatus::kOk || ::stat(host.DraCheckpointDir().c_str(), &st) != 0) {
    return dir;
  }
  hcudp::dra::CheckpointStore store(host.root());
  std::vector<std::string> bad;
  auto claims = store.ReadAll(&bad);
  if (!claims.ok()) {
    return Check("dra-checkpoint", CheckStatus::kFail, shown + ": " + claims.status().message(),
                 "check the directory's permissions");
  }
  const std::string count = std::to_string(claims->size()) + " prepared claim(s)";
  if (!bad.empty()) {
    return Check("dra-checkpoint", CheckStatus::kWarn,
                 shown + ": " + count + ", " + std::to_string(bad.size()) +
                     " unreadable entry(ies), first: " + bad.front(),
                 "see `hcuctl dra prepared`; remove the broken files once their claims are gone");
  }
  return Check("dra-checkpoint", CheckStatus::kOk, shown + " writable, " + count);
}

DoctorCheck NodeNameCheck(const DraDoctorOptions& o) {
  if (o.node_name.empty()) {
    return Check("node-name", CheckStatus::kWarn,
                 "no node name: the daemon needs --node-name or NODE_NAME (its pool's name)",
                 "set NODE_NAME from spec.nodeName (the chart does), or pass --node-name here");
  }
  hcudp::dra::SliceParams params;
  params.node_name = o.node_name;
  params.driver_name = o.driver_name;
  auto plan = hcudp::dra::BuildPoolPlan(hcudp::NodeInventory{}, params);
  if (!plan.ok()) {
    return Check("node-name", CheckStatus::kFail, plan.status().message(),
                 "use the Node's name (spec.nodeName) and a DNS-subdomain driver name");
  }
  return Check("node-name", CheckStatus::kOk,
               "pool " + o.node_name + " of driver " + o.driver_name);
}

DoctorCheck CredentialsCheck(const DraDoctorOptions& o) {
  const std::string fix =
      "mount the ServiceAccount token (automountServiceAccountToken: true) or pass --kubeconfig";
  auto config = hcudp::ResolveKubeConfig(o.kubeconfig, o.in_cluster, o.home);
  if (!config.ok()) {
    // The library's messages never carry a secret.
    return Check("kube-credentials", CheckStatus::kFail, config.status().message(), fix);
  }
  std::string auth;
  if (!config->token_file.empty()) {
    std::ifstream in(config->token_file, std::ios::binary);
    std::string token((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!in.good() && !in.eof()) token.clear();
    if (token.find_first_not_of(" \t\r\n") == std::string::npos) {
      return Check("kube-credentials", CheckStatus::kFail,
                   config->source + ": token file " + config->token_file +
                       (in.is_open() ? " is empty" : " cannot be read"),
                   fix);
    }
    auth = "token file " + config->token_file;
  } else if (!config->token.empty()) {
    auth = "bearer token";
  } else if (!config->client_cert_pem.empty()) {
    auth = "client certificate";
  } else {
    return Check("kube-credentials", CheckStatus::kWarn,
                 config->source + ": server " + config->server +
                     " without credentials (anonymous requests are refused by RBAC)",
                 fix);
  }
  return Check("kube-credentials", CheckStatus::kOk,
               config->source + ": server " + config->server + ", " + auth + " readable");
}

}  // namespace

bool IsDevicePluginCheck(std::string_view name) {
  return name == "kubelet-plugin-dir" || name == "kubelet-socket" || name == "plugin-sockets";
}

std::vector<DoctorCheck> RunDraChecks(const DraDoctorOptions& o) {
  const HostFs host(o.host_root);
  std::vector<DoctorCheck> checks;
  checks.push_back(DirCheck("dra-plugins-dir", o.plugins_dir, host.Path(o.plugins_dir),
                            WhenMissing::kWarn, "the DRA socket goes in <dir>/" + o.driver_name,
                            "pass --kubelet-plugins-dir=<kubelet root-dir>/plugins"));
  checks.push_back(DirCheck("dra-registry-dir", o.registry_dir,
                            host.Path(o.registry_dir), WhenMissing::kFail,
                            "kubelet's plugin watcher finds the driver here",
                            "start kubelet (it creates the directory), or pass "
                            "--kubelet-registry-dir=<kubelet root-dir>/plugins_registry"));
  checks.push_back(SocketCheck(o, host));
  checks.push_back(DirCheck("cdi-dir", o.cdi_spec_dir, host.Path(o.cdi_spec_dir),
                            WhenMissing::kWarn, "CDI specs the container runtime reads",
                            "enable CDI in the container runtime (containerd 1.7+: "
                            "enable_cdi, CRI-O: on by default) with spec dir " +
                                o.cdi_spec_dir));
  checks.push_back(CheckpointCheck(host));
  checks.push_back(NodeNameCheck(o));
  checks.push_back(CredentialsCheck(o));
  return checks;
}

std::string JoinDir(const std::string& dir, const std::string& name) {
  return !dir.empty() && dir.back() == '/' ? dir + name : dir + "/" + name;
}

}  // namespace hcuctl
