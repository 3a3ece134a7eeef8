// hcuctl dra slices: the ResourceSlices the daemon would publish in DRA mode
// (--strategy=dra), built from this node's inventory exactly as the daemon
// builds them (hcudp/dra/slices.h). -o json|yaml prints the
// ResourceSliceList; the table lists one device a row.
#include <rapidjson/document.h>

#include <string>

#include "command.h"
#include "dra_plan.h"
#include "hcudp/dra/slices.h"
#include "hcudp_cli/flags.h"

namespace hcuctl {
namespace {

Value FromJson(const rapidjson::Value& v) {
  if (v.IsObject()) {
    Value out = Value::MakeObject();
    for (const auto& m : v.GetObject()) out.Set(m.name.GetString(), FromJson(m.value));
    return out;
  }
  if (v.IsArray()) {
    Value out = Value::MakeArray();
    for (const auto& e : v.GetArray()) out.Push(FromJson(e));
    return out;
  }
  if (v.IsString()) return Value(std::string(v.GetString(), v.GetStringLength()));
  if (v.IsBool()) return Value(v.GetBool());
  if (v.IsInt64()) return Value(static_cast<int64_t>(v.GetInt64()));
  if (v.IsUint64()) return Value(static_cast<uint64_t>(v.GetUint64()));
  return Value();
}

std::string AttrText(const rapidjson::Value& dev, const char* key) {
  const rapidjson::Value& attrs = dev["attributes"];
  auto it = attrs.FindMember(key);
  if (it == attrs.MemberEnd() || !it->value.IsObject() || it->value.MemberCount() != 1) return "-";
  const rapidjson::Value& v = it->value.MemberBegin()->value;
  if (v.IsString()) return v.GetStringLength() == 0 ? "-" : v.GetString();
  if (v.IsInt64()) return std::to_string(v.GetInt64());
  return "-";
}

std::string CapacityText(const rapidjson::Value& dev, const char* key) {
  const rapidjson::Value& caps = dev["capacity"];
  auto it = caps.FindMember(key);
  if (it == caps.MemberEnd()) return "-";
  return it->value["value"].GetString();
}

Report SlicesReport(const hcudp::dra::PoolPlan& plan) {
  Report r;
  const int64_t generation = 1;
  rapidjson::Document list;
  const std::string json = hcudp::dra::SliceListJson(plan, generation);
  list.Parse(json.data(), json.size());
  r.value = FromJson(list);
  Table table(
      {"SLICE", "DEVICE", "TYPE", "PCI/PARENT", "NUMA", "ISLAND", "CORES", "MEMORY", "TAINT"});
  for (const hcudp::dra::PoolDevice& d : plan.devices) {
    rapidjson::Document dev;
    dev.Parse(d.json.data(), d.json.size());
    std::string pci = AttrText(dev, "resource.kubernetes.io/pciBusID");
    if (pci == "-") pci = "^" + AttrText(dev, "parentPciBusID");
    table.AddRow({std::to_string(d.slice), d.name, std::string(PoolDeviceTypeName(d.type)), pci,
                  AttrText(dev, "resource.kubernetes.io/numaNode"), AttrText(dev, "hslIsland"),
                  CapacityText(dev, "cores"), CapacityText(dev, "memory"),
                  d.tainted ? std::string(hcudp::dra::kUnhealthyTaintKey) + ":NoSchedule" : "-"});
  }
  r.tables.emplace_back("pool " + plan.pool_name + " (driver " + plan.driver_name +
                            "): " + std::to_string(plan.devices.size()) + " device(s) in " +
                            std::to_string(plan.slice_count) + " slice(s)",
                        std::move(table));
  for (const hcudp::dra::LeftOutDevice& l : plan.left_out) {
    r.notes.push_back("not offered: " + l.what + ": " + l.reason);
  }
  return r;
}

int Slices(Context& ctx, const Command& self, const std::string& node_name, bool no_taints) {
  auto plan = BuildDraPlan(ctx, DraNodeName(ctx, node_name), !no_taints);
  if (!plan.ok()) return Fail(ctx, self.name, plan.status());
  ctx.Print(SlicesReport(*plan));
  return kExitOk;
}

int RunDra(Context& ctx, const std::vector<std::string>& args) {
  const Command& self = kDraCommand;
  // Sub-commands with their own file and flags.
  for (const Command* sub : {&kDraPreparedCommand, &kDraCheckCommand}) {
    if (!args.empty() && args.front() == sub->name) {
      return sub->run(ctx, std::vector<std::string>(args.begin() + 1, args.end()));
    }
  }
  std::string node_name;
  bool no_taints = false;
  hcudp::FlagSet flags("hcuctl dra", std::string(self.summary));
  flags.Add(hcudp::Flag::String("node-name", "",
                                "slices: the node (pool) name; default $NODE_NAME, else the host "
                                "name (kubelet's default node name)",
                                &node_name));
  flags.Add(hcudp::Flag::Bool("no-taints", "",
                              "slices: as published where the API server drops device taints "
                              "(unhealthy cards left out)",
                              &no_taints));
  int code = kExitOk;
  auto rest = ParseCommandArgs(ctx, self, flags, args, &code);
  if (!rest) return code;
  if (rest->empty()) return UsageError(ctx, self, "missing action: slices, prepared or check");
  const std::string& action = rest->front();
  if (rest->size() > 1) return UsageError(ctx, self, "unexpected argument \"" + (*rest)[1] + "\"");
  if (action == "slices") return Slices(ctx, self, node_name, no_taints);
  return UsageError(ctx, self, "unknown action \"" + action + "\"; use slices, prepared or check");
}

}  // namespace

const Command kDraCommand = {
    "dra",
    "DRA mode: the ResourceSlices the daemon would publish from this node, the claims it "
    "prepared, and whether its sockets answer",
    "hcuctl [global flags] dra slices [--node-name NAME] [--no-taints] [-o table|json|yaml]\n"
    "       hcuctl [global flags] dra prepared [-o table|json|yaml]\n"
    "       hcuctl [global flags] dra check [--kubelet-plugins-dir DIR] [--kubelet-registry-dir "
    "DIR] [--driver NAME] [--timeout-ms N]",
    RunDra};

}  // namespace hcuctl
