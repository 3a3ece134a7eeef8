#include "daemon_flags.h"

#include <boost/test/unit_test.hpp>
#include <map>
#include <set>
#include <tuple>

#include "hcudp_cli/cdi_dir.h"

namespace hcudp::daemon {
namespace {

StatusOr<DaemonCommand> Parse(std::vector<std::string> args,
                              std::map<std::string, std::string> env = {}) {
  std::vector<const char*> argv = {"hcu-dp-daemon"};
  for (const auto& a : args) argv.push_back(a.c_str());
  return ParseDaemonFlags(static_cast<int>(argv.size()), argv.data(),
                          [env](const std::string& name) -> std::optional<std::string> {
                            auto it = env.find(name);
                            if (it == env.end()) return std::nullopt;
                            return it->second;
                          });
}

BOOST_AUTO_TEST_SUITE(daemon_flags)

BOOST_AUTO_TEST_CASE(defaults_match_the_design_table) {
  auto c = Parse({});
  BOOST_REQUIRE(c.ok());
  const Options& o = c->options;
  BOOST_TEST((o.strategy == Strategy::kMixed));
  BOOST_TEST((o.naming_policy == NamingPolicy::kDefault));
  BOOST_TEST(o.pulse_seconds == 30);
  BOOST_TEST(o.topology_register);
  BOOST_TEST(!o.resource_multiple);
  BOOST_TEST(o.device_split_count == 4);
  BOOST_TEST(!o.evict_unaccounted_pods);
  BOOST_TEST(o.log_level == 2);
  BOOST_TEST((o.log_severity == LogSeverity::kInfo));
  BOOST_TEST(o.device_plugin_path == "/var/lib/kubelet/device-plugins/");
  BOOST_TEST(o.pod_resources_socket == "/var/lib/kubelet/pod-resources/kubelet.sock");
  BOOST_TEST((o.backend == BackendKind::kHost));
  BOOST_TEST(o.hyhal_path == "/opt/hyhal");
  BOOST_TEST((o.device_list_strategy == DeviceListStrategy::kDevices));
  BOOST_TEST(o.cdi_spec_dir == "/var/run/cdi");
}

BOOST_AUTO_TEST_CASE(dra_flags_default_read_their_variables_and_a_flag_wins) {
  auto c = Parse({});
  BOOST_REQUIRE(c.ok());
  BOOST_TEST(c->options.dra_driver_name == "dra.hygon.com");
  BOOST_TEST(c->options.kubelet_plugins_dir == "/var/lib/kubelet/plugins");
  BOOST_TEST(c->options.kubelet_registry_dir == "/var/lib/kubelet/plugins_registry");
  c = Parse({"--kubelet-registry-dir=/flag/reg"}, {{"DRA_DRIVER_NAME", "hcu.example.com"},
                                                   {"KUBELET_PLUGINS_DIR", "/k3s/plugins"},
                                                   {"KUBELET_REGISTRY_DIR", "/env/reg"}});
  BOOST_REQUIRE(c.ok());
  BOOST_TEST(c->options.dra_driver_name == "hcu.example.com");
  BOOST_TEST(c->options.kubelet_plugins_dir == "/k3s/plugins");
  BOOST_TEST(c->options.kubelet_registry_dir == "/flag/reg");
}

// Migration from Hygon's DRA driver: its variable names for the same paths
// are read where ours are unset, and each one used is named for the log.
BOOST_AUTO_TEST_CASE(hygon_driver_variables_are_aliases_and_ours_win) {
  auto c = Parse({}, {{"CDI_ROOT", "/hygon/cdi"},
                      {"KUBELET_REGISTRAR_DIRECTORY_PATH", "/hygon/reg"},
                      {"KUBELET_PLUGINS_DIRECTORY_PATH", "/hygon/plugins"}});
  BOOST_REQUIRE_MESSAGE(c.ok(), c.status().ToString());
  BOOST_TEST(c->options.cdi_spec_dir == "/hygon/cdi");
  BOOST_TEST(c->options.kubelet_registry_dir == "/hygon/reg");
  BOOST_TEST(c->options.kubelet_plugins_dir == "/hygon/plugins");
  const std::set<std::string> notices(c->notices.begin(), c->notices.end());
  const std::set<std::string> want = {
      "--cdi-spec-dir=/hygon/cdi from CDI_ROOT (the name Hygon's DRA driver reads; CDI_SPEC_DIR "
      "is unset)",
      "--kubelet-registry-dir=/hygon/reg from KUBELET_REGISTRAR_DIRECTORY_PATH (the name Hygon's "
      "DRA driver reads; KUBELET_REGISTRY_DIR is unset)",
      "--kubelet-plugins-dir=/hygon/plugins from KUBELET_PLUGINS_DIRECTORY_PATH (the name Hygon's "
      "DRA driver reads; KUBELET_PLUGINS_DIR is unset)"};
  BOOST_TEST(notices == want, boost::test_tools::per_element());

  // Ours (a variable or a flag) beat Hygon's; an empty alias counts as unset.
  c = Parse({"--kubelet-plugins-dir=/flag/plugins"},
            {{"CDI_ROOT", "/hygon/cdi"},
             {"CDI_SPEC_DIR", "/ours/cdi"},
             {"KUBELET_REGISTRAR_DIRECTORY_PATH", ""},
             {"KUBELET_PLUGINS_DIRECTORY_PATH", "/hygon/plugins"}});
  BOOST_REQUIRE_MESSAGE(c.ok(), c.status().ToString());
  BOOST_TEST(c->options.cdi_spec_dir == "/ours/cdi");
  BOOST_TEST(c->options.kubelet_registry_dir == "/var/lib/kubelet/plugins_registry");
  BOOST_TEST(c->options.kubelet_plugins_dir == "/flag/plugins");
  BOOST_TEST(c->notices.empty());
}

BOOST_AUTO_TEST_CASE(every_flag_reads_its_environment_variable) {
  auto c = Parse({}, {{"RESOURCE_REGISTER_STRATEGY", "vhcu"},
                      {"POLICY", "2"},
                      {"PULSE", "0x5"},
                      {"NODE_NAME", "n1"},
                      {"TOPOLOGY_REGISTER", ""},
                      {"RESOURCE_MULTIPLE", "t"},
                      {"DEVICE_SPLIT_COUNT", "8"},
                      {"EVICT_UNACCOUNTED_PODS", "true"},
                      {"LOG_LEVEL", "5"},
                      {"LOG_SEVERITY", "WARNING"},
                      {"DEVICE_PLUGIN_PATH", "/dp"},
                      {"POD_RESOURCES_SOCKET", "/pr.sock"},
                      {"HCU_BACKEND", "sim"},
                      {"HCU_SIM_NODE", "/n.yaml"},
                      {"HOST_ROOT", "/hr"},
                      {"HYHAL_PATH", "/hy"},
                      {"DEVICE_LIST_STRATEGY", "both"},
                      {"CDI_SPEC_DIR", "/cdi"},
                      {"KUBECONFIG", "/kc"}});
  BOOST_REQUIRE_MESSAGE(c.ok(), c.status().ToString());
  const Options& o = c->options;
  BOOST_TEST((o.strategy == Strategy::kVhcu));
  BOOST_TEST((o.naming_policy == NamingPolicy::kModelMemoryCu));
  BOOST_TEST(o.pulse_seconds == 5);
  BOOST_TEST(o.node_name == "n1");
  BOOST_TEST(!o.topology_register);
  BOOST_TEST(o.resource_multiple);
  BOOST_TEST(o.device_split_count == 8);
  BOOST_TEST(o.evict_unaccounted_pods);
  BOOST_TEST(o.log_level == 5);
  BOOST_TEST((o.log_severity == LogSeverity::kWarning));
  BOOST_TEST(o.device_plugin_path == "/dp");
  BOOST_TEST(o.pod_resources_socket == "/pr.sock");
  BOOST_TEST((o.backend == BackendKind::kSim));
  BOOST_TEST(o.sim_node_path == "/n.yaml");
  BOOST_TEST(o.host_root == "/hr");
  BOOST_TEST(o.hyhal_path == "/hy");
  BOOST_TEST((o.device_list_strategy == DeviceListStrategy::kBoth));
  BOOST_TEST(o.cdi_spec_dir == "/cdi");
  BOOST_TEST(o.kubeconfig == "/kc");
}

BOOST_AUTO_TEST_CASE(flag_beats_environment) {
  auto c = Parse({"--policy=1", "--pulse", "7"}, {{"POLICY", "2"}, {"PULSE", "9"}});
  BOOST_REQUIRE(c.ok());
  BOOST_TEST((c->options.naming_policy == NamingPolicy::kModel));
  BOOST_TEST(c->options.pulse_seconds == 7);
}

BOOST_AUTO_TEST_CASE(invalid_values_give_one_line_naming_flag_and_accepted_values) {
  struct Case {
    std::vector<std::string> args;
    std::map<std::string, std::string> env;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"--strategy=whole"},
       {},
       "--strategy: \"whole\" is not one of hcu, vhcu, mig, mixed, hami, dra"},
      {{"--policy", "3"}, {}, "--policy: \"3\" is not one of 0, 1, 2"},
      {{}, {{"POLICY", "3"}}, "--policy (env POLICY): \"3\" is not one of 0, 1, 2"},
      {{"--device-split-count=0"}, {}, "--device-split-count: \"0\" is out of range (>= 1)"},
      {{"--log-level=11"}, {}, "--log-level: \"11\" is out of range (0 to 10)"},
      {{"--pulse=x"}, {}, "--pulse: \"x\" is not an integer (decimal or 0x hex, >= 0)"},
      {{"--log-severity=debug"},
       {},
       "--log-severity: \"debug\" is not one of INFO, WARNING, WARN, ERROR"},
      {{"--backend=gpu"}, {}, "--backend: \"gpu\" is not one of host, sim"},
      {{"--device-list-strategy=cdi-annotations"},
       {},
       "--device-list-strategy: \"cdi-annotations\" is not one of devices, cdi, both"},
      {{},
       {{"RESOURCE_MULTIPLE", "yes"}},
       "--resource-multiple (env RESOURCE_MULTIPLE): \"yes\" is not a bool (true, false, 1, 0, t, "
       "f)"},
      {{"--backend=sim"}, {}, "--sim-node: required with --backend=sim (a SimNode YAML file)"},
      {{"--strategy=hami"},
       {},
       "--node-name: required with --strategy=hami (set it, or NODE_NAME, to this node's name)"},
      {{"--strategy=dra"},
       {},
       "--node-name: required with --strategy=dra (the ResourceSlice pool is named after the "
       "node; set it, or NODE_NAME, to this node's name)"},
      {{"--strategy=hami", "--node-name="},
       {},
       "--node-name: required with --strategy=hami (set it, or NODE_NAME, to this node's name)"},
      {{"--stratgy=hcu"}, {}, "unknown flag --stratgy (did you mean --strategy?)"},
      {{"run"}, {}, "unexpected argument \"run\" (hcu-dp-daemon takes only flags; see --help)"},
  };
  for (const auto& c : cases) {
    BOOST_TEST_CONTEXT("args " << (c.args.empty() ? "" : c.args[0])) {
      auto r = Parse(c.args, c.env);
      BOOST_REQUIRE(!r.ok());
      BOOST_TEST((r.status().code() == StatusCode::kInvalidArgument));
      BOOST_TEST(r.status().message() == c.message);
      BOOST_TEST(r.status().message().find('\n') == std::string::npos);
    }
  }
}

// CDI_SPEC_DIR="" (an empty Helm value) with CDI devices on: one line and
// exit 2 like any bad value, not a failed spec write at start-up (exit 1).
BOOST_AUTO_TEST_CASE(a_cdi_spec_dir_that_is_not_absolute_is_refused_when_cdi_is_on) {
  for (const std::string strategy : {"cdi", "both"}) {
    for (const std::string dir : {"", "cdi"}) {
      auto r = Parse({"--device-list-strategy=" + strategy, "--cdi-spec-dir=" + dir});
      BOOST_TEST_CONTEXT(strategy << " \"" << dir << "\"") {
        BOOST_REQUIRE(!r.ok());
        BOOST_TEST((r.status().code() == StatusCode::kInvalidArgument));
        BOOST_TEST(r.status().message() ==
                   "--cdi-spec-dir: \"" + dir +
                       "\" is not an absolute path (required with --device-list-strategy=" +
                       strategy + ")");
      }
    }
  }
  // Not used without CDI devices.
  BOOST_TEST(Parse({"--cdi-spec-dir="}).ok());
}

// HYHAL_PATH="" (an empty Helm value) or a relative path would be handed to
// kubelet as a mount's host path in every Allocate: one line and exit 2 at
// start-up instead, naming where the value came from.
BOOST_AUTO_TEST_CASE(a_hyhal_path_that_is_not_absolute_is_refused) {
  struct Case {
    std::vector<std::string> args;
    std::map<std::string, std::string> env;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"--hyhal-path=opt/hyhal"}, {}, "--hyhal-path: \"opt/hyhal\" is not an absolute path"},
      {{"--hyhal-path="}, {}, "--hyhal-path: \"\" is not an absolute path"},
      {{}, {{"HYHAL_PATH", ""}}, "--hyhal-path (env HYHAL_PATH): \"\" is not an absolute path"},
      {{},
       {{"HYHAL_PATH", "./hyhal"}},
       "--hyhal-path (env HYHAL_PATH): \"./hyhal\" is not an absolute path"},
  };
  for (const auto& c : cases) {
    BOOST_TEST_CONTEXT(c.message) {
      auto r = Parse(c.args, c.env);
      BOOST_REQUIRE(!r.ok());
      BOOST_TEST((r.status().code() == StatusCode::kInvalidArgument));
      BOOST_TEST(r.status().message() == c.message);
    }
  }
  for (const std::string strategy : {"mixed", "dra"}) {
    BOOST_TEST(Parse({"--strategy=" + strategy, "--node-name=n", "--hyhal-path=/opt/hyhal"}).ok());
  }
}

// NFD reads features.d from a fixed host path: an empty or relative
// directory would put the labels' file where NFD never looks.
BOOST_AUTO_TEST_CASE(an_nfd_features_dir_that_is_not_absolute_is_refused_with_nfd_labels) {
  for (const std::string dir : {"", "features.d", "./etc/features.d"}) {
    BOOST_TEST_CONTEXT("--nfd-features-dir=" << dir) {
      auto r = Parse({"--node-labels=nfd", "--nfd-features-dir=" + dir});
      BOOST_REQUIRE(!r.ok());
      BOOST_TEST((r.status().code() == StatusCode::kInvalidArgument));
      BOOST_TEST(r.status().message() ==
                 "--nfd-features-dir: \"" + dir +
                     "\" is not an absolute path (required with --node-labels=nfd)");
    }
  }
  BOOST_TEST(Parse({"--node-labels=nfd",
                    "--nfd-features-dir=/etc/kubernetes/node-feature-discovery/features.d"})
                 .ok());
  // Not used with other label modes.
  BOOST_TEST(Parse({"--node-labels=off", "--nfd-features-dir=features.d"}).ok());
}

// kubelet.sock lives in --device-plugin-path; a path over the unix-socket
// limit cannot be listened on (by kubelet) nor dialled (by us), so the
// daemon would idle forever serving nothing: refuse it at start-up.
BOOST_AUTO_TEST_CASE(a_device_plugin_path_too_long_for_kubelet_sock_is_refused) {
  // 96 + "kubelet.sock" = 108 bytes, one over the 107-byte limit.
  const std::string dir = "/" + std::string(94, 'd') + "/";
  const std::string sock = dir + "kubelet.sock";
  BOOST_REQUIRE(sock.size() == 108u);
  auto r = Parse({"--device-plugin-path=" + dir});
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST((r.status().code() == StatusCode::kInvalidArgument));
  BOOST_TEST(r.status().message() ==
             "--device-plugin-path: the socket path " + sock +
                 " is 108 bytes, over the 107-byte limit of unix sockets (a shorter "
                 "--device-plugin-path fits)");
  // One byte shorter fits; DRA mode does not use kubelet.sock.
  BOOST_TEST(Parse({"--device-plugin-path=/" + std::string(93, 'd')}).ok());
  BOOST_TEST(Parse({"--strategy=dra", "--node-name=n", "--device-plugin-path=" + dir}).ok());
}

// kubelet dials the DRA endpoint verbatim (reference/dra.md: an absolute
// path) and watches its own registry directory: relative directories would
// register an endpoint kubelet resolves against its own working directory.
BOOST_AUTO_TEST_CASE(dra_directories_that_are_not_absolute_are_refused) {
  struct Case {
    std::string flag;
    std::string value;
  };
  for (const Case& c : std::vector<Case>{{"kubelet-plugins-dir", "var/lib/kubelet/plugins"},
                                         {"kubelet-plugins-dir", ""},
                                         {"kubelet-registry-dir", "plugins_registry"},
                                         {"kubelet-registry-dir", ""}}) {
    BOOST_TEST_CONTEXT(c.flag << " \"" << c.value << "\"") {
      auto r = Parse({"--strategy=dra", "--node-name=n", "--" + c.flag + "=" + c.value});
      BOOST_REQUIRE(!r.ok());
      BOOST_TEST((r.status().code() == StatusCode::kInvalidArgument));
      BOOST_TEST(r.status().message() == "--" + c.flag + ": \"" + c.value +
                                             "\" is not an absolute path (required with "
                                             "--strategy=dra)");
    }
  }
  // Not used by the device-plugin modes.
  BOOST_TEST(Parse({"--kubelet-plugins-dir=x", "--kubelet-registry-dir="}).ok());
}

BOOST_AUTO_TEST_CASE(warn_is_accepted_for_warning) {
  auto c = Parse({"--log-severity=WARN"});
  BOOST_REQUIRE(c.ok());
  BOOST_TEST((c->options.log_severity == LogSeverity::kWarning));
}

BOOST_AUTO_TEST_CASE(help_lists_every_design_flag_with_its_env_var) {
  auto c = Parse({"--help"});
  BOOST_REQUIRE(c.ok());
  BOOST_TEST((c->action == DaemonCommand::Action::kHelp));
  const std::vector<std::pair<std::string, std::string>> table = {
      {"strategy", "RESOURCE_REGISTER_STRATEGY"},
      {"policy", "POLICY"},
      {"pulse", "PULSE"},
      {"node-name", "NODE_NAME"},
      {"topology-register", "TOPOLOGY_REGISTER"},
      {"resource-multiple", "RESOURCE_MULTIPLE"},
      {"device-split-count", "DEVICE_SPLIT_COUNT"},
      {"log-level", "LOG_LEVEL"},
      {"log-severity", "LOG_SEVERITY"},
      {"device-plugin-path", "DEVICE_PLUGIN_PATH"},
      {"pod-resources-socket", "POD_RESOURCES_SOCKET"},
      {"backend", "HCU_BACKEND"},
      {"sim-node", "HCU_SIM_NODE"},
      {"host-root", "HOST_ROOT"},
      {"hyhal-path", "HYHAL_PATH"},
      {"device-list-strategy", "DEVICE_LIST_STRATEGY"},
      {"cdi-spec-dir", "CDI_SPEC_DIR"},
      {"cdi-hook-path", "CDI_HOOK_PATH"},
      {"cdi-debug-access", "CDI_DEBUG_ACCESS"},
      {"kubeconfig", "KUBECONFIG"},
      {"dra-driver-name", "DRA_DRIVER_NAME"},
      {"kubelet-plugins-dir", "KUBELET_PLUGINS_DIR"},
      {"kubelet-registry-dir", "KUBELET_REGISTRY_DIR"}};
  for (const auto& [flag, env] : table) {
    BOOST_TEST_CONTEXT(flag) {
      BOOST_TEST(c->help_text.find("--" + flag) != std::string::npos);
      BOOST_TEST(c->help_text.find("env " + env) != std::string::npos);
    }
  }
}

BOOST_AUTO_TEST_CASE(version_flag_asks_for_the_version) {
  auto c = Parse({"--version"});
  BOOST_REQUIRE(c.ok());
  BOOST_TEST((c->action == DaemonCommand::Action::kVersion));
}

// --cdi-spec-dir is a host path in every mode (DESIGN §4.4): under a host
// root other than / it is written there, unless it already lies under it.
BOOST_AUTO_TEST_CASE(the_cdi_spec_dir_is_a_host_path_under_any_host_root) {
  const std::vector<std::tuple<std::string, std::string, std::string>> table = {
      // host root, flag, where the daemon writes
      {"/", "/var/run/cdi", "/var/run/cdi"},
      {"/tmp/r", "/var/run/cdi", "/tmp/r/var/run/cdi"},
      {"/tmp/r/", "/etc/cdi", "/tmp/r/etc/cdi"},
      {"/tmp/r", "/tmp/r/var/run/cdi", "/tmp/r/var/run/cdi"},
      {"/tmp/r", "/tmp/rx/cdi", "/tmp/r/tmp/rx/cdi"}};
  for (const auto& [root, flag, want] : table) {
    StatusOr<std::string> dir = CdiSpecWriteDir(root, flag);
    BOOST_REQUIRE(dir.ok());
    BOOST_TEST(*dir == want, root << " + " << flag);
  }
  StatusOr<std::string> relative = CdiSpecWriteDir("/tmp/r", "var/run/cdi");
  BOOST_REQUIRE(!relative.ok());
  BOOST_TEST(relative.status().message() ==
             "--cdi-spec-dir: \"var/run/cdi\" is not an absolute path");
}

BOOST_AUTO_TEST_CASE(cdi_hook_and_debug_access_flags_default_to_the_daemonset_layout) {
  auto c = Parse({});
  BOOST_REQUIRE(c.ok());
  BOOST_TEST(c->options.cdi_hook_path == "/var/lib/hcu-device-plugin/bin/hcu-cdi-hook");
  BOOST_TEST(!c->options.cdi_debug_access);
  auto set = Parse({"--cdi-hook-path=", "--cdi-debug-access=true"});
  BOOST_REQUIRE(set.ok());
  BOOST_TEST(set->options.cdi_hook_path.empty());
  BOOST_TEST(set->options.cdi_debug_access);
}

// A runtime runs the spec's hook by its host path from no known directory:
// a relative one is refused at start-up (exit 2), naming where it came from.
BOOST_AUTO_TEST_CASE(a_cdi_hook_path_that_is_not_absolute_is_refused) {
  const std::vector<std::tuple<std::vector<std::string>, std::map<std::string, std::string>,
                               std::string>>
      cases = {
          {{"--cdi-hook-path=bin/hcu-cdi-hook"},
           {},
           "--cdi-hook-path: \"bin/hcu-cdi-hook\" is not an absolute path"},
          {{},
           {{"CDI_HOOK_PATH", "./hcu-cdi-hook"}},
           "--cdi-hook-path (env CDI_HOOK_PATH): \"./hcu-cdi-hook\" is not an absolute path"},
      };
  for (const auto& [args, env, message] : cases) {
    auto r = Parse(args, env);
    BOOST_REQUIRE(!r.ok());
    BOOST_TEST((r.status().code() == StatusCode::kInvalidArgument));
    BOOST_TEST(r.status().message() == message);
  }
  BOOST_TEST(Parse({"--cdi-hook-path=/opt/hcu-cdi-hook"}).ok());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp::daemon
