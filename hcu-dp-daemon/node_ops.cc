#include "hcudp_internal/log.h"
#include "node_ops.h"

#include "hcudp/kube_config.h"
#include "hcudp_internal/file_util.h"
#include "metrics.h"

namespace hcudp::daemon {

namespace {

// NodeOps' own client, for the modes that have none (mixed, hcu, vhcu,
// mig). Any failure names the file or setting at fault.
StatusOr<std::unique_ptr<KubeClient>> OwnClient(const Options& options) {
  HCUDP_ASSIGN_OR_RETURN(KubeConfig config, ResolveKubeConfig(options.kubeconfig));
  // A token file is read per request; one that cannot be read now would
  // fail every call later.
  if (!config.token_file.empty()) {
    HCUDP_RETURN_IF_ERROR(file_util::ReadFile(config.token_file)
                              .status()
                              .WithContext(config.source + ": token file"));
  }
  KubeClientOptions client_options;
  client_options.request_timeout_ms = 5000;
  client_options.max_retries = 2;  // labels and events ask for none per call
  client_options.on_response = DaemonMetrics::CountApiResponse;
  return KubeClient::New(std::move(config), client_options);
}

}  // namespace

StatusOr<std::unique_ptr<NodeOps>> NodeOps::New(const Options& options, KubeClient* shared_client) {
  std::unique_ptr<NodeOps> ops(new NodeOps());
  ops->strategy_ = options.strategy;
  const bool want_node = options.node_labels == NodeLabelMode::kNode;
  bool want_events = options.events != EventsMode::kFalse;
  if (want_node || want_events) {
    std::string why_not;  // credentials that do not work
    if (shared_client != nullptr) {
      ops->client_ = shared_client;
    } else {
      StatusOr<std::unique_ptr<KubeClient>> own = OwnClient(options);
      if (own.ok()) {
        ops->own_client_ = std::move(*own);
        ops->client_ = ops->own_client_.get();
      } else {
        why_not = own.status().message();
      }
    }
    if (!why_not.empty() && want_node) {
      return InvalidArgumentError("--node-labels=node: " + why_not);
    }
    if (!why_not.empty() && options.events == EventsMode::kTrue) {
      return InvalidArgumentError("--events=true: " + why_not);
    }
    if (why_not.empty() && options.node_name.empty()) why_not = "no --node-name";
    if (!why_not.empty() && options.events == EventsMode::kAuto) {
      LOG(WARNING) << "--events=auto: running without Kubernetes Events: " << why_not;
      want_events = false;
    }
  }
  if (options.node_labels != NodeLabelMode::kOff) {
    NodeLabelPublisherOptions o;
    o.mode = options.node_labels;
    o.nfd_features_dir = options.nfd_features_dir;
    o.node_name = options.node_name;
    o.client = ops->client_;
    ops->labels_ = std::make_unique<NodeLabelPublisher>(std::move(o));
  }
  if (want_events) {
    EventRecorderOptions o;
    o.node_name = options.node_name;
    o.client = ops->client_;
    o.off_when_refused = options.events == EventsMode::kAuto;
    ops->events_ = std::make_unique<EventRecorder>(std::move(o));
  }
  if (!want_node && !want_events) {  // nothing talks to the API server
    ops->own_client_.reset();
    ops->client_ = nullptr;
  }
  return ops;
}

NodeOps::~NodeOps() { Stop(); }

Status NodeOps::Start() {
  if (labels_) HCUDP_RETURN_IF_ERROR(labels_->Start());
  if (events_) HCUDP_RETURN_IF_ERROR(events_->Start());
  if (labels_ || events_) {
    LOG(INFO) << "node labels " << (labels_ ? "on" : "off") << ", events "
              << (events_ ? "on" : "off");
  }
  return OkStatus();
}

void NodeOps::Stop() {
  if (labels_) labels_->Stop();
  if (events_) events_->Stop();
}

void NodeOps::OnInventory(const NodeInventory& inventory) {
  if (labels_) labels_->Update(ComputeNodeLabels(inventory, strategy_));
}

void NodeOps::OnHealthChanged(const Card& card, Health health, const std::string& reason) {
  if (!events_) return;
  std::string note = "card " + card.bdf + " (index " + std::to_string(card.index) + ", " +
                     card.model + ") is " + std::string(HealthName(health));
  if (!reason.empty()) note += ": " + reason;
  if (health == Health::kUnhealthy) {
    events_->Record(EventType::kWarning, kReasonHcuUnhealthy, kActionHealthCheck, note);
  } else {
    events_->Record(EventType::kNormal, kReasonHcuHealthy, kActionHealthCheck, note);
  }
}

void NodeOps::OnVhcusRecovered(const VhcuSweepResult& result) {
  if (!events_ || (result.destroyed == 0 && result.adopted == 0 && result.queued == 0)) return;
  events_->Record(EventType::kWarning, kReasonVhcuRecovered, kActionRecover,
                  "an earlier run stopped during a vHCU create; recovery destroyed " +
                      std::to_string(result.destroyed) + ", adopted " +
                      std::to_string(result.adopted) + ", queued " + std::to_string(result.queued) +
                      " for retry");
}

}  // namespace hcudp::daemon
