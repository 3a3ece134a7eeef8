// DaemonMetrics: the daemon's Prometheus endpoint (--metrics-address,
// DESIGN.md §10, doc/metrics.md). prometheus-cpp's metric types, served by
// MetricsServer (our own one-thread HTTP server, hcudp_internal/metrics_server.h) in the
// text format 0.0.4: only
// the hcudp_ families below.
//
// Where the numbers come from:
//   - counters and histograms (Allocate, vHCU create/destroy, health
//     transitions, API requests) are bumped by the code that does the work,
//     through the Observe* calls below;
//   - gauges that describe the node (device health, registration) are
//     computed at scrape time from the NodeState snapshot and the
//     registration view, so they cost nothing between scrapes; vHCUs per
//     card come from the node watcher's last look (OnInventory); in DRA
//     mode the devices are the pool's (OnDraPool).
// Every counter series whose label values are known at start (each result,
// each resource and card of the first snapshot) exists at 0 from the start.
//
// /metrics answers 404 until ServeMetrics() (the daemon serves kubelet).
//
// Thread-safety: every method may be called from any thread.
#ifndef HCU_DP_DAEMON_METRICS_H_
#define HCU_DP_DAEMON_METRICS_H_

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hcudp/backend.h"
#include "hcudp/node_state.h"
#include "hcudp/options.h"
#include "hcudp/status.h"
#include "hcudp_internal/metrics_server.h"
#include "hcudp_internal/thread_annotations.h"

namespace prometheus {
class Registry;
class Counter;
class Histogram;
template <typename T>
class Family;
}  // namespace prometheus

namespace hcudp::daemon {

class DaemonMetrics {
 public:
  // Binds `address` (the flag's value). A bind failure is InvalidArgument
  // naming the flag and the address (a start-up error, exit 2).
  static StatusOr<std::unique_ptr<DaemonMetrics>> Start(const std::string& address,
                                                        const Options& options);
  // The node's state the gauges are computed from (before ServeMetrics; it
  // must outlive the metrics). It is bound before the node is opened, which
  // may wait for the driver.
  void WatchNode(const NodeState& state);
  ~DaemonMetrics();

  // The port actually bound (useful with port 0).
  int port() const;

  // Makes /metrics answer (call once the daemon serves kubelet; later calls
  // do nothing). `registrations` returns {resource, registered} for every
  // resource (in DRA mode: the driver name).
  void ServeMetrics(std::function<std::vector<std::pair<std::string, bool>>()> registrations);

  // Before what `registrations` reads is destroyed (daemon shutdown): the
  // node's series leave /metrics, and a scrape collecting them is waited for.
  void StopServing();

  // A published snapshot (the NodeState listener): seeds the counters of new
  // resources and cards, counts card health transitions.
  void OnPublish(const NodeSnapshot& snapshot);
  // Every look of the node watcher (its inventory listener): the live vHCUs
  // per card.
  void OnInventory(const NodeInventory& inventory);
  // DRA: the devices of the pool the agent computed for the slices, with
  // whether each is healthy (DraAgentOptions::on_pool): hcudp_devices /
  // hcudp_device_healthy, under the driver's name.
  void OnDraPool(std::vector<std::pair<std::string, bool>> devices);

  void ObserveAllocate(const std::string& resource, bool ok, std::chrono::nanoseconds took);
  void ObserveVhcuCreate(bool ok, std::chrono::nanoseconds took);
  void ObserveVhcuDestroy(bool ok);
  // One API server response (code 0: no response, the connection failed).
  void ObserveApiRequest(const std::string& verb, int code);
  // ObserveApiRequest on the Active() instance, if any: what every daemon
  // KubeClient's KubeClientOptions::on_response is set to.
  static void CountApiResponse(const std::string& verb, int code);
  // DRA (--strategy=dra): registers the Prepare/Unprepare series (at 0);
  // until then the two Observe calls below do nothing.
  void EnableDra();
  // NodePrepareResources / NodeUnprepareResources.
  void ObservePrepare(bool ok, std::chrono::nanoseconds took);
  void ObserveUnprepare(bool ok, std::chrono::nanoseconds took);

  // A Backend that owns and forwards to `inner`, and counts vHCU creates
  // and destroys (the metrics must outlive it).
  std::unique_ptr<Backend> Wrap(std::unique_ptr<Backend> inner);

  // The instance the gRPC handlers report to (null when metrics are off).
  static DaemonMetrics* Active();
  static void SetActive(DaemonMetrics* metrics);

 private:
  class NodeCollector;
  struct Families;
  explicit DaemonMetrics(const Options& options);
  struct AllocateSeries {
    prometheus::Counter* ok = nullptr;
    prometheus::Counter* error = nullptr;
    prometheus::Histogram* seconds = nullptr;
  };
  // The Allocate series of `resource`, created (at 0) on first use.
  AllocateSeries SeriesOf(const std::string& resource);
  void RegisterDra();  // once, from EnableDra
  // What GET /metrics answers: nullopt (404) before ServeMetrics.
  std::optional<std::string> Exposition();

  const Options options_;
  std::shared_ptr<prometheus::Registry> registry_;
  std::unique_ptr<Families> f_;
  std::shared_ptr<NodeCollector> node_;
  std::unique_ptr<MetricsServer> server_;
  std::once_flag dra_once_;
  std::once_flag serve_once_;

  // Held while a scrape collects, so StopServing waits for it; taken before
  // the collectors' locks and the registration view's.
  Mutex serve_mu_;
  bool serving_ HCUDP_GUARDED_BY(serve_mu_) = false;
  bool node_attached_ HCUDP_GUARDED_BY(serve_mu_) = false;

  Mutex mu_;  // a leaf: guards the bookkeeping below, never held across a metric call
  std::map<std::string, bool> card_healthy_ HCUDP_GUARDED_BY(mu_);  // by BDF
  std::map<std::string, AllocateSeries> allocate_series_ HCUDP_GUARDED_BY(mu_);
};

}  // namespace hcudp::daemon

#endif  // HCU_DP_DAEMON_METRICS_H_
