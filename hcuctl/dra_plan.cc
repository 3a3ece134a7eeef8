#include "dra_plan.h"

#include <unistd.h>

#include <cctype>
#include <cstdlib>

#include "hcudp/vhcu_manager.h"

namespace hcuctl {

std::string DraNodeName(const Context& ctx, const std::string& flag) {
  if (!flag.empty()) return flag;
  if (!ctx.options().node_name.empty()) return ctx.options().node_name;
  if (const char* env = std::getenv("NODE_NAME"); env != nullptr && *env != '\0') return env;
  char host[256] = {0};
  if (gethostname(host, sizeof host - 1) != 0) return "";
  std::string name(host);
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name;
}

hcudp::StatusOr<hcudp::dra::PoolPlan> BuildDraPlan(Context& ctx, const std::string& node_name,
                                                   bool taints_supported) {
  hcudp::dra::SliceParams params;
  params.node_name = node_name;
  params.taints_supported = taints_supported;
  // Health first, as in the daemon's first publication (Context::Look).
  auto inventory = ctx.Look();
  if (!inventory.ok()) return inventory.status();
  const std::string host_root = hcudp::EffectiveHostRoot(ctx.options());
  // As the daemon publishes (hcudp::dra::OfferableInventory): the vHCUs made
  // for claims (or HAMi pods) are capacity consumed from their card, not
  // devices; one that may be someone's is left out rather than offered.
  std::vector<std::string> bad;
  auto prepared = hcudp::dra::CheckpointStore(host_root).ReadAll(&bad);
  std::vector<hcudp::dra::LeftOutDevice> left_out;
  hcudp::NodeInventory offered = hcudp::dra::OfferableInventory(
      *inventory, host_root, prepared.ok() ? *prepared : std::vector<hcudp::dra::PreparedClaim>{},
      &left_out);
  auto plan = hcudp::dra::BuildPoolPlan(offered, params);
  if (plan.ok()) plan->left_out.insert(plan->left_out.end(), left_out.begin(), left_out.end());
  return plan;
}

}  // namespace hcuctl
