// DraAgent: DRA mode's runtime without gRPC (agent.h). Two threads of its
// own: the refresh thread recomputes the offer (slices) and the health of
// the prepared devices whenever asked (node change, Prepare, Unprepare,
// Recover, a tick that changed something); the tick thread drives the
// retries of the preparer and the vHCU manager.
#include "hcudp/dra/agent.h"

#include <malloc.h>

#include <atomic>
#include <condition_variable>
#include <iterator>
#include <map>
#include <thread>
#include <utility>

#include "hcudp/kube_ops.h"
#include "hcudp_internal/clock_wait.h"
#include "hcudp_internal/log.h"
#include "hcudp_internal/thread_annotations.h"

namespace hcudp::dra {

class DraAgent::Impl {
 public:
  Impl(Node& node, KubeClient& client, DraAgentOptions options)
      : node_(node),
        state_(node.state()),
        client_(client),
        o_(std::move(options)),
        clock_(o_.clock != nullptr ? *o_.clock : node.clock()) {}
  ~Impl() { Stop(); }

  Status Build();
  StatusOr<RecoverResult> Recover();
  void Start();
  void Cancel() { stopping_ = true; }
  void Stop();
  void OnNodeChanged();
  StatusOr<PrepareAnswer> Prepare(const ClaimRef& claim, std::optional<Clock::TimePoint> deadline);
  Status Unprepare(const ClaimRef& claim);
  void RequestResync() { publisher_->RequestResync(); }
  std::vector<DeviceHealth> Health() const;
  std::vector<PreparedClaim> Prepared() const { return preparer_->Prepared(); }
  PublisherState slices() const { return publisher_->state(); }
  PoolPlan Pool() const {
    MutexLock lock(mu_);
    return pool_;
  }

 private:
  void RequestRefresh();
  void Refresh();
  void RefreshLoop();
  void TickLoop();

  Node& node_;
  const NodeState& state_;  // the Node's
  KubeClient& client_;
  DraAgentOptions o_;
  Clock& clock_;
  std::atomic<bool> stopping_{false};  // ends API calls in flight
  std::unique_ptr<VhcuManager> vhcus_;
  std::unique_ptr<Preparer> preparer_;
  std::unique_ptr<SlicePublisher> publisher_;
  std::thread refresher_;
  std::thread ticker_;
  bool started_ = false;  // Start/Stop's thread only
  bool stopped_ = false;

  mutable Mutex mu_;  // a leaf
  std::condition_variable cv_;
  bool stop_ HCUDP_GUARDED_BY(mu_) = false;
  // Nothing is published before Recover filled the prepared claims.
  bool recovered_ HCUDP_GUARDED_BY(mu_) = false;
  bool refresh_requested_ HCUDP_GUARDED_BY(mu_) = false;
  bool trim_requested_ HCUDP_GUARDED_BY(mu_) = false;
  std::vector<DeviceHealth> health_ HCUDP_GUARDED_BY(mu_);  // without timestamps
  // Claims prepared since snapshot generation N (by UID): the vHCUs they
  // made are not in a snapshot until the watcher publishes a newer one.
  std::map<std::string, uint64_t> made_since_ HCUDP_GUARDED_BY(mu_);
  PoolPlan pool_ HCUDP_GUARDED_BY(mu_);
  bool ledger_unknown_ HCUDP_GUARDED_BY(mu_) = false;  // the last refresh met a ledger gap
};

Status DraAgent::Impl::Build() {
  if (o_.slices.params.node_uid.empty()) {
    // The Node's UID makes the slices garbage-collected with it. The API may
    // be down: publish without the owner rather than not at all.
    CallOptions call;
    call.deadline = Clock::Real().Now() + o_.node_get_timeout;  // the client runs on real time
    call.cancel = &stopping_;
    StatusOr<NodeObject> node = GetNode(client_, o_.slices.params.node_name, call);
    if (node.ok()) {
      o_.slices.params.node_uid = node->metadata.uid;
    } else {
      LOG(WARNING) << "DRA: node " << o_.slices.params.node_name << ": " << node.status().ToString()
                   << "; slices are published without the Node as owner";
    }
  }
  HCUDP_ASSIGN_OR_RETURN(publisher_, SlicePublisher::New(client_, o_.slices));
  o_.preparer.host_root = node_.backend().host_root();  // one node, one root
  o_.vhcus.host_root = o_.preparer.host_root;
  vhcus_ = std::make_unique<VhcuManager>(&node_.backend(), o_.vhcus);
  PreparerOptions po = o_.preparer;
  po.on_change = [this] { RequestRefresh(); };
  ClaimFetcher fetch =
      o_.fetch ? o_.fetch : KubeClaimFetcher(&client_, o_.claim_get_timeout, &stopping_);
  preparer_ = std::make_unique<Preparer>(&node_.backend(), vhcus_.get(), std::move(fetch),
                                         std::move(po), clock_);
  return OkStatus();
}

StatusOr<RecoverResult> DraAgent::Impl::Recover() {
  StatusOr<RecoverResult> r = preparer_->Recover();
  if (r.ok()) {
    MutexLock lock(mu_);
    recovered_ = true;
  }
  return r;
}

void DraAgent::Impl::Start() {
  if (started_ || stopped_) return;
  started_ = true;
  publisher_->Start();
  refresher_ = std::thread([this] { RefreshLoop(); });
  OnNodeChanged();  // the first pool: after Recover
  ticker_ = std::thread([this] { TickLoop(); });
}

void DraAgent::Impl::Stop() {
  if (stopped_) return;
  stopped_ = true;
  stopping_ = true;
  {
    MutexLock lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (ticker_.joinable()) ticker_.join();
  if (refresher_.joinable()) refresher_.join();
  if (publisher_) publisher_->Stop();
}

void DraAgent::Impl::OnNodeChanged() {
  if (stopping_) return;
  std::shared_ptr<const NodeSnapshot> snapshot = state_.Current();
  if (snapshot->generation > 0) {
    if (Status st = preparer_->WriteWholeCardSpec(snapshot->inventory); !st.ok()) {
      LOG(ERROR) << "DRA whole-card CDI spec: " << st.ToString();
    }
  }
  RequestRefresh();
}

void DraAgent::Impl::RequestRefresh() {
  {
    MutexLock lock(mu_);
    refresh_requested_ = true;
  }
  cv_.notify_all();
}

void DraAgent::Impl::Refresh() {
  std::shared_ptr<const NodeSnapshot> snapshot = state_.Current();
  const std::vector<PreparedClaim> prepared = preparer_->Prepared();
  bool publish;
  {
    MutexLock lock(mu_);
    publish = recovered_ && snapshot->generation > 0;
  }
  if (publish) {
    const Holdings holdings = node_.ReadHoldings();
    {
      // A record that cannot be read holds the pool back: read again on
      // every tick until it reads (nothing else may say it changed).
      MutexLock lock(mu_);
      ledger_unknown_ = !holdings.Known();
    }
    SliceOffer offer = OfferSlices(snapshot->inventory, holdings);
    StatusOr<PoolPlan> plan = BuildPoolPlan(offer, o_.slices.params);
    if (plan.ok()) {
      if (o_.on_pool) {
        // With taints on, a device is tainted exactly when its card is unhealthy.
        std::vector<std::pair<std::string, bool>> devices;
        for (const PoolDevice& d : plan->devices) devices.emplace_back(d.name, !d.tainted);
        o_.on_pool(devices);
      }
      MutexLock lock(mu_);
      pool_ = std::move(*plan);
    }
    publisher_->SetInventory(std::move(offer));
  }
  std::map<std::string, uint64_t> made_since;
  {
    MutexLock lock(mu_);
    for (auto it = made_since_.begin(); it != made_since_.end();) {
      it = it->second < snapshot->generation ? made_since_.erase(it) : std::next(it);
    }
    made_since = made_since_;
  }
  std::map<std::string, DeviceHealth> by_device;
  for (const PreparedClaim& claim : prepared) {
    for (const PreparedDevice& d : claim.devices) {
      PreparedDevice judged = d;
      // A vHCU made after this snapshot is not in it: not gone, not yet
      // seen. Its card decides until the watcher publishes it.
      if (d.kind == PreparedKind::kDynamicVhcu && made_since.count(claim.uid) != 0) {
        judged.kind = PreparedKind::kCard;
      }
      by_device.emplace(d.pool + "/" + d.device, PreparedDeviceHealth(judged, snapshot->inventory));
    }
  }
  std::vector<DeviceHealth> list;
  for (auto& [key, h] : by_device) list.push_back(std::move(h));
  bool changed;
  {
    MutexLock lock(mu_);
    changed = list != health_;
    if (changed) health_ = std::move(list);
  }
  if (changed && o_.on_health_changed) o_.on_health_changed();
}

void DraAgent::Impl::RefreshLoop() {
  for (;;) {
    {
      MutexLock lock(mu_);
      WaitUntil(clock_, mu_, cv_, clock_.Now() + std::chrono::hours(1),
                [this]() HCUDP_REQUIRES(mu_) { return stop_ || refresh_requested_; });
      if (stop_) return;
      refresh_requested_ = false;
    }
    Refresh();
  }
}

std::vector<DeviceHealth> DraAgent::Impl::Health() const {
  const int64_t now =
      std::chrono::duration_cast<std::chrono::seconds>(clock_.WallNow().time_since_epoch()).count();
  MutexLock lock(mu_);
  std::vector<DeviceHealth> out = health_;
  for (DeviceHealth& h : out) h.last_updated_unix_seconds = now;
  return out;
}

StatusOr<PrepareAnswer> DraAgent::Impl::Prepare(const ClaimRef& claim,
                                                std::optional<Clock::TimePoint> deadline) {
  const uint64_t generation = state_.Current()->generation;
  bool known = false;
  for (const PreparedClaim& c : preparer_->Prepared()) known = known || c.uid == claim.uid;
  StatusOr<PrepareAnswer> answer = preparer_->Prepare(claim, deadline);
  if (!known && answer.ok() && answer->error.empty()) {
    MutexLock lock(mu_);
    made_since_[claim.uid] = generation;
  }
  RequestRefresh();
  return answer;
}

Status DraAgent::Impl::Unprepare(const ClaimRef& claim) {
  Status st = preparer_->Unprepare(claim);
  {
    MutexLock lock(mu_);
    refresh_requested_ = true;
    trim_requested_ = true;
  }
  cv_.notify_all();
  return st;
}

void DraAgent::Impl::TickLoop() {
  Clock::TimePoint next_tick = clock_.Now() + o_.tick_period;
  for (;;) {
    bool trim = false;
    {
      MutexLock lock(mu_);
      WaitUntil(clock_, mu_, cv_, next_tick,
                [this]() HCUDP_REQUIRES(mu_) { return stop_ || trim_requested_; });
      if (stop_) return;
      trim = std::exchange(trim_requested_, false);
    }
    // An Unprepare ended a claim's work: what it allocated is free again but
    // scattered between live chunks, and glibc gives only a heap's top back
    // to the kernel by itself. malloc_trim returns every whole free page of
    // every arena; here, not on the call's thread, as it takes ~0.7 ms
    // (BENCHMARKS.md, "Private memory, re-measured").
    if (trim) malloc_trim(0);
    if (clock_.Now() < next_tick) continue;
    next_tick = clock_.Now() + o_.tick_period;
    // The vHCU destroys a failed Unprepare queued: nothing else drives that
    // queue in DRA mode (the HAMi agent's sweeper does in HAMi mode).
    vhcus_->Tick();
    RecoverResult r = preparer_->Tick();
    bool refresh = r.unprepared > 0 || r.rolled_back > 0 || r.adopted > 0;
    if (refresh) {
      LOG(INFO) << "DRA: " << r.unprepared << " deleted claim(s) unprepared, " << r.adopted
                << " adopted, " << r.pending << " to check again";
    }
    {
      MutexLock lock(mu_);
      refresh = refresh || ledger_unknown_;
    }
    if (refresh) RequestRefresh();
  }
}

StatusOr<std::unique_ptr<DraAgent>> DraAgent::New(Node& node, KubeClient& client,
                                                  DraAgentOptions options) {
  auto impl = std::make_unique<Impl>(node, client, std::move(options));
  HCUDP_RETURN_IF_ERROR(impl->Build());
  return std::unique_ptr<DraAgent>(new DraAgent(std::move(impl)));
}

DraAgent::DraAgent(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
DraAgent::~DraAgent() = default;
StatusOr<RecoverResult> DraAgent::Recover() { return impl_->Recover(); }
void DraAgent::Start() { impl_->Start(); }
void DraAgent::Cancel() { impl_->Cancel(); }
void DraAgent::Stop() { impl_->Stop(); }
void DraAgent::OnNodeChanged() { impl_->OnNodeChanged(); }
StatusOr<PrepareAnswer> DraAgent::Prepare(const ClaimRef& claim,
                                          std::optional<Clock::TimePoint> deadline) {
  return impl_->Prepare(claim, deadline);
}
Status DraAgent::Unprepare(const ClaimRef& claim) { return impl_->Unprepare(claim); }
void DraAgent::RequestResync() { impl_->RequestResync(); }
std::vector<DeviceHealth> DraAgent::Health() const { return impl_->Health(); }
std::vector<PreparedClaim> DraAgent::Prepared() const { return impl_->Prepared(); }
PublisherState DraAgent::slices() const { return impl_->slices(); }
PoolPlan DraAgent::Pool() const { return impl_->Pool(); }

}  // namespace hcudp::dra
