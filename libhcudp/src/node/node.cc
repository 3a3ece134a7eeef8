// hcudp::Node: open, look, watch, the ledger and the offer rule.

#include "node/node_impl.h"
#include "watch/vhcu_keeper.h"

namespace hcudp {

Node::Impl::Impl(NodeOptions options)
    : options_(std::move(options.options)),
      clock_(options.clock != nullptr ? *options.clock : Clock::Real()),
      backend_(std::move(options.backend)),
      fs_(backend_->host_root()),
      lock_timeout_(options.vhcu_lock_timeout),
      on_lock_wait_(std::move(options.on_lock_wait)) {
  ledger_.host_root = fs_.root();
  ledger_.cdi_dir = options_.cdi_spec_dir.empty() ? std::string() : fs_.Path(options_.cdi_spec_dir);
  ledger_.pod_resources = std::move(options.pod_resources);
}

void Node::Impl::Remember(const NodeInventory& inventory) {
  MutexLock lock(mu_);
  last_good_ = inventory.vhcus;
}

StatusOr<NodeInventory> Node::Impl::Look() {
  // A backend that needs a restart answers nothing trustworthy.
  HCUDP_RETURN_IF_ERROR(backend_->RestartRequired());
  HCUDP_ASSIGN_OR_RETURN(NodeInventory inventory, backend_->Discover());
  {
    MutexLock lock(mu_);
    VhcuKeeper::Apply(last_good_, &inventory);
    last_good_ = inventory.vhcus;
  }
  return inventory;
}

StatusOr<std::unique_ptr<Node>> Node::Open(NodeOptions options) {
  if (options.backend == nullptr) {
    HCUDP_ASSIGN_OR_RETURN(options.backend, OpenBackend(options.options, options.clock));
  }
  auto impl = std::make_unique<Impl>(std::move(options));
  Impl* raw = impl.get();
  // The watcher writes the device-plugin CDI spec where the ledger reads:
  // --cdi-spec-dir is a host path (DESIGN.md §4.4).
  Options watched = raw->options_;
  watched.cdi_spec_dir = raw->ledger_.cdi_dir;
  impl->watcher_ =
      std::make_unique<NodeWatcher>(watched, raw->backend_.get(), &raw->state_, &raw->clock_);
  impl->watcher_->set_inventory_listener([raw](const NodeInventory& inventory) {
    raw->Remember(inventory);
    for (const auto& listener : raw->listeners_) listener(inventory);
  });
  return std::unique_ptr<Node>(new Node(std::move(impl)));
}

Node::Node(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Node::~Node() {
  if (impl_ != nullptr && impl_->watcher_ != nullptr) impl_->watcher_->Stop();
}

StatusOr<NodeInventory> Node::Look() { return impl_->Look(); }
std::shared_ptr<const NodeSnapshot> Node::Snapshot() const { return impl_->state_.Current(); }
NodeState& Node::state() { return impl_->state_; }

void Node::AddInventoryListener(NodeWatcher::InventoryListener listener) {
  impl_->listeners_.push_back(std::move(listener));
}
void Node::set_health_listener(NodeWatcher::HealthListener listener) {
  impl_->watcher_->set_health_listener(std::move(listener));
}
void Node::set_restart_handler(std::function<void()> handler) {
  impl_->watcher_->set_restart_handler(std::move(handler));
}
Status Node::StartWatching() { return impl_->watcher_->Start(); }
bool Node::StopWatching() { return impl_->watcher_->Stop(); }
bool Node::restart_requested() const { return impl_->watcher_->restart_requested(); }

hcudp::Holdings Node::ReadHoldings() const { return impl_->ReadHoldings(); }
hcudp::Holders Node::Holders(const DeviceRef& device) const {
  return impl_->ReadHoldings().Of(device);
}

OfferPlan Node::Offers(const NodeInventory& inventory, OfferMode mode) const {
  internal::LedgerSources sources = impl_->ledger_;
  if (mode == OfferMode::kDevicePlugin) sources.pod_resources = nullptr;
  return DecideOffers(inventory, internal::ReadLedger(sources), mode);
}

StatusOr<OfferPlan> Node::Offers(OfferMode mode) {
  HCUDP_ASSIGN_OR_RETURN(NodeInventory inventory, impl_->Look());
  return Offers(inventory, mode);
}

StatusOr<NodeCreatedVhcu> Node::CreateVhcu(int card, int compute_units, uint64_t memory_mib,
                                           bool force) {
  return impl_->CreateVhcu(card, compute_units, memory_mib, force);
}
StatusOr<NodeDestroyedVhcu> Node::DestroyVhcu(int id, bool force) {
  return impl_->DestroyVhcu(id, force);
}

Backend& Node::backend() { return *impl_->backend_; }
Clock& Node::clock() { return impl_->clock_; }
const Options& Node::options() const { return impl_->options_; }

}  // namespace hcudp
