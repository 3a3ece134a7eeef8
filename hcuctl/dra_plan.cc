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
  // As the daemon publishes: the one offer rule over the ledger.
  return hcudp::dra::BuildPoolPlan(
      hcudp::dra::OfferSlices(*inventory, hcudp::EffectiveHostRoot(ctx.options()), ""), params);
}

}  // namespace hcuctl
