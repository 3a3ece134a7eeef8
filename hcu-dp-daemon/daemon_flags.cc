#include "daemon_flags.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hcudp_cli/option_flags.h"
#include "hcudp_internal/socket_dir.h"
#include "metrics.h"
#include "node_ops_flags.h"
#include "registrar.h"

namespace hcudp::daemon {
namespace {

// Registers every DESIGN.md §3 flag, writing into `o`.
void AddDaemonFlags(FlagSet& set, Options& o, bool& version) {
  set.Add(Flag::Enum("strategy", "RESOURCE_REGISTER_STRATEGY", "Which resources to register.",
                     {"hcu", "vhcu", "mig", "mixed", "hami", "dra"}, "mixed",
                     [&o](const std::string& v) {
                       o.strategy = *ParseStrategy(v);
                       return OkStatus();
                     }));
  set.Add(Flag::Enum("policy", "POLICY",
                     "Resource naming policy: 0 hygon.com/hcu, 1 model, 2 model+memory+CU.",
                     {"0", "1", "2"}, "0", [&o](const std::string& v) {
                       o.naming_policy = *ParseNamingPolicy(v);
                       return OkStatus();
                     }));
  set.Add(Flag::Int("pulse", "PULSE", "Health check period in seconds; 0 disables periodic checks.",
                    &o.pulse_seconds, 0));
  set.Add(Flag::String("node-name", "NODE_NAME", "Kubernetes node name (required in hami).",
                       &o.node_name));
  set.Add(Flag::Bool("topology-register", "TOPOLOGY_REGISTER",
                     "hami: maintain the kube-system/hcu-topology-info ConfigMap.",
                     &o.topology_register));
  set.Add(Flag::Bool("resource-multiple", "RESOURCE_MULTIPLE",
                     "hami: also register hcucores and report hcumem in node status.",
                     &o.resource_multiple));
  set.Add(DeviceSplitCountFlag("DEVICE_SPLIT_COUNT", "hami: maximum vHCUs per card (1 to 1024).",
                               &o.device_split_count));
  set.Add(Flag::Bool("evict-unaccounted-pods", "EVICT_UNACCOUNTED_PODS",
                     "hami: delete Running pods that use HCU memory but hold no mark file.",
                     &o.evict_unaccounted_pods));
  set.Add(
      Flag::Int("log-level", "LOG_LEVEL", "Verbosity of VLOG(n) messages.", &o.log_level, 0, 10));
  set.Add(Flag::Enum("log-severity", "LOG_SEVERITY",
                     "Minimum severity written to stderr (WARN is accepted for WARNING).",
                     {"INFO", "WARNING", "WARN", "ERROR"}, "INFO", [&o](const std::string& v) {
                       o.log_severity = *ParseLogSeverity(v);
                       return OkStatus();
                     }));
  // --backend, --sim-node, --host-root, --hyhal-path, --device-plugin-path,
  // --pod-resources-socket, --kubeconfig: shared with hcuctl.
  AddNodeAccessFlags(set, &o);
  set.Add(Flag::Enum("device-list-strategy", "DEVICE_LIST_STRATEGY",
                     "What Allocate returns: device specs and mounts, CDI device names, or both.",
                     {"devices", "cdi", "both"}, "devices", [&o](const std::string& v) {
                       o.device_list_strategy = *ParseDeviceListStrategy(v);
                       return OkStatus();
                     }));
  set.Add(Flag::String("cdi-spec-dir", "CDI_SPEC_DIR",
                       "Where CDI specs are written, in every mode: a host path, written "
                       "under --host-root (a path already under it is taken as given).",
                       &o.cdi_spec_dir));
  // The runtime runs a hook by its path on the host, from no known directory:
  // a relative path would name nothing (or something else) there.
  Flag hook = Flag::String("cdi-hook-path", "CDI_HOOK_PATH",
                           "Host path of hcu-cdi-hook, the createContainer hook CDI specs run for "
                           "/dev/dri/by-path links; left out while nothing is there. Empty: never.",
                           &o.cdi_hook_path);
  hook.set_string = [set_hook = hook.set_string](const std::string& v) {
    if (!v.empty() && v.front() != '/') {
      return InvalidArgumentError("\"" + v + "\" is not an absolute path");
    }
    return set_hook(v);
  };
  set.Add(std::move(hook));
  set.Add(Flag::Bool("cdi-debug-access", "CDI_DEBUG_ACCESS",
                     "CDI specs also give /dev/mem and /sys/kernel/debug (ro), as Hygon's "
                     "driver does; they break container isolation, so only on request.",
                     &o.cdi_debug_access));
  AddNodeOpsFlags(set, o);  // --node-labels, --nfd-features-dir, --events
  set.Add(Flag::String("dra-driver-name", "DRA_DRIVER_NAME",
                       "DRA mode: the driver name (ResourceSlice.spec.driver).",
                       &o.dra_driver_name));
  set.Add(Flag::String("kubelet-plugins-dir", "KUBELET_PLUGINS_DIR",
                       "DRA mode: kubelet's plugins directory; the DRA socket is "
                       "<dir>/<driver>/dra.sock.",
                       &o.kubelet_plugins_dir));
  set.Add(Flag::String("kubelet-registry-dir", "KUBELET_REGISTRY_DIR",
                       "DRA mode: kubelet's plugin registration directory.",
                       &o.kubelet_registry_dir));
  set.Add(Flag::String("metrics-address", "METRICS_ADDRESS",
                       "host:port for Prometheus /metrics (e.g. :9400); empty: off.",
                       &o.metrics_address));
  set.Add(Flag::Bool("version", "", "Print the version and exit.", &version));
}

// Hygon's k8s-hcu-dra-driver reads these variables (reference/dra.md §6.1):
// a node that moves from it keeps its custom paths. Our own names win.
struct EnvAlias {
  const char* ours;
  const char* hygon;
  const char* flag;
};
constexpr EnvAlias kHygonEnvAliases[] = {
    {"CDI_SPEC_DIR", "CDI_ROOT", "--cdi-spec-dir"},
    {"KUBELET_REGISTRY_DIR", "KUBELET_REGISTRAR_DIRECTORY_PATH", "--kubelet-registry-dir"},
    {"KUBELET_PLUGINS_DIR", "KUBELET_PLUGINS_DIRECTORY_PATH", "--kubelet-plugins-dir"}};

// `env`, where one of our variables is unset, answering with its Hygon alias
// (when set and not empty, as Hygon's driver reads it); each alias used is
// named in `notices`.
EnvLookup WithHygonAliases(EnvLookup env, std::vector<std::string>* notices) {
  if (!env) return env;
  return [env = std::move(env), notices](const std::string& name) -> std::optional<std::string> {
    std::optional<std::string> value = env(name);
    if (value) return value;
    for (const EnvAlias& a : kHygonEnvAliases) {
      if (name != a.ours) continue;
      std::optional<std::string> alias = env(a.hygon);
      if (!alias || alias->empty()) return std::nullopt;
      notices->push_back(std::string(a.flag) + "=" + *alias + " from " + a.hygon +
                         " (the name Hygon's DRA driver reads; " + a.ours + " is unset)");
      return alias;
    }
    return std::nullopt;
  };
}

// Cross-flag rules that a single flag cannot check.
Status Validate(const Options& o) {
  HCUDP_RETURN_IF_ERROR(ValidateNodeAccessOptions(o));
  HCUDP_RETURN_IF_ERROR(ValidateNodeOpsOptions(o));
  // kubelet.sock sits in --device-plugin-path: over the unix-socket limit
  // kubelet cannot serve it nor we dial it (DRA mode checks its own sockets).
  if (o.strategy != Strategy::kDra) {
    HCUDP_RETURN_IF_ERROR(CheckSocketPath(
        JoinPath(o.device_plugin_path, std::string(kKubeletSocket)), "--device-plugin-path"));
  }
  if (!o.metrics_address.empty())
    HCUDP_RETURN_IF_ERROR(ParseMetricsAddress(o.metrics_address).status());
  // DRA mode checks its own (dra_mode.cc); the device-plugin modes write the
  // spec with CDI devices on, and the runtime reads it from an absolute path.
  if (o.strategy != Strategy::kDra && o.device_list_strategy != DeviceListStrategy::kDevices &&
      (o.cdi_spec_dir.empty() || o.cdi_spec_dir.front() != '/')) {
    return InvalidArgumentError(
        "--cdi-spec-dir: \"" + o.cdi_spec_dir +
        "\" is not an absolute path (required with --device-list-strategy=" +
        (o.device_list_strategy == DeviceListStrategy::kCdi ? "cdi" : "both") + ")");
  }
  if (o.strategy == Strategy::kHami && o.node_name.empty()) {
    return InvalidArgumentError(
        "--node-name: required with --strategy=hami (set it, or NODE_NAME, to this node's name)");
  }
  if (o.strategy == Strategy::kDra && o.node_name.empty()) {
    return InvalidArgumentError(
        "--node-name: required with --strategy=dra (the ResourceSlice pool is named after the "
        "node; set it, or NODE_NAME, to this node's name)");
  }
  // kubelet dials the DRA endpoint by the path we register (dra.md) and
  // watches its own registry directory: both must be absolute.
  if (o.strategy == Strategy::kDra) {
    const std::pair<const char*, const std::string*> dirs[] = {
        {"--kubelet-plugins-dir", &o.kubelet_plugins_dir},
        {"--kubelet-registry-dir", &o.kubelet_registry_dir}};
    for (const auto& [flag, dir] : dirs) {
      if (dir->empty() || dir->front() != '/') {
        return InvalidArgumentError(std::string(flag) + ": \"" + *dir +
                                    "\" is not an absolute path (required with --strategy=dra)");
      }
    }
  }
  return OkStatus();
}

}  // namespace

StatusOr<DaemonCommand> ParseDaemonFlags(int argc, const char* const* argv, const EnvLookup& env) {
  DaemonCommand command;
  bool version = false;
  FlagSet set("hcu-dp-daemon",
              "Kubernetes device plugin for Hygon HCU accelerators. Every flag also reads the "
              "environment variable shown; a flag beats its variable, which beats the default. "
              "Hygon's DRA driver variables CDI_ROOT, KUBELET_REGISTRAR_DIRECTORY_PATH and "
              "KUBELET_PLUGINS_DIRECTORY_PATH are read where CDI_SPEC_DIR, "
              "KUBELET_REGISTRY_DIR and KUBELET_PLUGINS_DIR are unset.");
  AddDaemonFlags(set, command.options, version);
  set.set_interspersed(true);
  HCUDP_ASSIGN_OR_RETURN(ParsedArgs parsed,
                         set.Parse(argc, argv, WithHygonAliases(env, &command.notices)));
  if (parsed.help_requested) {
    command.action = DaemonCommand::Action::kHelp;
    command.help_text = set.Help();
    return command;
  }
  if (version) {
    command.action = DaemonCommand::Action::kVersion;
    return command;
  }
  if (!parsed.positional.empty()) {
    return InvalidArgumentError("unexpected argument \"" + parsed.positional.front() +
                                "\" (hcu-dp-daemon takes only flags; see --help)");
  }
  HCUDP_RETURN_IF_ERROR(Validate(command.options));
  return command;
}

}  // namespace hcudp::daemon
