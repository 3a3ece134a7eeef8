// hcuctl names: the resources and device IDs the daemon would register, or
// with --strategy=dra the device names it would publish in its ResourceSlices
// (the same pool as `hcuctl dra slices`, dra_plan.h).
#include <string>

#include "command.h"
#include "dra_plan.h"
#include "hcudp/naming.h"
#include "hcudp_cli/option_flags.h"
#include "reports.h"

namespace hcuctl {

Report NamesReport(const std::vector<hcudp::Resource>& resources, hcudp::Strategy strategy,
                   hcudp::NamingPolicy policy) {
  Report r;
  Table table({"RESOURCE", "KIND", "DEVICES", "HEALTHY", "IDS"});
  Value list = Value::MakeArray();
  for (const hcudp::Resource& res : resources) {
    Value devices = Value::MakeArray();
    int healthy = 0;
    std::string ids;
    for (size_t i = 0; i < res.devices.size(); ++i) {
      const hcudp::ResourceDevice& d = res.devices[i];
      if (d.health == hcudp::Health::kHealthy) ++healthy;
      Value dev = Value::MakeObject();
      dev.Set("id", d.id).Set("health", hcudp::HealthName(d.health));
      if (d.numa_node != hcudp::kNoNumaNode) dev.Set("numaNode", d.numa_node);
      devices.Push(std::move(dev));
      if (i < 4) {
        ids += (i == 0 ? "" : ",") + d.id;
      } else if (i == 4) {
        ids += ",... (" + std::to_string(res.devices.size()) + " in all)";
      }
    }
    table.AddRow({res.name, std::string(hcudp::DeviceKindName(res.kind)),
                  std::to_string(res.devices.size()), std::to_string(healthy),
                  ids.empty() ? "-" : ids});
    list.Push(Value::MakeObject()
                  .Set("name", res.name)
                  .Set("kind", hcudp::DeviceKindName(res.kind))
                  .Set("socketPrefix", std::string(hcudp::kResourceNamespace) + "_" + res.last_name)
                  .Set("devices", std::move(devices)));
  }
  r.value = Value::MakeObject();
  r.value.Set("strategy", hcudp::StrategyName(strategy))
      .Set("policy", static_cast<int>(policy))
      .Set("resources", std::move(list));
  r.tables.emplace_back("", std::move(table));
  if (resources.empty()) r.notes.push_back("(no resources: nothing to register on this node)");
  return r;
}

Report DraNamesReport(const hcudp::dra::PoolPlan& plan) {
  Report r;
  Table table({"DEVICE", "TYPE", "CARD", "SLICE", "HEALTH"});
  Value devices = Value::MakeArray();
  for (const hcudp::dra::PoolDevice& d : plan.devices) {
    const std::string type(hcudp::dra::PoolDeviceTypeName(d.type));
    table.AddRow({d.name, type, d.card_bdf, std::to_string(d.slice),
                  d.tainted ? "unhealthy (tainted)" : "healthy"});
    Value dev = Value::MakeObject();
    dev.Set("name", d.name).Set("type", type).Set("card", d.card).Set("cardBDF", d.card_bdf);
    if (d.vhcu_id >= 0) dev.Set("vhcu", "vdev" + std::to_string(d.vhcu_id));
    dev.Set("slice", d.slice).Set("tainted", d.tainted);
    devices.Push(std::move(dev));
  }
  Value left_out = Value::MakeArray();
  for (const hcudp::dra::LeftOutDevice& l : plan.left_out) {
    left_out.Push(Value::MakeObject().Set("what", l.what).Set("reason", l.reason));
    r.notes.push_back("not offered: " + l.what + ": " + l.reason);
  }
  r.value = Value::MakeObject();
  r.value.Set("strategy", "dra")
      .Set("driver", plan.driver_name)
      .Set("pool", plan.pool_name)
      .Set("devices", std::move(devices))
      .Set("notOffered", std::move(left_out));
  r.tables.emplace_back("driver " + plan.driver_name + ", pool " + plan.pool_name,
                        std::move(table));
  if (plan.devices.empty()) r.notes.push_back("(no devices: the pool is published empty)");
  return r;
}

namespace {

int RunNames(Context& ctx, const std::vector<std::string>& args) {
  const Command& self = kNamesCommand;
  hcudp::NamingParams params;
  bool dra = false;
  std::string node_name;
  hcudp::FlagSet flags("hcuctl names", std::string(self.summary));
  flags.Add(hcudp::Flag::Enum("strategy", "", "registration strategy",
                              {"hcu", "vhcu", "mig", "mixed", "hami", "dra"}, "mixed",
                              [&](const std::string& v) {
                                params.strategy = *hcudp::ParseStrategy(v);
                                dra = params.strategy == hcudp::Strategy::kDra;
                                return hcudp::OkStatus();
                              }));
  flags.Add(hcudp::Flag::Enum("policy", "", "naming policy", {"0", "1", "2"}, "0",
                              [&](const std::string& v) {
                                params.policy = *hcudp::ParseNamingPolicy(v);
                                return hcudp::OkStatus();
                              }));
  flags.Add(hcudp::DeviceSplitCountFlag("", "hami: hcunum devices per card (1 to 1024)",
                                        &params.device_split_count));
  flags.Add(
      hcudp::Flag::Bool("resource-multiple", "", "hami: also hcucores", &params.resource_multiple));
  flags.Add(hcudp::Flag::String("node-name", "",
                                "dra: the node (pool) name; default $NODE_NAME, else the host "
                                "name",
                                &node_name));
  int code = kExitOk;
  auto rest = ParseCommandArgs(ctx, self, flags, args, &code);
  if (!rest) return code;
  if (!rest->empty()) return UsageError(ctx, self, "unexpected argument \"" + rest->front() + "\"");

  if (dra) {
    // Device names do not depend on the naming policy: DRA names are fixed
    // (DESIGN.md section 9).
    auto plan = BuildDraPlan(ctx, DraNodeName(ctx, node_name), true);
    if (!plan.ok()) return Fail(ctx, self.name, plan.status());
    ctx.Print(DraNamesReport(*plan));
    return kExitOk;
  }
  auto inv = ctx.Look();
  if (!inv.ok()) return Fail(ctx, self.name, inv.status());
  // As the daemon's node watcher lists them: by the one offer rule.
  auto node = ctx.node();
  if (!node.ok()) return Fail(ctx, self.name, node.status());
  const hcudp::OfferPlan plan = (*node)->Offers(*inv, hcudp::OfferMode::kDevicePlugin);
  auto resources = hcudp::BuildResources(*inv, params, plan);
  if (!resources.ok()) return Fail(ctx, self.name, resources.status());
  for (hcudp::Resource& r : *resources) {
    for (hcudp::ResourceDevice& d : r.devices) {
      if (!d.offered) d.health = hcudp::Health::kUnhealthy;  // listed for its holder only
    }
  }
  ctx.Print(NamesReport(*resources, params.strategy, params.policy));
  return kExitOk;
}

}  // namespace

const Command kNamesCommand = {
    "names", "resource names and device IDs the daemon would register",
    "hcuctl [global flags] names [--strategy hcu|vhcu|mig|mixed|hami|dra] [--policy 0|1|2] "
    "[--node-name NAME]",
    RunNames};

}  // namespace hcuctl
