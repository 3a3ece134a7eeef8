// A fleet of simulated nodes for the fleet benchmark (issue 24): N real
// hcu-dp-daemon processes, each on its own simulated node (a private copy
// of the SimNode YAML, its own host root, plugin directories and node name
// node-NNN), each with its own bearer token against ONE fake API server, as
// the chart runs them (Events on). Device-plugin modes (hami, mixed) get a
// minimal kubelet each (KubeletStub); the DRA mode's slices do not wait for
// kubelet, so DRA nodes have none.
#ifndef HCUDP_TEST_BENCH_FLEET_NODES_H_
#define HCUDP_TEST_BENCH_FLEET_NODES_H_

#include <signal.h>
#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "fake_apiserver/fake_apiserver_process.h"
#include "fake_kubelet/daemon_process.h"
#include "kubelet_stub.h"
#include "testing/testutil.h"

namespace hcudp::bench {

enum class FleetMode { kHami, kDra, kMixed };
const char* ModeName(FleetMode mode);

// One node: its directory, token, kubelet and daemon.
class FleetNode {
 public:
  FleetNode(const std::string& root, int index, FleetMode mode,
            const hcudp::testing::FakeApiServer& api, const std::string& sim_node);
  ~FleetNode();
  FleetNode(const FleetNode&) = delete;
  FleetNode& operator=(const FleetNode&) = delete;

  // Starts the kubelet (device-plugin modes) and the daemon; "" or why not.
  std::string Start(const std::string& daemon_binary);
  const std::string& name() const { return name_; }
  const std::string& token() const { return token_; }
  pid_t pid() const { return daemon_.pid(); }
  bool Running() { return daemon_.Running(); }
  // Marks the node's first card Unhealthy (its SimNode file rewritten, as a
  // driver would report a fault): the daemon's Events then have work.
  void FailFirstCard();
  // Marks it Healthy again.
  void HealFirstCard();
  // SIGTERM, without waiting (the destructor waits): a fleet stops at once.
  void Terminate() { daemon_.Signal(SIGTERM); }
  // Registrations the kubelet saw (0 in DRA mode: no kubelet).
  size_t Registrations();
  std::string Log() const { return daemon_.Log(); }

 private:
  void EditHealth(const std::string& from, const std::string& to);

  std::string dir_;
  std::string name_;
  std::string token_;
  FleetMode mode_;
  std::unique_ptr<hcudp::testing::KubeletStub> kubelet_;
  hcudp::testing::DaemonProcess daemon_;
  std::vector<std::string> args_;
};

// Median VmRSS and Private_Dirty (KiB) of running processes.
struct FleetMemory {
  double rss_kib = 0;
  double private_dirty_kib = 0;
};
FleetMemory MedianMemory(const std::vector<pid_t>& pids);

}  // namespace hcudp::bench

#endif  // HCUDP_TEST_BENCH_FLEET_NODES_H_
