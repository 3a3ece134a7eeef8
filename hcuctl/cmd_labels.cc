// hcuctl labels: the node labels the daemon would publish (--node-labels),
// computed from the node as discovered now.
#include <chrono>
#include <string>

#include "command.h"
#include "hcudp/node_labels.h"

namespace hcuctl {
namespace {

int RunLabels(Context& ctx, const std::vector<std::string>& args) {
  const Command& self = kLabelsCommand;
  hcudp::Strategy strategy = ctx.options().strategy;
  bool nfd = false;
  hcudp::FlagSet flags("hcuctl labels", std::string(self.summary));
  flags.Add(hcudp::Flag::Enum("strategy", "", "the daemon's strategy (hygon.com/hcu.strategy)",
                              {"hcu", "vhcu", "mig", "mixed", "hami"}, "mixed",
                              [&](const std::string& v) {
                                strategy = *hcudp::ParseStrategy(v);
                                return hcudp::OkStatus();
                              }));
  flags.Add(hcudp::Flag::Bool("nfd", "", "print the features.d file --node-labels=nfd would write",
                              &nfd));
  int code = kExitOk;
  auto rest = ParseCommandArgs(ctx, self, flags, args, &code);
  if (!rest) return code;
  if (!rest->empty()) return UsageError(ctx, self, "unexpected argument \"" + rest->front() + "\"");

  auto backend = ctx.backend();
  if (!backend.ok()) return Fail(ctx, self.name, backend.status());
  auto inv = (*backend)->Discover();
  if (!inv.ok()) return Fail(ctx, self.name, inv.status());
  const hcudp::NodeLabels labels = hcudp::ComputeNodeLabels(*inv, strategy);
  if (nfd) {
    // The daemon's default expiry: ten minutes from now.
    ctx.out() << hcudp::RenderNfdFeatureFile(
        labels, std::chrono::system_clock::now() + std::chrono::seconds(600));
    return kExitOk;
  }
  Report r;
  Table table({"KEY", "VALUE"});
  Value map = Value::MakeObject();
  for (const auto& [key, value] : labels) {
    table.AddRow({key, value});
    map.Set(key, value);
  }
  r.value = Value::MakeObject();
  r.value.Set("labels", std::move(map));
  r.tables.emplace_back("", std::move(table));
  if (labels.empty()) r.notes.push_back("(no HCUs on this node: no labels)");
  ctx.Print(r);
  return kExitOk;
}

}  // namespace

const Command kLabelsCommand = {
    "labels", "node labels the daemon would publish (--node-labels)",
    "hcuctl [global flags] labels [--strategy hcu|vhcu|mig|mixed|hami] [--nfd]", RunLabels};

}  // namespace hcuctl
