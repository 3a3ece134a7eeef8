// Options: every setting of the daemon and the library, one struct. The daemon
// fills it from flags and environment (flag > env > default); hcuctl and tests
// fill it directly. Each field's comment gives its default and its flag.
#ifndef HCUDP_OPTIONS_H_
#define HCUDP_OPTIONS_H_

#include <string>
#include <string_view>

#include "hcudp/export.h"
#include "hcudp/status.h"

namespace hcudp {

// Which resources the plugin registers (reference/seed-behaviour.md §2.1).
// kDra: no device-plugin resources; the node is served through DRA (DESIGN §9).
enum class Strategy { kHcu, kVhcu, kMig, kMixed, kHami, kDra };
// Resource naming policy 0/1/2 (seed-behaviour.md §2.2).
enum class NamingPolicy { kDefault = 0, kModel = 1, kModelMemoryCu = 2 };
enum class BackendKind { kHost, kSim };
// What Allocate returns: device specs + mounts, CDI device names, or both.
enum class DeviceListStrategy { kDevices, kCdi, kBoth };
enum class LogSeverity { kInfo, kWarning, kError };
// Where node labels go (DESIGN.md §10): nowhere, an NFD features.d file, or
// the Node object. Parse/Name in hcudp/node_labels.h.
enum class NodeLabelMode { kOff, kNfd, kNode };
// Kubernetes Events: on when cluster credentials exist, always, never.
// Parse/Name in hcudp/node_events.h.
enum class EventsMode { kAuto, kTrue, kFalse };

// Parsers accept exactly the spellings the flags document and return
// InvalidArgument naming the accepted values otherwise.
HCUDP_EXPORT StatusOr<Strategy> ParseStrategy(std::string_view text);
HCUDP_EXPORT std::string_view StrategyName(Strategy strategy);
HCUDP_EXPORT StatusOr<NamingPolicy> ParseNamingPolicy(std::string_view text);
HCUDP_EXPORT StatusOr<BackendKind> ParseBackendKind(std::string_view text);
HCUDP_EXPORT std::string_view BackendKindName(BackendKind kind);
HCUDP_EXPORT StatusOr<DeviceListStrategy> ParseDeviceListStrategy(std::string_view text);
HCUDP_EXPORT std::string_view DeviceListStrategyName(DeviceListStrategy strategy);
// INFO | WARNING | WARN | ERROR, case-insensitive, surrounding blanks ignored.
HCUDP_EXPORT StatusOr<LogSeverity> ParseLogSeverity(std::string_view text);

struct Options {
  // --strategy / RESOURCE_REGISTER_STRATEGY. Default: mixed.
  Strategy strategy = Strategy::kMixed;
  // --policy / POLICY. Default: 0 (hygon.com/hcu...).
  NamingPolicy naming_policy = NamingPolicy::kDefault;
  // --pulse / PULSE: health check period in seconds; 0 disables periodic
  // checks (event-driven checks still run). Default: 30.
  int pulse_seconds = 30;
  // --node-name / NODE_NAME: required in the hami strategy. Default: empty.
  std::string node_name;
  // --topology-register / TOPOLOGY_REGISTER (hami): maintain the
  // kube-system/hcu-topology-info ConfigMap. Default: true.
  bool topology_register = true;
  // --resource-multiple / RESOURCE_MULTIPLE (hami): also register hcucores and
  // report hcumem in node status. Default: false.
  bool resource_multiple = false;
  // --device-split-count / DEVICE_SPLIT_COUNT (hami): vHCUs per card, >= 1.
  // Default: 4.
  int device_split_count = 4;
  // --evict-unaccounted-pods / EVICT_UNACCOUNTED_PODS (hami): delete Running
  // pods that use HCU memory (an hcumem limit) but hold no mark file, as the
  // vendor plugin always did. Default: false.
  bool evict_unaccounted_pods = false;
  // --log-level / LOG_LEVEL: VLOG verbosity 0-10. Default: 2.
  int log_level = 2;
  // --log-severity / LOG_SEVERITY. Default: INFO.
  LogSeverity log_severity = LogSeverity::kInfo;
  // --device-plugin-path / DEVICE_PLUGIN_PATH: kubelet's socket directory.
  // Default: /var/lib/kubelet/device-plugins/.
  std::string device_plugin_path = "/var/lib/kubelet/device-plugins/";
  // --pod-resources-socket / POD_RESOURCES_SOCKET.
  // Default: /var/lib/kubelet/pod-resources/kubelet.sock.
  std::string pod_resources_socket = "/var/lib/kubelet/pod-resources/kubelet.sock";
  // --backend / HCU_BACKEND. Default: host.
  BackendKind backend = BackendKind::kHost;
  // --sim-node / HCU_SIM_NODE: SimNode file; required with backend sim.
  // Default: empty.
  std::string sim_node_path;
  // --host-root / HOST_ROOT: prefix for node files. Default: "/" for host;
  // empty for sim, meaning DefaultSimHostRoot(sim_node_path).
  std::string host_root;
  // --hyhal-path / HYHAL_PATH: vendor runtime. Default: /opt/hyhal.
  std::string hyhal_path = "/opt/hyhal";
  // --device-list-strategy / DEVICE_LIST_STRATEGY. Default: devices.
  DeviceListStrategy device_list_strategy = DeviceListStrategy::kDevices;
  // --cdi-spec-dir / CDI_SPEC_DIR: a host path in every mode, written at
  // host-root + the path (a value already under host-root is taken as
  // given). Default: /var/run/cdi.
  std::string cdi_spec_dir = "/var/run/cdi";
  // --cdi-hook-path / CDI_HOOK_PATH: host path of hcu-cdi-hook, which CDI
  // specs run as a createContainer hook for the /dev/dri/by-path links; left
  // out of the specs while no executable is there. Empty: never. Default:
  // /var/lib/hcu-device-plugin/bin/hcu-cdi-hook (where the DaemonSet puts it).
  std::string cdi_hook_path = "/var/lib/hcu-device-plugin/bin/hcu-cdi-hook";
  // --cdi-debug-access / CDI_DEBUG_ACCESS: CDI specs also give /dev/mem and
  // /sys/kernel/debug (read-only), as Hygon's driver does. Default: false.
  bool cdi_debug_access = false;
  // --kubeconfig / KUBECONFIG. Default: empty (in-cluster, then
  // $HOME/.kube/config).
  std::string kubeconfig;
  // --node-labels / NODE_LABELS. Default: off.
  NodeLabelMode node_labels = NodeLabelMode::kOff;
  // --nfd-features-dir / NFD_FEATURES_DIR: where --node-labels=nfd writes.
  // Default: /etc/kubernetes/node-feature-discovery/features.d.
  std::string nfd_features_dir = "/etc/kubernetes/node-feature-discovery/features.d";
  // --events / EVENTS. Default: false.
  EventsMode events = EventsMode::kFalse;
  // --dra-driver-name / DRA_DRIVER_NAME (dra): the DRA driver's name
  // (ResourceSlice.spec.driver). Default: dra.hygon.com.
  std::string dra_driver_name = "dra.hygon.com";
  // --kubelet-plugins-dir / KUBELET_PLUGINS_DIR (dra): the DRA service
  // socket is <dir>/<driver>/dra.sock. Default: /var/lib/kubelet/plugins.
  std::string kubelet_plugins_dir = "/var/lib/kubelet/plugins";
  // --kubelet-registry-dir / KUBELET_REGISTRY_DIR (dra): kubelet's plugin
  // watcher directory. Default: /var/lib/kubelet/plugins_registry.
  std::string kubelet_registry_dir = "/var/lib/kubelet/plugins_registry";
  // --metrics-address / METRICS_ADDRESS: host:port of the Prometheus
  // /metrics endpoint (DESIGN.md §10). Default: empty (off).
  std::string metrics_address;
};

// The host-root actually used: options.host_root if set, "/" for the host
// backend, DefaultSimHostRoot(sim_node_path) for the sim.
HCUDP_EXPORT std::string EffectiveHostRoot(const Options& options);

}  // namespace hcudp

#endif  // HCUDP_OPTIONS_H_
