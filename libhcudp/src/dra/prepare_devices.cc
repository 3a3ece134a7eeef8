// Slice device names → node devices, the KubeClient claim fetcher, and the
// Preparer's small shared pieces.

#include "dra/dra_cdi_spec.h"
#include "dra/prepare_impl.h"

namespace hcudp::dra {
namespace {

// What the preparer's CDI specs are built with (the builder's view).
AllocationBuilderOptions BuilderOptions(const PreparerOptions& o) {
  AllocationBuilderOptions b(o.host_root, o.hyhal_path);
  b.cdi_hook_path = o.cdi_hook_path;
  b.cdi_debug_access = o.cdi_debug_access;
  return b;
}

}  // namespace

std::string CardDeviceName(const Card& card) { return CardDeviceName(card.bdf); }

std::string VhcuDeviceName(const Vhcu& vhcu) { return VhcuDeviceName(vhcu.card_bdf, vhcu.id); }

std::string MigDeviceName(const MigInstance& mig) {
  return MigDeviceName(mig.card_bdf, mig.gpu_instance, mig.compute_instance);
}

StatusOr<DeviceTarget> ResolveDevice(const NodeInventory& inventory, std::string_view name) {
  DeviceTarget t;
  for (const Card& card : inventory.cards) {
    if (CardDeviceName(card) == name) {
      t.kind = PreparedKind::kCard;
      t.card = card.index;
      return t;
    }
  }
  for (const Vhcu& vhcu : inventory.vhcus) {
    if (VhcuDeviceName(vhcu) == name) {
      t.kind = PreparedKind::kVhcu;
      t.card = vhcu.card;
      t.vhcu_id = vhcu.id;
      return t;
    }
  }
  for (size_t i = 0; i < inventory.mig_instances.size(); ++i) {
    if (MigDeviceName(inventory.mig_instances[i]) == name) {
      t.kind = PreparedKind::kMig;
      t.card = inventory.mig_instances[i].card;
      t.mig_index = static_cast<int>(i);
      return t;
    }
  }
  return NotFoundError("device " + std::string(name.substr(0, 128)) + " is not on this node");
}

ClaimFetcher KubeClaimFetcher(KubeClient* client, std::chrono::milliseconds timeout,
                              const std::atomic<bool>* cancel) {
  return
      [client, timeout, cancel](const ClaimRef& ref,
                                std::optional<Clock::TimePoint> deadline) -> StatusOr<std::string> {
        CallOptions call;
        call.deadline = Clock::Real().Now() + timeout;
        if (deadline && *deadline < *call.deadline) call.deadline = deadline;
        call.cancel = cancel;
        call.within_deadline = true;  // kubelet's deadline, not the shared ladder
        return client->Get(ResourceClaimPath(ref.namespace_name, ref.name), call);
      };
}

bool Retryable(const Status& status) {
  switch (status.code()) {
    case StatusCode::kUnavailable:
    case StatusCode::kDeadlineExceeded:
    case StatusCode::kResourceExhausted:
    case StatusCode::kAborted:
    case StatusCode::kCancelled:
    case StatusCode::kInternal:
      return true;
    default:
      return false;
  }
}

Preparer::Impl::InFlight::InFlight(Impl* impl, const std::string& uid) : impl_(impl), uid_(uid) {
  MutexLock lock(impl_->mu_);
  ok_ = impl_->in_flight_.insert(uid_).second;
}

Preparer::Impl::InFlight::~InFlight() {
  if (!ok_) return;
  MutexLock lock(impl_->mu_);
  impl_->in_flight_.erase(uid_);
}

Preparer::Impl::Impl(Backend* backend, VhcuManager* vhcus, ClaimFetcher fetch,
                     PreparerOptions options, Clock& clock)
    : backend_(backend),
      vhcus_(vhcus),
      fetch_(std::move(fetch)),
      o_(std::move(options)),
      clock_(clock),
      store_(o_.host_root),
      builder_(BuilderOptions(o_)) {}

std::string Preparer::Impl::CdiDir() const { return fs_.Path(o_.cdi_dir); }

std::string Preparer::Impl::ClaimSpecPath(const std::string& uid) const {
  return CdiDir() + "/" + ClaimSpecFileName(o_.driver_name, uid);
}

void Preparer::Impl::Changed() const {
  if (o_.on_change) o_.on_change();
}

std::vector<PreparedClaim> Preparer::Impl::Prepared() const {
  MutexLock lock(mu_);
  std::vector<PreparedClaim> out;
  for (const auto& [uid, claim] : claims_) out.push_back(claim);
  return out;
}

Preparer::Preparer(Backend* backend, VhcuManager* vhcus, ClaimFetcher fetch,
                   PreparerOptions options, Clock& clock)
    : impl_(std::make_unique<Impl>(backend, vhcus, std::move(fetch), std::move(options), clock)) {}
Preparer::~Preparer() = default;
StatusOr<RecoverResult> Preparer::Recover() { return impl_->Recover(); }
// Kubelet's claim references are checked here, at the door: before a GET,
// a file or a log line uses them.
StatusOr<PrepareAnswer> Preparer::Prepare(const ClaimRef& claim,
                                          std::optional<Clock::TimePoint> deadline) {
  HCUDP_RETURN_IF_ERROR(CheckClaimRef(claim));
  return impl_->Prepare(claim, deadline);
}
Status Preparer::Unprepare(const ClaimRef& claim) {
  HCUDP_RETURN_IF_ERROR(CheckClaimRef(claim));
  return impl_->Unprepare(claim);
}
RecoverResult Preparer::Tick() { return impl_->Tick(); }
Status Preparer::WriteWholeCardSpec(const NodeInventory& inventory) {
  return impl_->WriteWholeCardSpec(inventory);
}
std::vector<PreparedClaim> Preparer::Prepared() const { return impl_->Prepared(); }

}  // namespace hcudp::dra
