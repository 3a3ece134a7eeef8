#include "hcudp_cli/option_flags.h"

#include "hcudp/naming.h"

namespace hcudp {

void AddNodeAccessFlags(FlagSet& flags, Options* options) {
  flags.Add(Flag::Enum("backend", "HCU_BACKEND",
                       "host (a real HCU node) or sim (a simulated node from --sim-node)",
                       {"host", "sim"}, std::string(BackendKindName(options->backend)),
                       [options](const std::string& v) {
                         options->backend = *ParseBackendKind(v);
                         return OkStatus();
                       }));
  flags.Add(Flag::String("sim-node", "HCU_SIM_NODE",
                         "SimNode YAML file; required with --backend=sim",
                         &options->sim_node_path));
  Flag host_root =
      Flag::String("host-root", "HOST_ROOT", "prefix under which node files are read and written",
                   &options->host_root);
  host_root.default_text = "/ (sim: a private directory derived from --sim-node)";
  flags.Add(std::move(host_root));
  // Allocate hands it to kubelet as a mount's host path: absolute only.
  Flag hyhal =
      Flag::String("hyhal-path", "HYHAL_PATH",
                   "vendor runtime: libraries under lib/, tools under bin/", &options->hyhal_path);
  hyhal.set_string = [set = hyhal.set_string](const std::string& v) {
    if (v.empty() || v.front() != '/') {
      return InvalidArgumentError("\"" + v + "\" is not an absolute path");
    }
    return set(v);
  };
  flags.Add(std::move(hyhal));
  flags.Add(Flag::String("device-plugin-path", "DEVICE_PLUGIN_PATH",
                         "kubelet's device-plugin socket directory", &options->device_plugin_path));
  flags.Add(Flag::String("pod-resources-socket", "POD_RESOURCES_SOCKET",
                         "kubelet's pod-resources API socket", &options->pod_resources_socket));
  Flag kubeconfig =
      Flag::String("kubeconfig", "KUBECONFIG", "kubeconfig file when running outside a cluster",
                   &options->kubeconfig);
  kubeconfig.default_text = "in-cluster, then $HOME/.kube/config";
  flags.Add(std::move(kubeconfig));
}

Flag DeviceSplitCountFlag(std::string env, std::string help, int* target) {
  Flag flag = Flag::Int("device-split-count", std::move(env), std::move(help), target, 1);
  flag.set_int = [set = flag.set_int](int64_t v) {
    HCUDP_RETURN_IF_ERROR(CheckDeviceSplitCount(v));
    return set(v);
  };
  return flag;
}

Status ValidateNodeAccessOptions(const Options& options) {
  if (options.backend == BackendKind::kSim && options.sim_node_path.empty()) {
    return InvalidArgumentError("--sim-node: required with --backend=sim (a SimNode YAML file)");
  }
  if (!options.host_root.empty() && options.host_root.front() != '/') {
    return InvalidArgumentError("--host-root: \"" + options.host_root +
                                "\" is not an absolute path");
  }
  if (options.device_plugin_path.empty()) {
    return InvalidArgumentError("--device-plugin-path: must not be empty");
  }
  return OkStatus();
}

}  // namespace hcudp
