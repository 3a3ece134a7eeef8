// hcuctl names: the resources and device IDs the daemon would register.
#include <string>

#include "command.h"
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

namespace {

int RunNames(Context& ctx, const std::vector<std::string>& args) {
  const Command& self = kNamesCommand;
  hcudp::NamingParams params;
  hcudp::FlagSet flags("hcuctl names", std::string(self.summary));
  flags.Add(hcudp::Flag::Enum("strategy", "", "registration strategy",
                              {"hcu", "vhcu", "mig", "mixed", "hami"}, "mixed",
                              [&](const std::string& v) {
                                params.strategy = *hcudp::ParseStrategy(v);
                                return hcudp::OkStatus();
                              }));
  flags.Add(hcudp::Flag::Enum("policy", "", "naming policy", {"0", "1", "2"}, "0",
                              [&](const std::string& v) {
                                params.policy = *hcudp::ParseNamingPolicy(v);
                                return hcudp::OkStatus();
                              }));
  flags.Add(hcudp::DeviceSplitCountFlag("", "hami: hcunum devices per card (1 to 1024)",
                                        &params.device_split_count));
  flags.Add(hcudp::Flag::Bool("resource-multiple", "", "hami: also hcucores",
                              &params.resource_multiple));
  int code = kExitOk;
  auto rest = ParseCommandArgs(ctx, self, flags, args, &code);
  if (!rest) return code;
  if (!rest->empty()) return UsageError(ctx, self, "unexpected argument \"" + rest->front() + "\"");

  auto backend = ctx.backend();
  if (!backend.ok()) return Fail(ctx, self.name, backend.status());
  auto inv = (*backend)->Discover();
  if (!inv.ok()) return Fail(ctx, self.name, inv.status());
  auto resources = hcudp::BuildResources(*inv, params);
  if (!resources.ok()) return Fail(ctx, self.name, resources.status());
  ctx.Print(NamesReport(*resources, params.strategy, params.policy));
  return kExitOk;
}

}  // namespace

const Command kNamesCommand = {
    "names", "resource names and device IDs the daemon would register",
    "hcuctl [global flags] names [--strategy hcu|vhcu|mig|mixed|hami] [--policy 0|1|2]", RunNames};

}  // namespace hcuctl
