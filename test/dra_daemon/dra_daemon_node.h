// DraDaemonNode: one node under DRA-mode test — the fake API server (with
// the Node object, playing the scheduler through DraAllocator), the REAL
// hcu-dp-daemon with --strategy=dra on a private copy of a shipped SimNode,
// and the fake kubelet's plugin watcher on a private registry directory, all
// over real sockets. Shared by the DRA end-to-end suite and its benchmark.
//
// The fake kubelet wipes the node's ResourceSlices (deletecollection with
// fieldSelector spec.nodeName, as kubelet's wipeResourceSlices) whenever it
// starts (FakePluginWatcher::Config::on_start), also on every Restart().
#ifndef HCUDP_TEST_DRA_DAEMON_DRA_DAEMON_NODE_H_
#define HCUDP_TEST_DRA_DAEMON_DRA_DAEMON_NODE_H_

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "dra_prepare/dra_allocator.h"
#include "fake_apiserver/fake_apiserver_process.h"
#include "fake_kubelet/fake_plugin_watcher.h"
#include "hcudp/backend.h"
#include "hcudp/device.h"
#include "integration/daemon_harness.h"

namespace hcudp::testing {

inline constexpr char kDraDriver[] = "dra.hygon.com";
inline constexpr char kDraNode[] = "node-a";
// The K100_AI node whose card index order is not PCI order.
inline constexpr char kProbeOrder[] = "demo/nodes/k100ai-8-probe-order.yaml";
inline constexpr char kClaimNs[] = "ns1";

// The fields of a slice device a test looks at.
struct SliceDevice {
  std::string name;
  std::string type;     // attribute "type"
  std::string pci;      // resource.kubernetes.io/pciBusID (cards)
  std::string parent;   // parentPciBusID (vHCU, MIG)
  std::string product;  // productName (cards)
  std::string uuid;     // uuid (cards: the serial)
  bool tainted = false;
};

// A claim the scheduler allocated: what kubelet passes, and the results.
struct AllocatedClaim {
  std::string name;
  std::string uid;
  std::string json;                  // the stored object, with status.allocation
  std::vector<std::string> devices;  // allocation results' device names
  bool by_allocator = false;         // DraAllocator's (its capacity is given back on delete)
};

class DraDaemonNode {
 public:
  // `node`: a SimNode relative to the source tree. `flags` go after the
  // DRA flags (--strategy=dra --node-name --kubeconfig --kubelet-*-dir
  // --cdi-spec-dir=<host-root>/var/run/cdi). `call_timeout`: the fake
  // kubelet's deadline for Prepare/Unprepare calls (kubelet's is 45 s).
  explicit DraDaemonNode(const std::string& node = "demo/nodes/k100ai-8-probe-order.yaml",
                         std::vector<std::string> flags = {}, std::vector<std::string> env = {},
                         milliseconds call_timeout = milliseconds(45000));
  ~DraDaemonNode();

  // Fake kubelet (wipes slices, then watches), then the daemon; waits for
  // the driver's registration.
  void Start();
  // The daemon only (after a crash or Stop), from `binary` (default: the
  // shipped one) with the constructor's `env` and then this `env`; does not
  // wait.
  void StartDaemon(const std::string& binary = "", const std::vector<std::string>& env = {});
  // SIGTERM; requires exit 0 within 5 s.
  void StopDaemon();
  // Waits for `count` registrations of the driver in total.
  void RequireRegistrations(int count, milliseconds timeout = milliseconds(10000));

  // The node's slices of our driver (GET, no cache) and their devices.
  std::vector<std::string> Slices() const;
  std::vector<SliceDevice> Devices() const;
  // metadata.uid of each slice (a recreated slice has a new one).
  std::set<std::string> SliceUids() const;
  // Waits until `ok(Devices())`; BOOST_REQUIRE with the last list otherwise.
  std::vector<SliceDevice> RequireDevices(
      const std::function<bool(const std::vector<SliceDevice>&)>& ok, milliseconds timeout,
      const std::string& what);

  // Creates a claim (namespace ns1) with `requests_json` (one request object
  // or an array of them) and `constraints_json` (resource.k8s.io/v1
  // spec.devices), allocates it from the current slices
  // (DraAllocator, which remembers what earlier claims consumed) for a pod
  // and writes status.allocation/reservedFor through the status subresource.
  AllocatedClaim CreateAllocatedClaim(const std::string& name, const std::string& requests_json,
                                      const std::string& constraints_json = "");
  // A claim for one device the scheduler picked by a CEL selector (which
  // DraAllocator does not evaluate): status.allocation names `device` for
  // request "hcu", without consumed capacity (an exclusive device).
  AllocatedClaim CreateClaimAllocatedTo(const std::string& name, const std::string& device);
  // What a scheduler writes for the claim `created_json` (the POST's
  // answer): status.allocation with `results_json` (the results' array
  // elements, comma-separated) reserved for a new pod, PUT through the status
  // subresource. The devices are read back from the stored object.
  AllocatedClaim PutAllocation(const std::string& created_json, const std::string& results_json);
  // The simulated node's backend, opened on the daemon's node file and host
  // root (to look at its vHCUs beside the daemon, as an admin's tool would).
  std::unique_ptr<Backend> SimBackend();
  void DeleteClaim(const AllocatedClaim& claim);

  CallOutcome Prepare(const std::vector<AllocatedClaim>& claims);
  CallOutcome Unprepare(const std::vector<AllocatedClaim>& claims);
  // Prepare that must succeed for this one claim; returns its devices.
  std::vector<drav1::Device> MustPrepare(const AllocatedClaim& claim);
  void MustUnprepare(const AllocatedClaim& claim);

  // Host-side state.
  std::string HostPath(const std::string& path) const { return h_->host_root() + path; }
  std::string CdiDir() const { return HostPath("/var/run/cdi"); }
  std::set<std::string> CdiFiles() const;
  std::set<std::string> Marks() const;              // /etc/vdev/dynamic
  std::set<std::string> CheckpointEntries() const;  // claim UIDs
  std::set<std::string> Intents() const;
  // The vHCUs on the node now (discovered through the sim backend).
  std::vector<Vhcu> Vhcus() const;
  std::string CardBdfOfDevice(const std::string& device) const;

  FakeApiServer& api() { return api_; }
  DaemonHarness& h() { return *h_; }
  FakePluginWatcher& kubelet() { return *kubelet_; }
  std::string registry_dir() const { return dir_.Join("plugins_registry"); }
  std::string plugins_dir() const { return dir_.Join("plugins"); }
  // A fresh pod UID for the next claim's reservedFor.
  std::string NextPodUid();

 private:
  void WipeSlices();

  FakeApiServer api_;
  TempDir dir_;
  std::unique_ptr<DaemonHarness> h_;
  std::vector<std::string> env_;  // the constructor's, for every start
  std::unique_ptr<FakePluginWatcher> kubelet_;
  std::unique_ptr<DraAllocator> allocator_;
  int pods_ = 0;
};

// A dynamic vHCU's size in a claim's request: 30 CUs and 8 GiB.
inline constexpr char kThirtyCu[] = R"({"cores":"30","memory":"8Gi"})";

// The one vHCU in `after` that is not in `before` (the daemon made it for a
// claim); fails the test when there is not exactly one.
Vhcu OnlyNewVhcu(const std::vector<Vhcu>& before, const std::vector<Vhcu>& after);

// What a claim's preparation left on the node: checkpoint entries, mark
// files and CDI spec files.
struct PreparedState {
  std::set<std::string> entries, marks, cdi;
};
PreparedState StateOf(DraDaemonNode& n);
// Checks (BOOST_TEST) that the node still holds `want`, naming `when`.
void RequireSameState(DraDaemonNode& n, const PreparedState& want, const std::string& when);

// A claim the daemon prepared on a dynamic vHCU of kThirtyCu, with what the
// node held before and after.
struct DynamicVhcuClaim {
  AllocatedClaim claim;
  std::vector<Vhcu> before;             // the node's vHCUs before the Prepare
  std::vector<drav1::Device> devices;   // what Prepare answered
  Vhcu vhcu;                            // the one the daemon made
  PreparedState prepared;               // what the Prepare left on the node
};
// Starts the daemon on a kProbeOrder node, waits for its 9 devices and
// prepares claim `name` on a dynamic vHCU.
DynamicVhcuClaim StartWithDynamicVhcuClaim(DraDaemonNode& n, const std::string& name);

}  // namespace hcudp::testing

#endif  // HCUDP_TEST_DRA_DAEMON_DRA_DAEMON_NODE_H_
