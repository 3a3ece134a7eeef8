// HamiAgent: the public face of the agent, Start/Stop and pod-cache events.

#include "hami/agent_impl.h"
#include "hcudp/hami/pending_pod.h"
#include "hcudp/hami_agent.h"
#include "hcudp/naming.h"
#include "hcudp_internal/log.h"
#include "node/ledger_read.h"

namespace hcudp {

namespace {

// The Backend constructor's view of the node: a raw discovery, and the
// ledger's records under host_root.
internal::NodeAccess BackendAccess(Backend* backend, const std::string& host_root) {
  internal::NodeAccess access;
  access.look = [backend] { return backend->Discover(); };
  access.holdings = [host_root] {
    internal::LedgerSources sources;
    sources.host_root = host_root;
    return internal::ReadLedger(sources);
  };
  return access;
}

// On a Node: its host root, and its health verdict (what ListAndWatch
// sends), unless the caller gives its own.
HamiAgentOptions OnNode(Node& node, HamiAgentOptions o) {
  if (o.host_root.empty()) o.host_root = node.backend().host_root();
  if (!o.card_health) {
    o.card_health = [&node](const std::string& bdf) -> std::optional<Health> {
      std::shared_ptr<const NodeSnapshot> snapshot = node.Snapshot();
      for (const Card& card : snapshot->inventory.cards) {
        if (card.bdf == bdf) return card.health;
      }
      return std::nullopt;
    };
  }
  return o;
}

internal::NodeAccess NodeDoor(Node& node) {
  internal::NodeAccess access;
  access.look = [&node] { return node.Look(); };
  access.holdings = [&node] { return node.ReadHoldings(); };
  // After the watcher's first look: named as the plugins' resources are.
  access.hcumem_resource = [&node]() -> std::string {
    const NodeInventory& inventory = node.Snapshot()->inventory;
    if (inventory.cards.empty()) return "hygon.com/hcumem";
    return "hygon.com/" +
           HamiDerivedName(HamiCountName(inventory, node.options().naming_policy), "hcumem");
  };
  return access;
}

}  // namespace

HamiAgent::HamiAgent(Backend* backend, KubeClient* client, HamiAgentOptions options)
    : impl_(std::make_unique<Impl>(backend, client, options, client->clock(),
                                   BackendAccess(backend, options.host_root))) {}

HamiAgent::HamiAgent(Node& node, KubeClient* client, HamiAgentOptions options)
    : impl_(std::make_unique<Impl>(&node.backend(), client, OnNode(node, std::move(options)),
                                   client->clock(), NodeDoor(node))) {}

HamiAgent::~HamiAgent() { Stop(); }

Status HamiAgent::Start() { return impl_->Start(); }
void HamiAgent::Stop() { impl_->Stop(); }
bool HamiAgent::ready() const { return impl_->ready(); }
bool HamiAgent::settled() const { return impl_->settled(); }
void HamiAgent::RequestRegister() { impl_->RequestRegister(); }

StatusOr<std::vector<ContainerAllocation>> HamiAgent::AllocateCount(
    const std::vector<int>& device_counts) {
  return impl_->allocator().AllocateCount(device_counts);
}

StatusOr<std::vector<ContainerAllocation>> HamiAgent::AllocateCores() const {
  return impl_->allocator().AllocateCores();
}

HamiAgent::Impl::Impl(Backend* backend, KubeClient* client, HamiAgentOptions options, Clock& clock,
                      internal::NodeAccess node)
    : ctx_(backend, client, std::move(options), clock, std::move(node)),
      stop_(clock),
      progress_(clock),
      registrar_(ctx_, [this] { progress_.Request(1); }),
      sweeper_(
          ctx_, [this] { progress_.Request(1); }, [this] { registrar_.Request(); }),
      allocator_(ctx_, stop_, [this] { registrar_.Request(); }) {}

HamiAgent::Impl::~Impl() { Stop(); }

Status HamiAgent::Impl::Start() {
  const HamiAgentOptions& options = ctx_.options;
  if (options.node_name.empty()) {
    return InvalidArgumentError("HAMi agent: node name is required (--node-name)");
  }
  if (options.host_root.empty()) return InvalidArgumentError("HAMi agent: host_root is required");
  if (options.split_count < 1) {
    return InvalidArgumentError("HAMi agent: split count must be >= 1");
  }
  if (started_) return OkStatus();
  started_ = true;
  if (ctx_.hcumem_resource.empty() && ctx_.name_hcumem) ctx_.hcumem_resource = ctx_.name_hcumem();
  PodCacheOptions cache;
  cache.field_selector = "spec.nodeName=" + options.node_name;
  cache.on_event = [this](const PodEvent& e) { OnPodEvent(e); };
  cache.clock = &ctx_.clock;  // the agent's clock throughout (tests: simulated)
  ctx_.pods = std::make_unique<PodCache>(ctx_.client, std::move(cache));
  ctx_.pods->Start();
  sweeper_.Start();
  registrar_.Start();
  const Clock::TimePoint deadline = ctx_.clock.Now() + options.start_wait;
  while (!settled() && !stop_.stopped() && ctx_.clock.Now() < deadline) {
    progress_.WaitUntil(deadline, [this] { return settled(); });
  }
  if (stop_.stopped()) return Status(StatusCode::kCancelled, "HAMi agent stopped while starting");
  if (!ready() && options.start_wait.count() > 0) {
    LOG(WARNING) << "HAMi: pod cache of node " << options.node_name
                 << " not synced yet; Allocate is refused until it is";
  }
  return OkStatus();
}

void HamiAgent::Impl::Stop() {
  ctx_.stopping = true;  // aborts API calls in flight
  stop_.Stop();
  progress_.Stop();
  registrar_.Stop();
  sweeper_.Stop();
  if (ctx_.pods) ctx_.pods->Stop();
}

void HamiAgent::Impl::OnPodEvent(const PodEvent& event) {
  bool reclaim = event.type == PodEvent::Type::kDeleted;
  if (event.type == PodEvent::Type::kUpdated && event.new_pod &&
      internal::PodEnded(*event.new_pod) &&
      !(event.old_pod && internal::PodEnded(*event.old_pod))) {
    reclaim = true;
  }
  if (!reclaim) return;
  const auto& gone = event.new_pod ? event.new_pod : event.old_pod;
  if (gone) {
    ctx_.vhcus.ForgetFresh(gone->metadata.uid);
    ctx_.ledger.ClearFailed(gone->metadata.uid);
    // No more of its containers will be served: its lock is no longer ours
    // to keep (the sweep releases it).
    ctx_.ledger.ErasePatchedOf(internal::PodKey(*gone), gone->metadata.uid);
  }
  sweeper_.Request();
}

}  // namespace hcudp
