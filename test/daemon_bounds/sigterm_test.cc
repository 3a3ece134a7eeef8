// SIGTERM is bounded (issue 10 item 2): the real daemon binary exits 0
// within 5 s in each state this suite can put it in — before its first
// sync, during the start-up sweep next to a frozen listener, behind an
// Allocate that never returns (test-only build), during a preferred-
// allocation search on a 1024-card node, and after a FIFO was swapped in
// for its node file. (The HAMi and hy-smi states are tested with their
// components.)
#include <sys/stat.h>

#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <fstream>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "daemon_bounds/bounds_util.h"
#include "integration/daemon_harness.h"
#include "testing/sanitizer.h"

namespace hcudp::testing {
namespace {

namespace fs = std::filesystem;

// The test-only daemon build: Allocate of the ID "test-hook:hold" never
// returns (test_hooks.cc, built into it with HCUDP_DAEMON_TEST_HOOKS).
std::string HookedDaemonBinary() {
  return BinaryPath("test/daemon_bounds/hcu-dp-daemon-testhooks");
}

// A SimNode of `n` K100_AI cards in one HSL mesh.
std::string BigNodeYaml(int n) {
  std::string y =
      "apiVersion: hcudp.hygon.com/v1\nkind: SimNode\nname: big\n"
      "driverVersion: 6.3.27-V1.2.5\ncards:\n";
  for (int i = 0; i < n; ++i) {
    char bdf[32];
    std::snprintf(bdf, sizeof bdf, "0000:%02x:%02x.0", 0x10 + i / 32, i % 32);
    char serial[32];
    std::snprintf(serial, sizeof serial, "T6T82900%08d", i);
    y += std::string("  - index: ") + std::to_string(i) + "\n    bdf: \"" + bdf +
         "\"\n    model: K100_AI\n    pciDeviceId: \"0x6210\"\n    serial: " + serial +
         "\n    computeUnits: 120\n    memoryMiB: 65520\n    numaNode: " + std::to_string(i / 128) +
         "\n    cardMinor: " + std::to_string(i + 1) +
         "\n    renderMinor: " + std::to_string(128 + i) + "\n    health: Healthy\n";
  }
  y += "links:\n  default: {type: HSL, hops: 1, weight: 15}\n";
  return y;
}

// A kubelet.sock whose Register handler never answers (a kubelet wedged
// after accepting the call): released only when the test ends.
class SilentRegistration final : public v1beta1::Registration::Service {
 public:
  grpc::Status Register(grpc::ServerContext* context, const v1beta1::RegisterRequest*,
                        v1beta1::Empty*) override {
    std::unique_lock<std::mutex> lock(mu_);
    ++calls_;
    cv_.notify_all();
    cv_.wait(lock, [&] { return released_ || context->IsCancelled(); });
    return grpc::Status(grpc::StatusCode::UNAVAILABLE, "released");
  }
  bool WaitForCall(milliseconds timeout) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return calls_ > 0; });
  }
  void Release() {
    std::lock_guard<std::mutex> lock(mu_);
    released_ = true;
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int calls_ = 0;
  bool released_ = false;
};

BOOST_AUTO_TEST_SUITE(daemon_sigterm)

BOOST_AUTO_TEST_CASE(before_the_first_sync) {
  // No kubelet, SIGTERM as soon as main has taken over the signals (before
  // that, exec and the dynamic loader run with the default disposition).
  DaemonHarness h("demo/nodes/k100ai-8.yaml", {"--pulse=0"});
  h.StartDaemon();
  BOOST_REQUIRE_MESSAGE(WaitForBlockedSigterm(h.daemon().pid(), milliseconds(5000)),
                        "SIGTERM never blocked:\n"
                            << h.daemon().Log());
  CheckSigtermExit(h.daemon(), "before the first sync");
  BOOST_TEST(h.PluginSockets().empty(), "sockets left behind");
}

BOOST_AUTO_TEST_CASE(during_the_start_up_sweep_next_to_a_frozen_listener) {
  DaemonHarness h("demo/nodes/k100ai-8.yaml", {"--pulse=0"});
  fs::create_directories(h.plugin_dir());
  FrozenListener listener(h.plugin_dir() + "/hygon.com_hcu@1-frozen.sock");
  h.StartDaemon();
  BOOST_REQUIRE(WaitForBlockedSigterm(h.daemon().pid(), milliseconds(5000)));
  CheckSigtermExit(h.daemon(), "start-up sweep with a frozen listener");
}

BOOST_AUTO_TEST_CASE(behind_an_allocate_that_never_returns) {
  BOOST_REQUIRE_MESSAGE(PathExists(HookedDaemonBinary()), HookedDaemonBinary());
  DaemonHarness h("demo/nodes/k100ai-8.yaml", {"--pulse=0"});
  std::vector<std::string> argv = h.argv();
  argv[0] = HookedDaemonBinary();
  h.StartKubelet();
  DaemonProcess daemon;
  BOOST_REQUIRE_EQUAL(daemon.Start(argv, h.log_path(), {}, DaemonEnvVars()), "");
  h.RequireRegistered("hygon.com/hcu");
  grpc::Status held;
  std::thread caller([&] {
    v1beta1::AllocateResponse response;
    held = h.kubelet().Allocate("hygon.com/hcu", {{"test-hook:hold"}}, &response);
  });
  bool holding = daemon.WaitForLog("test hook: holding Allocate", milliseconds(5000));
  BOOST_TEST(holding, "the Allocate never reached the daemon");
  CheckSigtermExit(daemon, "an Allocate in flight that never returns");
  caller.join();
  BOOST_TEST(!held.ok(), "the held Allocate cannot have succeeded");
  BOOST_TEST(h.PluginSockets().empty(), "sockets left behind");
}

BOOST_AUTO_TEST_CASE(during_a_preferred_allocation_search_on_1024_cards) {
  TempDir dir;
  const std::string node = dir.Join("big.yaml");
  WriteFile(node, BigNodeYaml(1024));
  DaemonHarness h("demo/nodes/k100ai-8.yaml",
                  {"--pulse=0", "--strategy=hcu", "--sim-node=" + node});
  h.Start();
  // Discovering 1024 simulated cards takes ~17 s under ASan on a busy machine.
  auto snap = h.RequireRegistered("hygon.com/hcu", 1, milliseconds(30000 * kSanitizerSlowdown));
  BOOST_REQUIRE_EQUAL(snap.devices.size(), 1024u);
  std::vector<std::string> ids;
  for (const auto& d : snap.devices) ids.push_back(d.id());
  grpc::Status status;
  v1beta1::PreferredAllocationResponse response;
  const auto start = std::chrono::steady_clock::now();
  std::thread caller(
      [&] { status = h.kubelet().GetPreferredAllocation("hygon.com/hcu", ids, {}, 2, &response); });
  std::this_thread::sleep_for(milliseconds(20));  // the request is in
  CheckSigtermExit(h.daemon(), "a preferred-allocation search on 1024 cards");
  caller.join();
  BOOST_TEST_MESSAGE(
      "2 of 1024: "
      << (status.ok() ? "answered" : status.error_message()) << " in "
      << std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - start).count()
      << " ms");
}

BOOST_AUTO_TEST_CASE(during_a_register_call_kubelet_never_answers) {
  DaemonHarness h("demo/nodes/k100ai-8.yaml", {"--pulse=0"});
  fs::create_directories(h.plugin_dir());
  SilentRegistration silent;
  grpc::ServerBuilder builder;
  builder.AddListeningPort("unix:" + h.plugin_dir() + "/kubelet.sock",
                           grpc::InsecureServerCredentials());
  builder.RegisterService(&silent);
  std::unique_ptr<grpc::Server> kubelet = builder.BuildAndStart();
  BOOST_REQUIRE(kubelet);
  h.StartDaemon();
  BOOST_REQUIRE_MESSAGE(silent.WaitForCall(milliseconds(10000 * kSanitizerSlowdown)),
                        "no Register call:\n"
                            << h.daemon().Log());
  CheckSigtermExit(h.daemon(), "a Register call kubelet never answers");
  BOOST_TEST(h.PluginSockets().empty(), "sockets left behind");
  silent.Release();
  kubelet->Shutdown(std::chrono::system_clock::now() + milliseconds(100));
}

BOOST_AUTO_TEST_CASE(after_a_fifo_is_swapped_in_for_the_node_file) {
  DaemonHarness h("demo/nodes/k100ai-8.yaml", {"--pulse=0"});
  h.Start();
  h.RequireRegistered("hygon.com/hcu");
  const std::string fifo = h.node_path() + ".fifo";
  BOOST_REQUIRE(::mkfifo(fifo.c_str(), 0644) == 0);
  fs::rename(fifo, h.node_path());
  // The monitor sees the change and tries the file; a FIFO must not block it.
  bool seen = h.daemon().WaitForLog("not a regular file", milliseconds(5000));
  BOOST_TEST(seen, "the node file change was not reported");
  CheckSigtermExit(h.daemon(), "a FIFO in place of the node file");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp::testing
