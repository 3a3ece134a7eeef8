// One hcu-dp-daemon under test: its own temporary plugin directory, host
// root, CDI directory and a private copy of the SimNode file (so tests may
// edit it), a FakeKubelet serving that plugin directory, and the daemon
// process (build/<preset>/hcu-dp-daemon/hcu-dp-daemon). When the test case
// has failed, the destructor prints the daemon's output.
#ifndef HCUDP_TEST_INTEGRATION_DAEMON_HARNESS_H_
#define HCUDP_TEST_INTEGRATION_DAEMON_HARNESS_H_

#include <yaml-cpp/yaml.h>

#include <chrono>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "fake_kubelet/daemon_process.h"
#include "fake_kubelet/fake_kubelet.h"
#include "testing/sanitizer.h"
#include "testing/testutil.h"

namespace hcudp::testing {

using std::chrono::milliseconds;
using std::chrono::seconds;

// Generous upper bounds; tests poll and normally finish far sooner.
// A deadline against hanging, not a speed check: a daemon under ASan on a
// loaded machine took over 10 s to register.
constexpr milliseconds kRegisterTimeout{10000 * kSanitizerSlowdown};
constexpr milliseconds kHealthTimeout{5000};

std::string DaemonBinary();

// The backend the daemons under test use: "sim" (--backend=sim), or "host"
// when HCUDP_TEST_BACKEND=host, which runs the same suites on --backend=host
// with the stand-in vendor libraries of test/stub_vendor serving the node.
bool UsingHostBackend();
// The --hyhal-path the harness passes (the stand-in hyhal on the host
// backend, /opt/hyhal otherwise); Allocate mounts it at /opt/hyhal.
std::string HyhalPath();
// Every environment variable the daemon reads (DESIGN.md §3), removed from
// the child's environment so the runner's shell cannot change the outcome.
const std::vector<std::string>& DaemonEnvVars();

class DaemonHarness {
 public:
  // `node` is relative to the source tree ("demo/nodes/k100ai-8.yaml").
  // `flags` are added after the harness's own (--backend, --sim-node,
  // --host-root, --device-plugin-path, --cdi-spec-dir, --hyhal-path).
  explicit DaemonHarness(const std::string& node, std::vector<std::string> flags = {},
                         std::vector<std::string> env = {});
  ~DaemonHarness();

  // Starts the fake kubelet (unless told not to) and then the daemon.
  void Start(bool start_kubelet = true);
  void StartKubelet();
  void StartDaemon();

  // Waits for `resource` to register and send its first list; fails the
  // test (BOOST_REQUIRE) with the daemon's log otherwise.
  ResourceSnapshot RequireRegistered(const std::string& resource, int count = 1,
                                     milliseconds timeout = kRegisterTimeout);
  // Waits until the resource's device IDs are exactly `ids`.
  ResourceSnapshot RequireIds(const std::string& resource, const std::set<std::string>& ids,
                              milliseconds timeout = kRegisterTimeout);

  // Loads the node copy, lets `edit` change it, checks the result still
  // parses as a SimNode and atomically replaces the file (temp + rename).
  void EditNode(const std::function<void(YAML::Node&)>& edit);
  // Sets `health:` of the card with this index.
  void SetCardHealth(int card_index, const std::string& health);
  // Takes the card with this index off the node (a card the driver lost).
  void RemoveCard(int card_index);

  FakeKubelet& kubelet() { return *kubelet_; }
  DaemonProcess& daemon() { return daemon_; }
  std::string node_path() const { return dir_.Join("node.yaml"); }
  std::string host_root() const { return dir_.Join("root"); }
  std::string plugin_dir() const { return dir_.Join("plugins"); }
  // Under the host root: --cdi-spec-dir is a host path (DESIGN §4.4).
  std::string cdi_dir() const { return dir_.Join("root/var/run/cdi"); }
  std::string log_path() const { return dir_.Join("daemon.log"); }
  const std::vector<std::string>& argv() const { return argv_; }
  // When StartDaemon() forked the daemon.
  std::chrono::steady_clock::time_point daemon_started_at() const { return started_at_; }
  // Files in the plugin directory whose names start with "hygon.com_".
  std::vector<std::string> PluginSockets() const;
  // "name inode N socket" per entry of the plugin directory, for diagnostics.
  std::string ListPluginDir() const;

 private:
  TempDir dir_;
  std::vector<std::string> argv_;
  std::vector<std::string> env_;
  std::unique_ptr<FakeKubelet> kubelet_;
  DaemonProcess daemon_;
  std::chrono::steady_clock::time_point started_at_;
};

// Allocate of `ids` for one container, once `resource` has registered (each
// resource registers on its own); fails the test (BOOST_REQUIRE) unless it
// succeeds with exactly one container response, which it returns.
v1beta1::ContainerAllocateResponse AllocateOne(DaemonHarness& h, const std::string& resource,
                                               const std::vector<std::string>& ids);

// Device IDs of a ListAndWatch list.
std::set<std::string> Ids(const std::vector<v1beta1::Device>& devices);
// "host -> container (perm)" per DeviceSpec, and "host -> container (ro|rw)"
// per Mount, for whole-set comparisons.
std::set<std::string> DeviceSpecs(const v1beta1::ContainerAllocateResponse& response);
std::set<std::string> Mounts(const v1beta1::ContainerAllocateResponse& response);
std::string DeviceSpec(const std::string& path, const std::string& permissions = "rw");
std::string Mount(const std::string& host, const std::string& container, bool read_only = true);

// Demo-node facts (reference/hcu-hardware.md §6).
const std::vector<std::string>& K100Bdfs();                   // index 0..7, NUMA = index
std::vector<std::string> MigIds(const std::string& profile);  // bw-mig, e.g. "4g.31gb"
// vdev6.conf as the driver writes it for a 20-CU, 4 GiB vHCU on z100l-mixed's
// card 0 (0000:0b:00.0): a vHCU made without hcuctl.
extern const char kZ100lCard0Vdev6Conf[];

}  // namespace hcudp::testing

#endif  // HCUDP_TEST_INTEGRATION_DAEMON_HARNESS_H_
