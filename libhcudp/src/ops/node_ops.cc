// NodeOps (hcudp/node_ops.h): which client, which of labels and events.
#include "hcudp/node_ops.h"

#include "hcudp/kube_config.h"
#include "hcudp/node_events.h"
#include "hcudp/node_labels.h"
#include "hcudp_internal/file_util.h"
#include "hcudp_internal/log.h"

namespace hcudp {

struct NodeOps::Impl {
  Strategy strategy = Strategy::kMixed;
  std::unique_ptr<KubeClient> own_client;  // only when no shared client was given
  KubeClient* client = nullptr;
  std::unique_ptr<NodeLabelPublisher> labels;
  std::unique_ptr<EventRecorder> events;
};

namespace {

// NodeOps' own client, for the modes that have none (mixed, hcu, vhcu,
// mig). Any failure names the file or setting at fault.
StatusOr<std::unique_ptr<KubeClient>> OwnClient(
    const Options& options, std::function<void(const std::string&, int)> on_response) {
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
  client_options.on_response = std::move(on_response);
  return KubeClient::New(std::move(config), client_options);
}

}  // namespace

StatusOr<std::unique_ptr<NodeOps>> NodeOps::New(
    const Options& options, KubeClient* shared_client,
    std::function<void(const std::string& verb, int code)> on_response) {
  auto ops = std::make_unique<Impl>();
  ops->strategy = options.strategy;
  const bool want_node = options.node_labels == NodeLabelMode::kNode;
  bool want_events = options.events != EventsMode::kFalse;
  if (want_node || want_events) {
    std::string why_not;  // credentials that do not work
    if (shared_client != nullptr) {
      ops->client = shared_client;
    } else {
      StatusOr<std::unique_ptr<KubeClient>> own = OwnClient(options, std::move(on_response));
      if (own.ok()) {
        ops->own_client = std::move(*own);
        ops->client = ops->own_client.get();
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
    o.client = ops->client;
    ops->labels = std::make_unique<NodeLabelPublisher>(std::move(o));
  }
  if (want_events) {
    EventRecorderOptions o;
    o.node_name = options.node_name;
    o.client = ops->client;
    o.off_when_refused = options.events == EventsMode::kAuto;
    ops->events = std::make_unique<EventRecorder>(std::move(o));
  }
  if (!want_node && !want_events) {  // nothing talks to the API server
    ops->own_client.reset();
    ops->client = nullptr;
  }
  return std::unique_ptr<NodeOps>(new NodeOps(std::move(ops)));
}

NodeOps::NodeOps(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
NodeOps::~NodeOps() { Stop(); }
bool NodeOps::labels_on() const { return impl_->labels != nullptr; }
bool NodeOps::events_on() const { return impl_->events != nullptr; }
KubeClient* NodeOps::client() const { return impl_->client; }

Status NodeOps::Start() {
  if (impl_->labels) HCUDP_RETURN_IF_ERROR(impl_->labels->Start());
  if (impl_->events) HCUDP_RETURN_IF_ERROR(impl_->events->Start());
  if (impl_->labels || impl_->events) {
    LOG(INFO) << "node labels " << (impl_->labels ? "on" : "off") << ", events "
              << (impl_->events ? "on" : "off");
  }
  return OkStatus();
}

void NodeOps::Stop() {
  if (impl_->labels) impl_->labels->Stop();
  if (impl_->events) impl_->events->Stop();
}

void NodeOps::OnInventory(const NodeInventory& inventory) {
  if (impl_->labels) impl_->labels->Update(ComputeNodeLabels(inventory, impl_->strategy));
}

void NodeOps::OnHealthChanged(const Card& card, Health health, const std::string& reason) {
  if (!impl_->events) return;
  std::string note = "card " + card.bdf + " (index " + std::to_string(card.index) + ", " +
                     card.model + ") is " + std::string(HealthName(health));
  if (!reason.empty()) note += ": " + reason;
  if (health == Health::kUnhealthy) {
    impl_->events->Record(EventType::kWarning, kReasonHcuUnhealthy, kActionHealthCheck, note);
  } else {
    impl_->events->Record(EventType::kNormal, kReasonHcuHealthy, kActionHealthCheck, note);
  }
}

void NodeOps::OnVhcusRecovered(const VhcuSweepResult& result) {
  if (!impl_->events || (result.destroyed == 0 && result.adopted == 0 && result.queued == 0))
    return;
  impl_->events->Record(EventType::kWarning, kReasonVhcuRecovered, kActionRecover,
                        "an earlier run stopped during a vHCU create; recovery destroyed " +
                            std::to_string(result.destroyed) + ", adopted " +
                            std::to_string(result.adopted) + ", queued " +
                            std::to_string(result.queued) + " for retry");
}

}  // namespace hcudp
