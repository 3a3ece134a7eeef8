// One look at the node (NodeWatcher::Impl::Refresh): discovery with the
// fail-closed vHCU merge, health through hysteresis, the resources, the
// CDI spec, and the publish when something changed.

#include <algorithm>
#include <set>

#include "hcudp/cdi.h"
#include "hcudp/offer.h"
#include "hcudp_internal/log.h"
#include "node/ledger_read.h"
#include "watch/inventory_diff.h"
#include "watch/node_watcher_impl.h"

namespace hcudp {
namespace {

NamingParams ParamsOf(const Options& o) {
  NamingParams p;
  p.strategy = o.strategy;
  p.policy = o.naming_policy;
  p.device_split_count = o.device_split_count;
  p.resource_multiple = o.resource_multiple;
  return p;
}

// True when card `index` is one whose state this look could not read.
bool OnUnknownCard(const NodeInventory& inventory, int index) {
  for (const UnknownCard& u : inventory.unknown_cards) {
    if (u.last_known.index == index) return true;
  }
  return false;
}

}  // namespace

void NodeWatcher::Impl::ApplyHealth(const StatusOr<std::vector<CardHealthReport>>& health,
                                    NodeInventory& inventory) {
  std::set<std::string> present;
  for (const Card& c : inventory.cards) {
    present.insert(c.bdf);
    tracker_.Seed(c.bdf, c.health);
  }
  // A card whose state this look could not read is not gone: its health
  // and pending readings stay, so its return is judged with hysteresis
  // rather than taken at its first reading.
  std::set<std::string> tracked = present;
  for (const UnknownCard& u : inventory.unknown_cards) tracked.insert(u.last_known.bdf);
  tracker_.Retain(tracked);
  if (health.ok()) {
    for (const CardHealthReport& r : *health) {
      if (!present.count(r.bdf)) continue;
      Health before = tracker_.Reported(r.bdf, r.health);
      if (tracker_.Record(r.bdf, r.health)) {
        LOG(WARNING) << "card " << r.bdf << " is now " << HealthName(r.health) << " (was "
                     << HealthName(before) << ")" << (r.reason.empty() ? "" : ": " + r.reason);
        const Card* card = inventory.FindCardByBdf(r.bdf);
        if (on_health && card != nullptr) on_health(*card, r.health, r.reason);
      }
    }
  } else {
    LOG(WARNING) << "health query failed, keeping previous health: " << health.status().ToString();
  }
  for (Card& c : inventory.cards) c.health = tracker_.Reported(c.bdf, c.health);
}

StatusOr<std::vector<Resource>> NodeWatcher::Impl::Resources(const NodeInventory& inventory) {
  // Device-plugin strategies list devices by the one offer rule, with the
  // ledger's holders (HAMi marks, intents, DRA claims left from another
  // mode): kubelet accounts only its own allocations.
  const bool device_plugin =
      options_.strategy != Strategy::kHami && options_.strategy != Strategy::kDra;
  OfferPlan plan;
  if (device_plugin) {
    ::hcudp::internal::LedgerSources ledger;
    ledger.host_root = backend_.host_root();
    plan = DecideOffers(inventory, ::hcudp::internal::ReadLedger(ledger),
                        OfferMode::kDevicePlugin);
  }
  HCUDP_ASSIGN_OR_RETURN(std::vector<Resource> resources,
                         device_plugin ? BuildResources(inventory, ParamsOf(options_), plan)
                                       : BuildResources(inventory, ParamsOf(options_)));
  // vHCUs, MIG instances and hcunum IDs follow their card; hcucores ID i
  // (no card of its own, as the vendor lists them) follows card i / per-card
  // share, so every ID derived from a failed card turns Unhealthy (KEP-4680).
  for (Resource& r : resources) {
    const size_t cards = inventory.cards.size();
    const size_t share = cards == 0 ? 0 : r.devices.size() / cards;
    for (size_t i = 0; i < r.devices.size(); ++i) {
      ResourceDevice& d = r.devices[i];
      if (const Card* c = inventory.FindCard(d.card)) {
        d.health = c->health;
      } else if (OnUnknownCard(inventory, d.card)) {
        d.health = Health::kUnhealthy;  // listed, never allocated, until it is known
      } else if (r.kind == DeviceKind::kHamiCores && share > 0 && i / share < cards) {
        d.health = inventory.cards[i / share].health;
      }
      // Listed for its holder only: never allocated again.
      if (!d.offered) d.health = Health::kUnhealthy;
    }
  }
  // Keep every resource ever served, so a vanished one serves an empty list.
  for (const Resource& r : resources) {
    if (std::find(known_resources_.begin(), known_resources_.end(), r.name) ==
        known_resources_.end()) {
      known_resources_.push_back(r.name);
    }
  }
  std::vector<Resource> ordered;
  for (const std::string& name : known_resources_) {
    auto it = std::find_if(resources.begin(), resources.end(),
                           [&](const Resource& r) { return r.name == name; });
    if (it != resources.end()) {
      ordered.push_back(*it);
    } else {
      const Resource* old = state_.Current()->FindResource(name);
      Resource empty;
      empty.name = name;
      if (old != nullptr) {
        empty.last_name = old->last_name;
        empty.kind = old->kind;
      }
      ordered.push_back(empty);
    }
  }
  return ordered;
}

Status NodeWatcher::Impl::Refresh(bool initial) {
  // The one health query of this look (hy-smi on a real node), first, so
  // that Discover's cards carry its verdicts; Discover never runs it.
  auto health = backend_.QueryHealth();
  auto discovered = backend_.Discover();
  // A backend that needs a restart answers nothing trustworthy: its cards
  // may all fail. Serve the last good state until the process restarts.
  if (Status restart = backend_.RestartRequired(); !restart.ok() && discovered.ok()) {
    discovered = restart;
  }
  NodeInventory inventory;
  if (discovered.ok()) {
    inventory = std::move(discovered).value();
    // Unreadable vHCU state keeps its last good value.
    VhcuKeeper::Apply(last_inventory_.vhcus, &inventory);
  } else if (initial) {
    return discovered.status().WithContext("discover the node");
  } else {
    LOG(WARNING) << "discovery failed, keeping the last known devices: "
                 << discovered.status().ToString();
    inventory = last_inventory_;
  }
  ApplyHealth(health, inventory);

  auto built = Resources(inventory);
  if (!built.ok()) {
    if (initial) return built.status();
    LOG(WARNING) << "resources: " << built.status().ToString();
    return OkStatus();
  }
  std::vector<Resource> ordered = std::move(built).value();

  auto current = state_.Current();
  // DRA mode has no resources: what it publishes (slices, the whole-card
  // spec, health) follows the inventory itself.
  const bool dra = options_.strategy == Strategy::kDra;
  bool changed = initial || watch::ResourcesDiffer(current->resources, ordered) ||
                 watch::AllocationInputsDiffer(current->inventory, inventory) ||
                 watch::CertaintyDiffers(current->inventory, inventory) ||
                 (dra && watch::DraInventoryDiffers(current->inventory, inventory));
  last_inventory_ = inventory;
  if (on_inventory) on_inventory(inventory);
  // In DRA mode the claim preparer writes the CDI specs (dra.hygon.com kinds).
  // Built at every look: a device left out for a conf file that was not
  // ready (an empty vdevN.conf being written) joins the spec once the file
  // is, though no device list changed.
  if (!dra && options_.device_list_strategy != DeviceListStrategy::kDevices) {
    CdiSpec spec = BuildCdiSpec(inventory, ordered, builder_);
    if (changed || spec.json != cdi_built_) {
      for (const auto& s : spec.skipped) LOG(WARNING) << "CDI spec leaves out " << s;
      cdi_built_ = spec.json;
      Status st = WriteSpec(std::move(spec.json));
      if (!st.ok()) {
        if (initial) return st.WithContext("--cdi-spec-dir");
        LOG(ERROR) << "CDI spec: " << st.ToString() << "; retrying every " << kCdiRetry.count()
                   << " ms";
      }
    }
  }
  if (!changed) return OkStatus();
  for (const Resource& r : ordered) {
    size_t healthy = std::count_if(r.devices.begin(), r.devices.end(),
                                   [](const auto& d) { return d.health == Health::kHealthy; });
    VLOG(2) << r.name << ": " << r.devices.size() << " devices, " << healthy << " healthy";
  }
  state_.Publish(std::move(inventory), std::move(ordered));
  return OkStatus();
}

}  // namespace hcudp
