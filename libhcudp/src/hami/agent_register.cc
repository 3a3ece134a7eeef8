// HamiAgent: node registration (annotations, hcumem, topology ConfigMap).
#include <glog/logging.h>
#include <rapidjson/document.h>

#include "hcudp/hami/handshake.h"
#include "hcudp/hami/keys.h"
#include "hcudp/hami/node_devices.h"
#include "hcudp/hami_agent.h"
#include "hcudp/kube_ops.h"
#include "hcudp/topology.h"

namespace hcudp {
namespace {

constexpr std::chrono::milliseconds kRetryAfterFailure{5000};
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

void HamiAgent::RegisterIfDue(bool force) {
  using Clock = std::chrono::steady_clock;
  const auto now = Clock::now();
  const bool failed_before = next_register_retry_ != Clock::time_point{};
  if (failed_before && now < next_register_retry_) return;  // backing off
  const bool handshake_due =
      last_handshake_ == Clock::time_point{} || now - last_handshake_ >= options_.register_interval;
  if (!force && !handshake_due && !failed_before) return;
  Status st = Register(/*lists_only_if_changed=*/!handshake_due && !failed_before);
  if (st.ok()) {
    next_register_retry_ = {};
    first_register_done_ = true;
  } else {
    LOG(WARNING) << "HAMi: registering node " << options_.node_name
                 << " failed (retry in 5 s): " << st.ToString();
    next_register_retry_ = now + kRetryAfterFailure;
  }
}

Status HamiAgent::Register(bool lists_only_if_changed) {
  HCUDP_ASSIGN_OR_RETURN(NodeInventory inventory, backend_->Discover());
  {
    std::lock_guard<std::mutex> lock(inventory_mu_);
    inventory_ = inventory;
  }
  if (options_.card_health) {
    // One health pipeline: the verdict ListAndWatch sends, never Discover's
    // raw reading (a failed query must change nothing).
    for (Card& card : inventory.cards) {
      std::optional<Health> verdict = options_.card_health(card.bdf);
      card.health = verdict.value_or(Health::kUnhealthy);
    }
  }
  hami::NodeRegistration reg = hami::BuildNodeRegistration(inventory, options_.split_count);
  for (const auto& why : reg.skipped) VLOG(1) << "HAMi: card not registered: " << why;
  HCUDP_ASSIGN_OR_RETURN(std::string full, hami::EncodeNodeDevices(reg.full));
  HCUDP_ASSIGN_OR_RETURN(std::string remaining, hami::EncodeNodeDevices(reg.remaining));
  bool changed = full != last_full_ || remaining != last_remaining_;
  if (!lists_only_if_changed || changed) {
    std::map<std::string, std::optional<std::string>> patch;
    patch[std::string(hami::kNodeHandshakeAnnotation)] = hami::FormatHandshakeReported(Now());
    if (changed || last_full_.empty()) {
      patch[std::string(hami::kNodeRegisterAnnotation)] = full;
      patch[std::string(hami::kNodeRemainingAnnotation)] = remaining;
    }
    HCUDP_ASSIGN_OR_RETURN(
        Node node, PatchNodeAnnotations(*client_, options_.node_name, patch, BackgroundCall()));
    last_full_ = full;
    last_remaining_ = remaining;
    last_handshake_ = std::chrono::steady_clock::now();
    VLOG(2) << "HAMi: registered " << reg.full.size() << " cards"
            << (patch.size() == 1 ? " (handshake only)" : "");
    if (options_.resource_multiple) ReportHcumem(inventory, node);
  }
  if (options_.topology_register) ReportTopology(inventory);
  return OkStatus();
}

void HamiAgent::ReportHcumem(const NodeInventory& inventory, const Node& node) {
  uint64_t total_mib = 0;
  for (const Card& card : inventory.cards) total_mib += card.memory_mib();
  const std::string value = std::to_string(total_mib);
  if (NodeCapacity(node.raw_json, options_.hcumem_resource) == value &&
      last_hcumem_mib_ == total_mib) {
    return;
  }
  const std::string key = JsonQuote(options_.hcumem_resource);
  const std::string patch = "{\"status\":{\"capacity\":{" + key + ":" + JsonQuote(value) +
                            "},\"allocatable\":{" + key + ":" + JsonQuote(value) + "}}}";
  auto patched = PatchNodeStatus(*client_, options_.node_name, patch, BackgroundCall());
  if (!patched.ok()) {
    LOG(WARNING) << "HAMi: reporting " << options_.hcumem_resource
                 << " failed: " << patched.status().ToString();
    return;
  }
  last_hcumem_mib_ = total_mib;
}

void HamiAgent::ReportTopology(const NodeInventory& inventory) {
  std::string json = TopologyInfoJson(BuildTopologyInfo(inventory));
  if (json == last_topology_) return;
  Status st = MergeConfigMapData(*client_, kTopologyNamespace, kTopologyConfigMap,
                                 {{options_.node_name, json}}, BackgroundCall());
  if (!st.ok()) {
    LOG(WARNING) << "HAMi: updating " << kTopologyNamespace << "/" << kTopologyConfigMap
                 << " failed: " << st.ToString();
    return;
  }
  last_topology_ = std::move(json);
}

}  // namespace hcudp
