// A real container runtime consuming our CDI specs (DESIGN §8): Debian's
// podman (4.3, whose CDI library knows cdiVersion up to 0.5.0) with runc,
// starting busybox containers with the CDI devices the daemon names.
//
// The daemon runs on a simulated node, so the host paths its specs name
// (/dev/kfd, /dev/dri/card1, /etc/vdev/vdev4.conf, the hook...) exist under
// its host-root, not on this machine. PodmanRuntime::Install copies each spec
// into podman's spec directory (/var/run/cdi) with its host paths moved under
// the host-root, and nothing else changed: cdiVersion, kind, device names,
// container paths, env, hooks and their arguments are the daemon's. Device
// nodes there are made harmless character devices (1:3, /dev/null's numbers)
// inside the test's temporary directory. One edit is left out, and named:
// a mount into /sys (the card's sysfs directory), which only a host whose
// sysfs has that card can take.
//
// Everything made outside the temporary directories (spec files, the busybox
// image, containers) carries the prefix "hcudp-runtime-test" and is removed
// by the destructor, and at the next start if a run was killed.
#ifndef HCUDP_TEST_RUNTIME_PODMAN_RUNTIME_H_
#define HCUDP_TEST_RUNTIME_PODMAN_RUNTIME_H_

#include <map>
#include <set>
#include <string>
#include <vector>

#include "testing/testutil.h"

namespace hcudp::testing {

// What a container saw, from its own shell.
struct ContainerView {
  int exit_code = -1;
  std::string output;                            // everything, for messages
  std::map<std::string, std::string> env;        // NAME -> value
  std::set<std::string> dev;                     // every path under /dev
  std::map<std::string, std::string> char_devs;  // path -> "major:minor" (hex)
  std::map<std::string, std::string> links;      // /dev/dri/by-path/x -> target
  std::map<std::string, std::string> files;      // asked-for path -> content
};

class PodmanRuntime {
 public:
  PodmanRuntime();   // removes leftovers, makes the busybox image
  ~PodmanRuntime();  // removes the image, containers and installed specs
  PodmanRuntime(const PodmanRuntime&) = delete;
  PodmanRuntime& operator=(const PodmanRuntime&) = delete;

  // Installs the spec at `spec_path` (written by a daemon whose host-root is
  // `host_root`) for podman, as described above. Returns the container
  // paths of the /sys mounts left out.
  std::vector<std::string> Install(const std::string& spec_path, const std::string& host_root);
  // Removes the installed specs (before the daemon's next ones).
  void Uninstall();

  // Runs a busybox container with the CDI `devices` (fully qualified
  // names), reading the files `read` inside it.
  ContainerView Run(const std::vector<std::string>& devices,
                    const std::vector<std::string>& read = {});

 private:
  const bool made_spec_dir_;  // /var/run/cdi was not there before
  TempDir dir_;
  std::vector<std::string> installed_;
  int containers_ = 0;
};

// The container paths of the device nodes, mounts and by-path links that
// the spec at `spec_path` gives CDI device `name` (with the spec's own
// containerEdits): what a container with that device must hold.
struct SpecEdits {
  std::string cdi_version;
  std::set<std::string> device_nodes;  // container paths
  std::set<std::string> mounts;        // container paths
  std::map<std::string, std::string> links;  // /dev/dri/by-path/x -> ../node
  std::vector<std::string> env;
};
SpecEdits EditsOf(const std::string& spec_path, const std::string& name);

}  // namespace hcudp::testing

#endif  // HCUDP_TEST_RUNTIME_PODMAN_RUNTIME_H_
