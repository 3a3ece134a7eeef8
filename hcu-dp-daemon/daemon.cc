#include "daemon.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <thread>

#include "dra_mode.h"
#include "hami_mode.h"
#include "hcudp/allocation.h"
#include "hcudp/backend.h"
#include "hcudp/dlopen_vendor_lib.h"
#include "hcudp/node.h"
#include "hcudp/node_ops.h"
#include "hcudp/version.h"
#include "hcudp_cli/cdi_dir.h"
#include "hcudp_internal/log.h"
#include "hcudp_internal/socket_dir.h"
#include "metrics.h"
#include "plugin_manager.h"

namespace hcudp::daemon {
namespace {

// SIGUSR1 is how the node watcher asks for a restart (Node::
// set_restart_handler): blocked in every thread like SIGTERM, it ends the
// same sigwait, so the shutdown is the same.
sigset_t TerminationSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGUSR1);
  return set;
}

// Start-up steps can block for long in the vendor library (Init waits for
// the driver, minutes by design; a first look may hang with the driver),
// with SIGTERM blocked in every thread. Until Disarm(), a thread of its own
// takes SIGTERM/SIGINT and ends the process at once with 0: nothing of ours
// needs cleaning up before the kubelet sockets are served. Disarm before
// anything that serves or takes the signals itself (the manager, HAMi's
// and DRA's Start); a signal not taken by then stays pending for them.
// The thread sleeps in poll() on a signalfd and an eventfd that Disarm()
// writes, so Disarm returns at once: a timed sigtimedwait loop made every
// start wait for its next tick (25 ms on average of the 70 ms from exec to
// registered, measured with bench_daemon).
class StartupSignalGuard {
 public:
  StartupSignalGuard() : wake_(eventfd(0, EFD_CLOEXEC)), thread_([this] { Run(); }) {}
  ~StartupSignalGuard() { Disarm(); }
  StartupSignalGuard(const StartupSignalGuard&) = delete;
  StartupSignalGuard& operator=(const StartupSignalGuard&) = delete;

  // Returns once the thread no longer takes signals (it may end the process
  // first, if one had just arrived).
  void Disarm() {
    if (!thread_.joinable()) return;
    disarmed_ = true;
    if (wake_ >= 0) {
      const uint64_t one = 1;
      if (write(wake_, &one, sizeof one) < 0) PLOG(WARNING) << "start-up signal guard: wake";
    }
    thread_.join();
    if (wake_ >= 0) close(wake_);
  }

 private:
  static sigset_t Signals() {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    return set;
  }

  void Run() {
    const sigset_t set = Signals();
    // Blocked in every thread, so the signalfd sees them pending. Without
    // either descriptor (a process out of them), a 50 ms poll of the
    // pending signals instead; the 1 s timeout is a backstop only.
    const int pending = wake_ >= 0 ? signalfd(-1, &set, SFD_CLOEXEC) : -1;
    pollfd fds[2] = {{pending, POLLIN, 0}, {wake_, POLLIN, 0}};
    const timespec now{0, 0};
    const timespec tick{0, 50 * 1000 * 1000};
    while (!disarmed_) {
      int signal = -1;
      if (pending >= 0) {
        if (poll(fds, 2, 1000) <= 0 || (fds[0].revents & POLLIN) == 0) continue;
        signal = sigtimedwait(&set, nullptr, &now);
      } else {
        signal = sigtimedwait(&set, nullptr, &tick);
      }
      if (signal != SIGTERM && signal != SIGINT) continue;
      LOG(INFO) << "received " << (signal == SIGTERM ? "SIGTERM" : "SIGINT")
                << " during start-up, before serving; exiting";
      CancelVendorTools();
      std::fflush(nullptr);
      std::_Exit(0);
    }
    if (pending >= 0) close(pending);
  }

  const int wake_;  // eventfd written by Disarm(); -1 when none could be made
  std::atomic<bool> disarmed_{false};
  std::thread thread_;
};

// The builder's view of the flags: files looked at under host-root.
AllocationBuilderOptions BuilderOptions(const Options& options, const std::string& host_root) {
  AllocationBuilderOptions o;
  o.host_root = host_root;
  o.hyhal_path = options.hyhal_path;
  o.cdi_hook_path = options.cdi_hook_path;
  o.cdi_debug_access = options.cdi_debug_access;
  return o;
}

// One plain line (no log prefix), like a bad flag: exit 2 for bad input,
// 1 for anything else.
int StartupError(const Status& status) {
  std::fprintf(stderr, "hcu-dp-daemon: %s\n", status.message().c_str());
  return IsInputError(status) ? 2 : 1;
}

// Waits for SIGTERM/SIGINT, or SIGUSR1 from the watcher; returns the exit
// code (1 when the watcher asked for a restart).
int WaitForTermination(const Node& node) {
  sigset_t set = TerminationSignals();
  int signal = 0;
  // A SIGUSR1 not from the watcher is ignored.
  while (sigwait(&set, &signal) != 0 || (signal == SIGUSR1 && !node.restart_requested())) {
  }
  const int exit_code = signal == SIGUSR1 ? 1 : 0;
  if (exit_code != 0) {
    LOG(INFO) << "restart required, stopping";
  } else {
    LOG(INFO) << "received " << (signal == SIGTERM ? "SIGTERM" : "SIGINT") << ", stopping";
  }
  return exit_code;
}

// Opens the node's one door (hcudp/node.h) on the flags' backend, metered
// when metrics are on. --cdi-spec-dir is a host path (§4.4) wherever it is
// used: the Node writes the device-plugin CDI spec, and reads Hygon's DRA
// state for its ledger, under host-root.
StatusOr<std::unique_ptr<Node>> OpenNode(const Options& options, DaemonMetrics* metrics) {
  HCUDP_ASSIGN_OR_RETURN(std::unique_ptr<Backend> backend, OpenBackend(options));
  NodeOptions o;
  o.options = options;
  // A bad value is an error only where the flag is used (DRA, CDI specs).
  StatusOr<std::string> cdi_dir = CdiSpecHostPath(backend->host_root(), options.cdi_spec_dir);
  if (cdi_dir.ok()) {
    o.options.cdi_spec_dir = *cdi_dir;
  } else if (options.strategy == Strategy::kDra ||
             options.device_list_strategy != DeviceListStrategy::kDevices) {
    return cdi_dir.status();
  }
  o.backend = metrics != nullptr ? metrics->Wrap(std::move(backend)) : std::move(backend);
  return Node::Open(std::move(o));
}

// Events follow the watcher's health verdicts; node labels every look at
// the node (the publisher writes only when a labelled value changed, which
// a changed resource set alone would miss: a driver upgrade), and so do the
// metrics' vHCU counts (`metrics` null when off). A restart the watcher
// asks for ends WaitForTermination.
void ConnectNode(Node& node, NodeOps* node_ops, DaemonMetrics* metrics) {
  node.set_health_listener([node_ops](const Card& card, Health health, const std::string& reason) {
    node_ops->OnHealthChanged(card, health, reason);
  });
  node.AddInventoryListener([node_ops, metrics](const NodeInventory& inventory) {
    node_ops->OnInventory(inventory);
    if (metrics != nullptr) metrics->OnInventory(inventory);
  });
  node.set_restart_handler([] { ::kill(::getpid(), SIGUSR1); });
}

// Stops the watcher; if a look is stuck in a vendor call past the watcher's
// budget, the process ends here with `exit_code` (the thread still uses the
// backend and the node state, which must not be destroyed).
void StopWatcherOrExit(Node& node, int exit_code) {
  if (node.StopWatching()) return;
  LOG(WARNING) << "stopped with a look at the node still running; exiting without waiting for it";
  std::fflush(nullptr);
  std::_Exit(exit_code);
}

// The end of an orderly stop, once the kubelet-facing servers are stopped.
// `servers_stopped` false: a kubelet call never returned and still uses the
// node state and the mode's objects, so none of them may be destroyed; our
// sockets are gone, so the process ends here.
int FinishStop(bool servers_stopped, int exit_code, Node& node, NodeOps& node_ops,
               DaemonMetrics* metrics) {
  if (!servers_stopped) {
    LOG(WARNING) << "stopped with a call still running; exiting without waiting for it";
    std::fflush(nullptr);
    std::_Exit(exit_code);
  }
  // A scrape reads the mode's registrations, which go first.
  if (metrics != nullptr) metrics->StopServing();
  StopWatcherOrExit(node, exit_code);
  node_ops.Stop();
  LOG(INFO) << "stopped";
  return exit_code;
}

// --strategy=dra: kubelet's DRA API instead of device-plugin sockets.
// `metrics` (null when off) is already the active instance; DraMode reports
// Prepare/Unprepare and its API requests to it and makes /metrics answer
// once kubelet has registered the plugin.
int RunDra(const Options& options, Node& node, DaemonMetrics* metrics, StartupSignalGuard& guard) {
  if (metrics != nullptr) metrics->EnableDra();
  auto made = DraMode::New(options, node);
  if (!made.ok()) return StartupError(made.status());
  DraMode& dra = **made;
  // --node-labels, --events, on the mode's API client.
  auto ops = NodeOps::New(options, dra.client(), DaemonMetrics::CountApiResponse);
  if (!ops.ok()) return StartupError(ops.status());
  NodeOps* node_ops = ops->get();
  node.state().set_listener([&dra, metrics, &node] {
    dra.OnNodeChanged();
    if (metrics != nullptr) metrics->OnPublish(*node.Snapshot());
  });
  ConnectNode(node, node_ops, metrics);
  LOG(INFO) << "hcu-dp-daemon " << Version() << " starting: strategy dra, backend "
            << BackendKindName(options.backend) << ", driver " << options.dra_driver_name
            << ", node " << options.node_name;
  if (Status st = node_ops->Start(); !st.ok()) return StartupError(st);
  if (Status st = node.StartWatching(); !st.ok()) {
    LOG(ERROR) << st.ToString();
    node_ops->Stop();
    return 1;
  }
  guard.Disarm();
  if (Status st = dra.Start(); !st.ok()) {
    dra.Stop();
    StopWatcherOrExit(node, st.code() == StatusCode::kCancelled ? 0 : 1);
    node_ops->Stop();
    if (st.code() == StatusCode::kCancelled) return 0;  // SIGTERM before serving
    if (IsInputError(st)) return StartupError(st);
    LOG(ERROR) << "DRA mode: " << st.ToString();
    return 1;
  }
  const int exit_code = WaitForTermination(node);
  CancelVendorTools();
  return FinishStop(dra.Stop(), exit_code, node, *node_ops, metrics);
}

}  // namespace

void BlockTerminationSignals() {
  sigset_t set = TerminationSignals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
}

int RunDaemon(const Options& options) {
  // Start-up input (node file, host root, kubeconfig, socket directory) is
  // checked before anything runs; a problem there is one plain line and
  // exit 2, as for a bad flag.
  StartupSignalGuard guard;
  // Outlives the metrics, whose scrapes read its state.
  std::unique_ptr<Node> opened;
  // Bound first: a port in use is a start-up error before any waiting.
  std::unique_ptr<DaemonMetrics> metrics;
  if (!options.metrics_address.empty()) {
    auto started = DaemonMetrics::Start(options.metrics_address, options);
    if (!started.ok()) return StartupError(started.status());
    metrics = std::move(*started);
    DaemonMetrics::SetActive(metrics.get());  // API calls count from the start
    LOG(INFO) << "metrics on " << options.metrics_address << " (port " << metrics->port()
              << "), /metrics answers once serving";
  }
  if (auto made = OpenNode(options, metrics.get()); made.ok()) {
    opened = std::move(*made);
  } else {
    return StartupError(made.status());
  }
  Node& node = *opened;
  if (metrics) metrics->WatchNode(node.state());
  if (options.strategy == Strategy::kDra) return RunDra(options, node, metrics.get(), guard);
  // The HAMi agent reports its start-up recovery (in Start, below) to the
  // NodeOps built after it, on its API client.
  NodeOps* node_ops = nullptr;
  std::unique_ptr<HamiMode> hami;
  if (options.strategy == Strategy::kHami) {
    auto made = HamiMode::New(options, node, [&node_ops](const VhcuSweepResult& r) {
      if (node_ops != nullptr) node_ops->OnVhcusRecovered(r);
    });
    if (!made.ok()) return StartupError(made.status());
    hami = std::move(*made);
  }
  // --node-labels, --events; destroyed before the mode whose client it uses.
  auto ops =
      NodeOps::New(options, hami ? hami->client() : nullptr, DaemonMetrics::CountApiResponse);
  if (!ops.ok()) return StartupError(ops.status());
  node_ops = ops->get();
  if (Status dir = PrepareSocketDir(options.device_plugin_path, "--device-plugin-path");
      !dir.ok()) {
    return StartupError(dir);
  }
  LOG(INFO) << "hcu-dp-daemon " << Version() << " starting: strategy "
            << StrategyName(options.strategy) << ", backend " << BackendKindName(options.backend)
            << ", socket dir " << options.device_plugin_path;
  AllocationBuilder builder(BuilderOptions(options, node.backend().host_root()));
  PluginManager manager(options, node.state(), builder, hami ? hami->Delegate() : nullptr,
                        hami ? hami->Ready() : nullptr);
  // A node change (health, cards) also re-registers the HAMi annotations.
  HamiMode* hami_mode = hami.get();
  DaemonMetrics* metrics_ptr = metrics.get();
  node.state().set_listener([&manager, hami_mode, metrics_ptr, &node] {
    manager.Wake();
    if (hami_mode != nullptr) hami_mode->RequestRegister();
    if (metrics_ptr != nullptr) metrics_ptr->OnPublish(*node.Snapshot());
  });
  ConnectNode(node, node_ops, metrics.get());
  if (Status st = node_ops->Start(); !st.ok()) return StartupError(st);
  if (Status st = node.StartWatching(); !st.ok()) {
    LOG(ERROR) << st.ToString();
    return 1;
  }
  guard.Disarm();
  if (hami) {
    if (Status st = hami->Start(); !st.ok()) {
      StopWatcherOrExit(node, st.code() == StatusCode::kCancelled ? 0 : 1);
      if (st.code() == StatusCode::kCancelled) return 0;  // SIGTERM before serving
      LOG(ERROR) << "HAMi mode: " << st.ToString();
      return 1;
    }
  }
  if (node.Snapshot()->resources.empty()) {
    LOG(WARNING) << "no resources to register for strategy " << StrategyName(options.strategy)
                 << "; waiting for devices to appear";
  }
  if (Status st = manager.Start(); !st.ok()) {
    LOG(ERROR) << st.ToString();
    if (hami) hami->Stop();
    StopWatcherOrExit(node, 1);
    return 1;
  }

  if (metrics) {
    metrics->ServeMetrics([&manager] { return manager.Registrations(); });
  }

  const int exit_code = WaitForTermination(node);
  // A hung vendor tool (hy-smi) must not hold up the shutdown.
  CancelVendorTools();
  if (hami) hami->Stop();  // first: an Allocate waiting on the API server ends now
  return FinishStop(manager.Stop(), exit_code, node, *node_ops, metrics.get());
}

}  // namespace hcudp::daemon
