// `hcuctl doctor --strategy=dra`: what DRA mode needs on top of the driver
// and vendor checks of hcudp::RunDoctor — kubelet's plugin and registry
// directories, the CDI spec directory, the checkpoint directory, the node
// name and readable cluster credentials — one DoctorCheck each, in this
// order: dra-plugins-dir, dra-registry-dir, dra-socket, cdi-dir,
// dra-checkpoint, node-name, kube-credentials. Node paths are read under
// host_root, like every doctor check; nothing is written.
#ifndef HCUCTL_DOCTOR_DRA_H_
#define HCUCTL_DOCTOR_DRA_H_

#include <string>
#include <string_view>
#include <vector>

#include "hcudp/doctor.h"
#include "hcudp/kube_config.h"

namespace hcuctl {

struct DraDoctorOptions {
  std::string host_root = "/";
  // As the daemon's --kubelet-plugins-dir, --kubelet-registry-dir,
  // --dra-driver-name and --cdi-spec-dir (host paths).
  std::string plugins_dir = "/var/lib/kubelet/plugins";
  std::string registry_dir = "/var/lib/kubelet/plugins_registry";
  std::string driver_name = "dra.hygon.com";
  std::string cdi_spec_dir = "/var/run/cdi";
  // --node-name / $NODE_NAME; empty: not set.
  std::string node_name;
  // Credentials, resolved as the daemon does (hcudp::ResolveKubeConfig):
  // --kubeconfig, else in-cluster, else $HOME/.kube/config. Process paths,
  // not under host_root: they are the pod's (or the admin's).
  std::string kubeconfig;
  hcudp::InClusterSource in_cluster;
  std::string home;  // empty: $HOME
};

std::vector<hcudp::DoctorCheck> RunDraChecks(const DraDoctorOptions& options);

// The checks of hcudp::RunDoctor that only the device-plugin strategies need
// (kubelet's device-plugins directory and sockets): dropped in DRA mode.
bool IsDevicePluginCheck(std::string_view name);

// "<dir>/<name>" with one '/' between them (`dir` may end in one).
std::string JoinDir(const std::string& dir, const std::string& name);

}  // namespace hcuctl

#endif  // HCUCTL_DOCTOR_DRA_H_
