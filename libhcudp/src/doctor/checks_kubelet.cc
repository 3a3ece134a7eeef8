// Doctor checks on the kubelet side and on MIG mode.
#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <vector>

#include "doctor/checks.h"
#include "vendor/node_files.h"

namespace hcudp::doctor {
namespace {

std::string PluginDir(const DoctorOptions& o, const internal::HostFs& fs) {
  return fs.Path(o.device_plugin_path);
}

std::string Trailing(const std::string& dir) {
  return !dir.empty() && dir.back() == '/' ? dir : dir + "/";
}

}  // namespace

DoctorCheck CheckKubeletPluginDir(const DoctorOptions& o, const internal::HostFs& fs) {
  struct stat st;
  if (stat(PluginDir(o, fs).c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    return Ok("kubelet-plugin-dir", o.device_plugin_path + " present");
  }
  return Fail("kubelet-plugin-dir", o.device_plugin_path + " missing",
              "start kubelet on this node, or pass --device-plugin-path (k3s and others differ)");
}

DoctorCheck CheckKubeletSocket(const DoctorOptions& o, const internal::HostFs& fs) {
  const std::string shown = Trailing(o.device_plugin_path) + "kubelet.sock";
  struct stat st;
  if (stat((Trailing(PluginDir(o, fs)) + "kubelet.sock").c_str(), &st) != 0) {
    return Fail("kubelet-socket", shown + " missing: kubelet is not serving device plugins",
                "start kubelet, or point --device-plugin-path at its device-plugins directory");
  }
  if (!S_ISSOCK(st.st_mode)) {
    return Warn("kubelet-socket", shown + " exists but is not a socket",
                "restart kubelet so it recreates its registration socket");
  }
  return Ok("kubelet-socket", shown + " present");
}

DoctorCheck CheckPluginSockets(const DoctorOptions& o, const internal::HostFs& fs) {
  std::string found;
  for (const std::string& name : ListDir(PluginDir(o, fs))) {
    if (name.rfind("hygon.com_", 0) == 0) found += (found.empty() ? "" : ", ") + name;
  }
  if (found.empty()) {
    return Warn("plugin-sockets", "no hygon.com_* plugin socket in " + o.device_plugin_path,
                "start the hcu-dp-daemon DaemonSet on this node");
  }
  return Ok("plugin-sockets", found);
}

DoctorCheck CheckMigConsistency(const DoctorOptions& o, const internal::HostFs& fs,
                                std::optional<bool> mig_mode) {
  int ci_confs = 0;
  for (const std::string& name : ListDir(fs.MigCiDir())) {
    if (name.size() > 5 && name.compare(name.size() - 5, 5, ".conf") == 0) ++ci_confs;
  }
  const bool strategy_mig = o.strategy == Strategy::kMig;
  const std::string confs = std::to_string(ci_confs) +
                            " MIG instance conf(s) in "
                            "/etc/dmi_mig_config/ci";
  if (mig_mode.has_value() && *mig_mode) {
    if (ci_confs == 0) {
      return Fail("mig-consistency", "MIG mode is on but " + confs + ": the node serves nothing",
                  "create MIG instances (hy-smi mig -cgi <profile> -C -i <card>) or turn MIG off "
                  "(hy-smi -mig 0)");
    }
    // DRA mode publishes MIG instances as devices of their own.
    if (!strategy_mig && o.strategy != Strategy::kDra) {
      return Fail(
          "mig-consistency",
          "MIG mode is on but strategy is " + std::string(StrategyName(o.strategy)) +
              ": whole cards and vHCUs are unusable",
          "run the plugin with --strategy=mig on this node, or turn MIG off (hy-smi -mig 0)");
    }
    return Ok("mig-consistency", "MIG mode on, " + confs);
  }
  if (mig_mode.has_value()) {  // off
    if (ci_confs > 0) {
      return Warn("mig-consistency", "MIG mode is off but " + confs + " remain",
                  "remove the stale /etc/dmi_mig_config/ci/*.conf files");
    }
    if (strategy_mig) {
      return Fail("mig-consistency", "strategy is mig but MIG mode is off",
                  "turn MIG on (hy-smi -mig 1) and create instances, or use another strategy");
    }
    return Ok("mig-consistency", "MIG mode off, no MIG instance confs");
  }
  // Mode unknown (no libhydmi_mig): judge by the files alone.
  if (strategy_mig && ci_confs == 0) {
    return Fail("mig-consistency", "strategy is mig but " + confs,
                "turn MIG on (hy-smi -mig 1) and create instances");
  }
  if (ci_confs == 0) {
    return Ok("mig-consistency", "no MIG instance confs (MIG mode unknown: no libhydmi_mig)");
  }
  return Warn("mig-consistency", "MIG mode unknown (libhydmi_mig not loadable), " + confs,
              "install libhydmi_mig.so under " + o.hyhal_path + "/lib to check MIG mode");
}

}  // namespace hcudp::doctor
