#include "model/model_sut.h"

#include <sys/wait.h>
#include <unistd.h>

#include <sstream>
#include <utility>

namespace hcudp::model {

DraSut::DraSut(SutOptions options) : options_(std::move(options)) {}

DraSut::~DraSut() { Close(); }

void DraSut::Close() {
  preparer_.reset();
  manager_.reset();
  node_.reset();
  published_.clear();
  last_seen_.clear();
}

Status DraSut::Open() {
  Close();
  crashed_ = false;
  NodeOptions no;
  no.options.backend = BackendKind::kSim;
  no.options.sim_node_path = options_.sim_node_path;
  no.options.host_root = options_.root;
  no.options.cdi_spec_dir = "/var/run/cdi";
  no.clock = options_.clock;
  no.backend =
      testing::NewFaultySimBackend(options_.sim_node_path, options_.root, options_.faults);
  StatusOr<std::unique_ptr<Node>> node = Node::Open(std::move(no));
  if (!node.ok()) return node.status();
  node_ = std::move(*node);
  VhcuManagerOptions mo;
  mo.host_root = options_.root;
  mo.fresh_mark_grace = std::chrono::milliseconds(0);
  mo.crash_after = [this](VhcuCreateStep step) {
    if (armed_.vhcu && *armed_.vhcu == step) {
      ::_exit(0);  // the kill, in the child RunKilled forked
    }
    return false;
  };
  manager_ = std::make_unique<VhcuManager>(&node_->backend(), mo, *options_.clock);
  dra::PreparerOptions po;
  po.host_root = options_.root;
  po.pool_name = options_.node_name;
  po.recheck_initial_delay = std::chrono::milliseconds(1000);
  po.recheck_max_delay = std::chrono::milliseconds(4000);
  po.crash_after = [this](dra::PrepareStep step) {
    if (armed_.prepare && *armed_.prepare == step) {
      ::_exit(0);  // the kill, in the child RunKilled forked
    }
    return false;
  };
  preparer_ = std::make_unique<dra::Preparer>(&node_->backend(), manager_.get(), options_.fetch,
                                              po, *options_.clock);
  // Before DraAgent, DraMode::Start published first (OnNodeChanged), then
  // ran Recover; DraAgent publishes only once Recover has run.
  if (!options_.republish_after_calls) Look();
  StatusOr<dra::RecoverResult> recovered = preparer_->Recover();
  if (!recovered.ok()) return recovered.status();
  if (options_.republish_after_calls) Republish();
  return OkStatus();
}

bool DraSut::RunKilled(const std::function<void()>& call) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    call();      // the armed hook ends the child at its step
    ::_exit(1);  // not on this call's way: done, killed before it answered
  }
  armed_ = {};
  crashed_ = true;
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

StatusOr<dra::PrepareAnswer> DraSut::Prepare(const dra::ClaimRef& ref) {
  if (armed_.prepare || armed_.vhcu) {
    RunKilled([&] { (void)preparer_->Prepare(ref); });
    return AbortedError("killed inside Prepare");
  }
  auto answer = preparer_->Prepare(ref);
  if (options_.republish_after_calls && !crashed_) Republish();
  return answer;
}

Status DraSut::Unprepare(const dra::ClaimRef& ref) {
  if (armed_.prepare || armed_.vhcu) {
    RunKilled([&] { (void)preparer_->Unprepare(ref); });
    return AbortedError("killed inside Unprepare");
  }
  Status st = preparer_->Unprepare(ref);
  if (options_.republish_after_calls && !crashed_) Republish();
  return st;
}

void DraSut::Tick() {
  manager_->Tick();
  (void)preparer_->Tick();
}

StatusOr<NodeInventory> DraSut::Discover() { return node_->Look(); }

StatusOr<OfferPlan> DraSut::Offers(OfferMode mode) { return node_->Offers(mode); }

std::vector<dra::PreparedClaim> DraSut::Prepared() const { return preparer_->Prepared(); }

void DraSut::Look() {
  StatusOr<NodeInventory> inv = node_->Look();
  if (!inv.ok()) return;  // the watcher keeps the last published state
  std::string digest = InventoryDigest(*inv);
  if (digest == last_seen_) return;
  last_seen_ = digest;
  (void)preparer_->WriteWholeCardSpec(*inv);
  Publish(*inv);
}

void DraSut::Republish() {
  last_seen_.clear();
  Look();
}

void DraSut::Publish(const NodeInventory& inventory) {
  // DraAgent::Impl::Refresh: the one offer rule over the ledger read now.
  dra::SliceOffer offer = dra::OfferSlices(inventory, node_->ReadHoldings());
  dra::SliceParams params;
  params.node_name = options_.node_name;
  auto plan = dra::BuildPoolPlan(offer, params);
  if (!plan.ok()) return;
  const NodeInventory& offered = offer.inventory;
  published_.clear();
  for (const dra::PoolDevice& d : plan->devices) {
    OfferedDevice o;
    o.name = d.name;
    o.type = d.type;
    o.card_bdf = d.card_bdf;
    o.vhcu_id = d.vhcu_id;
    o.tainted = d.tainted;
    if (d.type == dra::PoolDeviceType::kCard) {
      if (const Card* c = offered.FindCardByBdf(d.card_bdf)) {
        o.cores = c->compute_units;
        o.memory_bytes = static_cast<int64_t>(c->memory_bytes);
      }
    } else if (d.type == dra::PoolDeviceType::kVhcu) {
      for (const Vhcu& v : offered.vhcus) {
        if (v.id == d.vhcu_id) {
          o.cores = v.compute_units;
          o.memory_bytes = static_cast<int64_t>(v.memory_bytes());
        }
      }
    } else if (d.mig_index >= 0 && d.mig_index < static_cast<int>(offered.mig_instances.size())) {
      const MigInstance& m = offered.mig_instances[d.mig_index];
      o.cores = m.compute_units;
      o.memory_bytes = static_cast<int64_t>(m.memory_mib * kMiB);
    }
    published_.push_back(std::move(o));
  }
}

std::string InventoryDigest(const NodeInventory& inv) {
  std::ostringstream s;
  for (const Card& c : inv.cards) {
    s << "c" << c.index << c.bdf << static_cast<int>(c.health) << ";";
  }
  for (const Vhcu& v : inv.vhcus) s << "v" << v.id << v.card_bdf << ";";
  for (const MigInstance& m : inv.mig_instances) s << "m" << m.uuid << ";";
  for (const UnknownCard& u : inv.unknown_cards) s << "u" << u.last_known.bdf << ";";
  for (const VhcuStateGap& g : inv.vhcu_gaps) s << "g" << g.vhcu_id << g.path << ";";
  s << "mig" << inv.mig_enabled;
  return s.str();
}

}  // namespace hcudp::model
