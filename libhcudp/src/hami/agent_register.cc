// Registrar: node registration (annotations, hcumem, topology ConfigMap).
#include <rapidjson/document.h>

#include "hami/registrar.h"
#include "hcudp/hami/handshake.h"
#include "hcudp/hami/keys.h"
#include "hcudp/hami/node_devices.h"
#include "hcudp/hami_agent.h"
#include "hcudp/kube_ops.h"
#include "hcudp/offer.h"
#include "hcudp/topology.h"
#include "hcudp_internal/log.h"

namespace hcudp::internal {
namespace {

constexpr char kTopologyNamespace[] = "kube-system";
constexpr char kTopologyConfigMap[] = "hcu-topology-info";

// status.capacity[resource] of a node's JSON, if present.
std::optional<std::string> NodeCapacity(const std::string& node_json, const std::string& resource) {
  rapidjson::Document doc;
  doc.Parse(node_json.data(), node_json.size());
  if (doc.HasParseError() || !doc.IsObject()) return std::nullopt;
  auto status = doc.FindMember("status");
  if (status == doc.MemberEnd() || !status->value.IsObject()) return std::nullopt;
  auto capacity = status->value.FindMember("capacity");
  if (capacity == status->value.MemberEnd() || !capacity->value.IsObject()) return std::nullopt;
  auto value = capacity->value.FindMember(resource.c_str());
  if (value == capacity->value.MemberEnd() || !value->value.IsString()) return std::nullopt;
  return std::string(value->value.GetString(), value->value.GetStringLength());
}

}  // namespace

Registrar::Registrar(AgentContext& ctx, std::function<void()> on_first)
    : ctx_(ctx),
      on_first_(std::move(on_first)),
      wake_(ctx.clock),
      backoff_(ctx.client->retry_policy().NewBackoff()) {
  Request();  // the first registration, at once
}

Registrar::~Registrar() { Stop(); }

void Registrar::Start() {
  if (!thread_.joinable()) thread_ = std::thread([this] { Run(); });
}

void Registrar::Stop() {
  wake_.Stop();
  if (thread_.joinable()) thread_.join();
}

Clock::TimePoint Registrar::NextDue() const {
  // Not ready: nothing to register. The sweep thread requests a
  // registration once the agent is ready; a second is the backstop.
  if (!ctx_.ready) return ctx_.clock.Now() + std::chrono::seconds(1);
  if (next_retry_ != Clock::TimePoint{}) return next_retry_;  // backing off
  if (last_handshake_ == Clock::TimePoint{}) return ctx_.clock.Now();
  return last_handshake_ + ctx_.options.register_interval;
}

void Registrar::Run() {
  while (true) {
    const unsigned requests = wake_.WaitUntil(NextDue());
    if (wake_.stopped() || ctx_.stopping) return;
    RegisterIfDue(requests != 0);
  }
}

void Registrar::RegisterIfDue(bool requested) {
  // Advertise only what can be served: no registration before the pod
  // cache synced, the node lock was checked and the vHCUs recovered.
  // (The first registration after it is due anyway: no handshake yet.)
  if (!ctx_.ready) return;
  const Clock::TimePoint now = ctx_.clock.Now();
  const bool failed_before = next_retry_ != Clock::TimePoint{};
  if (failed_before && now < next_retry_) return;  // backing off
  const bool handshake_due = last_handshake_ == Clock::TimePoint{} ||
                             now - last_handshake_ >= ctx_.options.register_interval;
  if (!requested && !handshake_due && !failed_before) return;
  retry_after_s_.reset();
  Status st = Register(/*lists_only_if_changed=*/!handshake_due && !failed_before);
  if (st.ok()) {
    next_retry_ = {};
    if (!registered_.exchange(true) && on_first_) on_first_();
  } else {
    // The registration loop's own ladder: a loop that tries again continues
    // it (1 s doubling to 30 s, jittered), never restarts it, and no other
    // loop's failures move it.
    const std::chrono::milliseconds pause = backoff_->Pause(retry_after_s_);
    LOG(WARNING) << "HAMi: registering node " << ctx_.options.node_name << " failed (retry in "
                 << pause.count() << " ms): " << st.ToString();
    next_retry_ = ctx_.clock.Now() + pause;
  }
}

Status Registrar::Register(bool lists_only_if_changed) {
  HCUDP_ASSIGN_OR_RETURN(NodeInventory inventory, ctx_.inventory.Refresh());
  if (ctx_.options.card_health) {
    // One health pipeline: the verdict ListAndWatch sends, never Discover's
    // raw reading (a failed query must change nothing).
    for (Card& card : inventory.cards) {
      std::optional<Health> verdict = ctx_.options.card_health(card.bdf);
      card.health = verdict.value_or(Health::kUnhealthy);
    }
  }
  // The pod cache cannot be trusted (its history lost, a relist pending):
  // Allocate would wait or fail, so the cards are registered unhealthy until
  // it is current again, as the device plugins of the vendor and NVIDIA mark
  // their devices.
  const bool servable = ctx_.Servable();
  if (!servable) {
    for (Card& card : inventory.cards) card.health = Health::kUnhealthy;
  }
  if (servable != last_servable_) {
    LOG(INFO) << "HAMi: node " << ctx_.options.node_name << " registered as "
              << (servable ? "servable" : "not servable (pod cache not current)");
    last_servable_ = servable;
  }
  // By the one offer rule: unknown is never free capacity, and vHCUs no
  // HAMi pod holds (pre-split, claims') are taken from the full list too.
  const OfferPlan plan = DecideOffers(inventory, ctx_.holdings(), OfferMode::kHami);
  hami::NodeRegistration reg =
      hami::BuildNodeRegistration(inventory, plan, ctx_.options.split_count);
  for (const auto& why : reg.skipped) VLOG(1) << "HAMi: card not registered: " << why;
  HCUDP_ASSIGN_OR_RETURN(std::string full, hami::EncodeNodeDevices(reg.full));
  HCUDP_ASSIGN_OR_RETURN(std::string remaining, hami::EncodeNodeDevices(reg.remaining));
  bool changed = full != last_full_ || remaining != last_remaining_;
  if (!lists_only_if_changed || changed) {
    std::map<std::string, std::optional<std::string>> patch;
    patch[std::string(hami::kNodeHandshakeAnnotation)] =
        hami::FormatHandshakeReported(ctx_.clock.WallNow());
    if (changed || last_full_.empty()) {
      patch[std::string(hami::kNodeRegisterAnnotation)] = full;
      patch[std::string(hami::kNodeRemainingAnnotation)] = remaining;
    }
    CallOptions call = ctx_.BackgroundCall();
    call.retry_after_s = &retry_after_s_;
    HCUDP_ASSIGN_OR_RETURN(NodeObject node,
                           PatchNodeAnnotations(*ctx_.client, ctx_.options.node_name, patch, call));
    ctx_.seen_node.Set(node, ctx_.clock.Now());
    last_full_ = full;
    last_remaining_ = remaining;
    last_handshake_ = ctx_.clock.Now();
    VLOG(2) << "HAMi: registered " << reg.full.size() << " cards"
            << (patch.size() == 1 ? " (handshake only)" : "");
    if (ctx_.options.resource_multiple) ReportHcumem(inventory, node);
  }
  if (ctx_.options.topology_register) ReportTopology(inventory);
  return OkStatus();
}

void Registrar::ReportHcumem(const NodeInventory& inventory, const NodeObject& node) {
  uint64_t total_mib = 0;
  for (const Card& card : inventory.cards) total_mib += card.memory_mib();
  const std::string value = std::to_string(total_mib);
  if (NodeCapacity(node.raw_json, ctx_.hcumem_resource) == value && last_hcumem_mib_ == total_mib) {
    return;
  }
  const std::string key = JsonQuote(ctx_.hcumem_resource);
  const std::string patch = "{\"status\":{\"capacity\":{" + key + ":" + JsonQuote(value) +
                            "},\"allocatable\":{" + key + ":" + JsonQuote(value) + "}}}";
  auto patched =
      PatchNodeStatus(*ctx_.client, ctx_.options.node_name, patch, ctx_.BackgroundCall());
  if (!patched.ok()) {
    LOG(WARNING) << "HAMi: reporting " << ctx_.hcumem_resource
                 << " failed: " << patched.status().ToString();
    return;
  }
  last_hcumem_mib_ = total_mib;
}

void Registrar::ReportTopology(const NodeInventory& inventory) {
  std::string json = TopologyInfoJson(BuildTopologyInfo(inventory));
  if (json == last_topology_) return;
  Status st = MergeConfigMapData(*ctx_.client, kTopologyNamespace, kTopologyConfigMap,
                                 {{ctx_.options.node_name, json}}, ctx_.BackgroundCall());
  if (!st.ok()) {
    LOG(WARNING) << "HAMi: updating " << kTopologyNamespace << "/" << kTopologyConfigMap
                 << " failed: " << st.ToString();
    return;
  }
  last_topology_ = std::move(json);
}

}  // namespace hcudp::internal
