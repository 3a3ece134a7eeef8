#include "metrics.h"

#include <prometheus/collectable.h>
#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/histogram.h>
#include <prometheus/metric_family.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <atomic>
#include <mutex>

#include "hcudp/backend_wrapper.h"
#include "hcudp/version.h"
#include "hcudp_internal/metrics_server.h"

namespace hcudp::daemon {
namespace {

using prometheus::ClientMetric;
using prometheus::Counter;
using prometheus::Family;
using prometheus::Histogram;
using prometheus::MetricFamily;
using prometheus::MetricType;

std::atomic<DaemonMetrics*> g_active{nullptr};

const char* Result(bool ok) { return ok ? "ok" : "error"; }

double Seconds(std::chrono::nanoseconds d) { return std::chrono::duration<double>(d).count(); }

// Allocate, Prepare: sub-millisecond when served from the snapshot, up to
// seconds when a vHCU is made or the API server is slow.
const Histogram::BucketBoundaries& CallBuckets() {
  static const Histogram::BucketBoundaries b = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                                0.1,    0.25,  0.5,    1,     2.5,  5,     10};
  return b;
}

ClientMetric Gauge(std::vector<ClientMetric::Label> labels, double value) {
  ClientMetric m;
  m.label = std::move(labels);
  m.gauge.value = value;
  return m;
}

MetricFamily GaugeFamily(const char* name, const char* help) {
  MetricFamily f;
  f.name = name;
  f.help = help;
  f.type = MetricType::Gauge;
  return f;
}

}  // namespace

struct DaemonMetrics::Families {
  Family<Counter>* allocate = nullptr;
  Family<Histogram>* allocate_seconds = nullptr;
  Family<Counter>* transitions = nullptr;
  Family<Counter>* vhcu_create = nullptr;
  Family<Counter>* vhcu_destroy = nullptr;
  Family<Histogram>* vhcu_create_seconds = nullptr;
  Family<Counter>* api = nullptr;
  std::atomic<Family<Counter>*> prepare{nullptr};  // set last by EnableDra
  Family<Histogram>* prepare_seconds = nullptr;
  Family<Counter>* unprepare = nullptr;
  Family<Histogram>* unprepare_seconds = nullptr;
};

// The gauges that describe the node, computed from the current snapshot at
// each scrape: nothing to keep in step between scrapes.
class DaemonMetrics::NodeCollector final : public prometheus::Collectable {
 public:
  void set_state(const NodeState& state) {
    MutexLock lock(mu_);
    state_ = &state;
  }

  void set_registrations(std::function<std::vector<std::pair<std::string, bool>>()> f) {
    MutexLock lock(mu_);
    registrations_ = std::move(f);
  }

  std::vector<MetricFamily> Collect() const override {
    const NodeState* state;
    {
      MutexLock lock(mu_);
      state = state_;
    }
    auto snapshot = state != nullptr ? state->Current() : std::make_shared<const NodeSnapshot>();
    std::vector<MetricFamily> out;
    out.reserve(5);

    MetricFamily info = GaugeFamily("hcudp_build_info", "Always 1; the daemon's version.");
    info.metric.push_back(Gauge({{"version", Version()}}, 1));
    out.push_back(std::move(info));

    MetricFamily registered = GaugeFamily(
        "hcudp_resource_registered", "1 when the resource is registered with kubelet, else 0.");
    std::function<std::vector<std::pair<std::string, bool>>()> registrations;
    {
      MutexLock lock(mu_);
      registrations = registrations_;
    }
    if (registrations) {
      for (const auto& [name, yes] : registrations()) {
        registered.metric.push_back(Gauge({{"resource", name}}, yes ? 1 : 0));
      }
    }
    out.push_back(std::move(registered));

    MetricFamily devices =
        GaugeFamily("hcudp_devices", "Devices listed to kubelet, by resource and health.");
    MetricFamily healthy = GaugeFamily(
        "hcudp_device_healthy",
        "1 when the device is listed Healthy, 0 when Unhealthy (hcucores: see hcudp_devices).");
    {
      // DRA mode lists no device-plugin resources: its devices are the
      // pool's, under the driver's name, as each resource's are otherwise.
      MutexLock lock(mu_);
      if (!dra_driver_.empty()) AddDevices(devices, healthy, dra_driver_, dra_devices_, true);
    }
    for (const Resource& r : snapshot->resources) {
      std::vector<std::pair<std::string, bool>> list;
      for (const ResourceDevice& d : r.devices)
        list.emplace_back(d.id, d.health == Health::kHealthy);
      AddDevices(devices, healthy, r.name, list, r.kind != DeviceKind::kHamiCores);
    }
    out.push_back(std::move(devices));
    out.push_back(std::move(healthy));

    MetricFamily vhcus = GaugeFamily("hcudp_vhcus", "Live vHCUs on each card.");
    std::map<std::string, int> counts;
    {
      MutexLock lock(mu_);
      counts = vhcus_;
    }
    for (const auto& [bdf, n] : counts) {
      vhcus.metric.push_back(Gauge({{"card", bdf}}, static_cast<double>(n)));
    }
    out.push_back(std::move(vhcus));
    return out;
  }

  // vHCUs per card as the last successful discovery saw them: the snapshot
  // is republished only when a device list changes, a vHCU need not change one.
  void set_vhcus(std::map<std::string, int> counts) {
    MutexLock lock(mu_);
    vhcus_ = std::move(counts);
  }

  // DRA: the devices of the driver's pool, {name, healthy}, under `driver`.
  void set_dra_devices(std::string driver, std::vector<std::pair<std::string, bool>> devices) {
    MutexLock lock(mu_);
    dra_driver_ = std::move(driver);
    dra_devices_ = std::move(devices);
  }

 private:
  // hcudp_devices of `resource`, and hcudp_device_healthy of each device
  // when `per_device`.
  static void AddDevices(MetricFamily& devices, MetricFamily& healthy, const std::string& resource,
                         const std::vector<std::pair<std::string, bool>>& list, bool per_device) {
    size_t good = 0;
    for (const auto& [name, ok] : list) {
      good += ok ? 1 : 0;
      if (per_device)
        healthy.metric.push_back(Gauge({{"device", name}, {"resource", resource}}, ok));
    }
    devices.metric.push_back(
        Gauge({{"health", "healthy"}, {"resource", resource}}, static_cast<double>(good)));
    devices.metric.push_back(Gauge({{"health", "unhealthy"}, {"resource", resource}},
                                   static_cast<double>(list.size() - good)));
  }

  mutable Mutex mu_;  // a leaf; the function is copied out, then called
  const NodeState* state_ HCUDP_GUARDED_BY(mu_) = nullptr;
  std::function<std::vector<std::pair<std::string, bool>>()> registrations_ HCUDP_GUARDED_BY(mu_);
  std::map<std::string, int> vhcus_ HCUDP_GUARDED_BY(mu_);
  std::string dra_driver_ HCUDP_GUARDED_BY(mu_);  // empty: not DRA mode
  std::vector<std::pair<std::string, bool>> dra_devices_ HCUDP_GUARDED_BY(mu_);
};

namespace {

// The wrapped backend, owned: a base made before BackendWrapper's.
struct OwnedBackend {
  std::unique_ptr<Backend> inner;
};

// Forwards everything; counts vHCU creates and destroys by result.
class MeteredBackend final : private OwnedBackend, public BackendWrapper {
 public:
  MeteredBackend(std::unique_ptr<Backend> inner, DaemonMetrics& metrics)
      : OwnedBackend{std::move(inner)}, BackendWrapper(*OwnedBackend::inner), metrics_(metrics) {}
  StatusOr<Vhcu> CreateVhcu(int card, int compute_units, uint64_t memory_mib) override {
    auto start = std::chrono::steady_clock::now();
    StatusOr<Vhcu> made = target().CreateVhcu(card, compute_units, memory_mib);
    metrics_.ObserveVhcuCreate(made.ok(), std::chrono::steady_clock::now() - start);
    return made;
  }
  Status DestroyVhcu(int id) override {
    Status st = target().DestroyVhcu(id);
    metrics_.ObserveVhcuDestroy(st.ok());
    return st;
  }

 private:
  DaemonMetrics& metrics_;
};

}  // namespace

DaemonMetrics::DaemonMetrics(const Options& options)
    : options_(options),
      registry_(std::make_shared<prometheus::Registry>()),
      f_(std::make_unique<Families>()),
      node_(std::make_shared<NodeCollector>()) {
  auto& r = *registry_;
  f_->allocate = &prometheus::BuildCounter()
                      .Name("hcudp_allocate_requests_total")
                      .Help("Allocate calls from kubelet, by resource and result.")
                      .Register(r);
  f_->allocate_seconds = &prometheus::BuildHistogram()
                              .Name("hcudp_allocate_duration_seconds")
                              .Help("Time to serve an Allocate call, by resource.")
                              .Register(r);
  f_->transitions = &prometheus::BuildCounter()
                         .Name("hcudp_card_health_transitions_total")
                         .Help(
                             "Changes of a card's reported health, by card (PCI BDF) and the "
                             "health it changed to.")
                         .Register(r);
  f_->vhcu_create = &prometheus::BuildCounter()
                         .Name("hcudp_vhcu_creates_total")
                         .Help("vHCU creations by this daemon, by result.")
                         .Register(r);
  f_->vhcu_destroy = &prometheus::BuildCounter()
                          .Name("hcudp_vhcu_destroys_total")
                          .Help("vHCU destructions by this daemon, by result.")
                          .Register(r);
  f_->vhcu_create_seconds = &prometheus::BuildHistogram()
                                 .Name("hcudp_vhcu_create_duration_seconds")
                                 .Help("Time the driver took to create a vHCU.")
                                 .Register(r);
  f_->api = &prometheus::BuildCounter()
                 .Name("hcudp_apiserver_requests_total")
                 .Help(
                     "Kubernetes API requests, by verb (HTTP method, or WATCH) and HTTP code (0: "
                     "no response).")
                 .Register(r);
  for (bool ok : {true, false}) {
    f_->vhcu_create->Add({{"result", Result(ok)}});
    f_->vhcu_destroy->Add({{"result", Result(ok)}});
  }
  f_->vhcu_create_seconds->Add({}, CallBuckets());
  if (options.strategy == Strategy::kHami || options.strategy == Strategy::kDra) {
    // 200 and 0 (no response): the API client's alert (doc/metrics.md)
    // sees its first failure.
    for (const char* verb : {"GET", "POST", "PATCH", "PUT", "DELETE", "WATCH"}) {
      f_->api->Add({{"code", "200"}, {"verb", verb}});
      f_->api->Add({{"code", "0"}, {"verb", verb}});
    }
  }
}

DaemonMetrics::~DaemonMetrics() {
  if (Active() == this) SetActive(nullptr);
  server_.reset();  // stops the server threads before what they read goes
}

StatusOr<std::unique_ptr<DaemonMetrics>> DaemonMetrics::Start(const std::string& address,
                                                              const Options& options) {
  HCUDP_ASSIGN_OR_RETURN(MetricsAddress listen, ParseMetricsAddress(address));
  std::unique_ptr<DaemonMetrics> m(new DaemonMetrics(options));
  DaemonMetrics* self = m.get();
  HCUDP_ASSIGN_OR_RETURN(
      m->server_, MetricsServer::Start(listen, address, [self] { return self->Exposition(); }));
  return m;
}

int DaemonMetrics::port() const { return server_->port(); }

void DaemonMetrics::WatchNode(const NodeState& state) { node_->set_state(state); }

std::optional<std::string> DaemonMetrics::Exposition() {
  std::vector<MetricFamily> families;
  {
    // StopServing waits for a scrape that reads the node's collector.
    MutexLock lock(serve_mu_);
    if (!serving_) return std::nullopt;
    if (node_attached_) families = node_->Collect();
    std::vector<MetricFamily> counters = registry_->Collect();
    families.insert(families.end(), std::make_move_iterator(counters.begin()),
                    std::make_move_iterator(counters.end()));
  }
  return prometheus::TextSerializer().Serialize(families);
}

void DaemonMetrics::ServeMetrics(
    std::function<std::vector<std::pair<std::string, bool>>()> registrations) {
  // kubelet may register the DRA plugin again: a collectable registered
  // twice would be scraped twice.
  std::call_once(serve_once_, [&] {
    node_->set_registrations(std::move(registrations));
    MutexLock lock(serve_mu_);
    serving_ = true;
    node_attached_ = true;
  });
}

void DaemonMetrics::StopServing() {
  {
    MutexLock lock(serve_mu_);
    node_attached_ = false;
  }
  node_->set_registrations(nullptr);
}

void DaemonMetrics::OnDraPool(std::vector<std::pair<std::string, bool>> devices) {
  node_->set_dra_devices(options_.dra_driver_name, std::move(devices));
}

DaemonMetrics::AllocateSeries DaemonMetrics::SeriesOf(const std::string& resource) {
  {
    MutexLock lock(mu_);
    auto it = allocate_series_.find(resource);
    if (it != allocate_series_.end()) return it->second;
  }
  // Family::Add is idempotent: two threads adding the same labels get the
  // same objects.
  AllocateSeries series;
  series.ok = &f_->allocate->Add({{"resource", resource}, {"result", Result(true)}});
  series.error = &f_->allocate->Add({{"resource", resource}, {"result", Result(false)}});
  series.seconds = &f_->allocate_seconds->Add({{"resource", resource}}, CallBuckets());
  MutexLock lock(mu_);
  allocate_series_.emplace(resource, series);
  return series;
}

void DaemonMetrics::OnPublish(const NodeSnapshot& snapshot) {
  for (const Resource& r : snapshot.resources) SeriesOf(r.name);
  std::vector<std::string> new_cards;
  std::vector<std::pair<std::string, bool>> changed;  // {BDF, healthy now}
  {
    MutexLock lock(mu_);
    for (const Card& c : snapshot.inventory.cards) {
      const bool healthy = c.health == Health::kHealthy;
      auto [it, inserted] = card_healthy_.emplace(c.bdf, healthy);
      if (inserted) {
        new_cards.push_back(c.bdf);
      } else if (it->second != healthy) {
        it->second = healthy;
        changed.emplace_back(c.bdf, healthy);
      }
    }
  }
  for (const std::string& bdf : new_cards) {
    f_->transitions->Add({{"card", bdf}, {"to", "healthy"}});
    f_->transitions->Add({{"card", bdf}, {"to", "unhealthy"}});
  }
  for (const auto& [bdf, healthy] : changed) {
    f_->transitions->Add({{"card", bdf}, {"to", healthy ? "healthy" : "unhealthy"}}).Increment();
  }
}

void DaemonMetrics::OnInventory(const NodeInventory& inventory) {
  std::map<std::string, int> counts;
  for (const Card& c : inventory.cards) counts[c.bdf] = inventory.VhcuCount(c.index);
  node_->set_vhcus(std::move(counts));
}

void DaemonMetrics::ObserveAllocate(const std::string& resource, bool ok,
                                    std::chrono::nanoseconds took) {
  // The series are looked up once per resource: Family::Add builds a label
  // map and hashes it, which would cost more than the rest of this call.
  AllocateSeries series = SeriesOf(resource);
  (ok ? series.ok : series.error)->Increment();
  series.seconds->Observe(Seconds(took));
}

void DaemonMetrics::ObserveVhcuCreate(bool ok, std::chrono::nanoseconds took) {
  f_->vhcu_create->Add({{"result", Result(ok)}}).Increment();
  if (ok) f_->vhcu_create_seconds->Add({}, CallBuckets()).Observe(Seconds(took));
}

void DaemonMetrics::ObserveVhcuDestroy(bool ok) {
  f_->vhcu_destroy->Add({{"result", Result(ok)}}).Increment();
}

void DaemonMetrics::ObserveApiRequest(const std::string& verb, int code) {
  f_->api->Add({{"code", std::to_string(code)}, {"verb", verb}}).Increment();
}

void DaemonMetrics::EnableDra() {
  std::call_once(dra_once_, [this] { RegisterDra(); });
}

void DaemonMetrics::RegisterDra() {
  auto& r = *registry_;
  f_->prepare_seconds = &prometheus::BuildHistogram()
                             .Name("hcudp_dra_prepare_duration_seconds")
                             .Help("Time to prepare one claim (NodePrepareResources).")
                             .Register(r);
  f_->unprepare = &prometheus::BuildCounter()
                       .Name("hcudp_dra_unprepare_requests_total")
                       .Help("Claims unprepared by NodeUnprepareResources, by result.")
                       .Register(r);
  f_->unprepare_seconds = &prometheus::BuildHistogram()
                               .Name("hcudp_dra_unprepare_duration_seconds")
                               .Help("Time to unprepare one claim (NodeUnprepareResources).")
                               .Register(r);
  auto* prepare = &prometheus::BuildCounter()
                       .Name("hcudp_dra_prepare_requests_total")
                       .Help("Claims prepared by NodePrepareResources, by result.")
                       .Register(r);
  for (bool ok : {true, false}) {
    prepare->Add({{"result", Result(ok)}});
    f_->unprepare->Add({{"result", Result(ok)}});
  }
  f_->prepare_seconds->Add({}, CallBuckets());
  f_->unprepare_seconds->Add({}, CallBuckets());
  f_->prepare.store(prepare);
}

void DaemonMetrics::ObservePrepare(bool ok, std::chrono::nanoseconds took) {
  Family<Counter>* prepare = f_->prepare.load();
  if (prepare == nullptr) return;
  prepare->Add({{"result", Result(ok)}}).Increment();
  f_->prepare_seconds->Add({}, CallBuckets()).Observe(Seconds(took));
}

void DaemonMetrics::ObserveUnprepare(bool ok, std::chrono::nanoseconds took) {
  if (f_->prepare.load() == nullptr) return;
  f_->unprepare->Add({{"result", Result(ok)}}).Increment();
  f_->unprepare_seconds->Add({}, CallBuckets()).Observe(Seconds(took));
}

std::unique_ptr<Backend> DaemonMetrics::Wrap(std::unique_ptr<Backend> inner) {
  return std::make_unique<MeteredBackend>(std::move(inner), *this);
}

DaemonMetrics* DaemonMetrics::Active() { return g_active.load(); }
void DaemonMetrics::CountApiResponse(const std::string& verb, int code) {
  if (DaemonMetrics* m = Active()) m->ObserveApiRequest(verb, code);
}
void DaemonMetrics::SetActive(DaemonMetrics* metrics) { g_active.store(metrics); }

}  // namespace hcudp::daemon
