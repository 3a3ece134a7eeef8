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
  // Any strategy the daemon accepts: ParseStrategy is the daemon's own
  // parser, so no list here can fall behind it (it once lacked "dra").
  std::string strategy_text(hcudp::StrategyName(ctx.options().strategy));
  bool nfd = false;
  hcudp::FlagSet flags("hcuctl labels", std::string(self.summary));
  flags.Add(hcudp::Flag::String(
      "strategy", "", "the daemon's --strategy, any value it accepts (hygon.com/hcu.strategy)",
      &strategy_text));
  flags.Add(hcudp::Flag::Bool("nfd", "", "print the features.d file --node-labels=nfd would write",
                              &nfd));
  int code = kExitOk;
  auto rest = ParseCommandArgs(ctx, self, flags, args, &code);
  if (!rest) return code;
  if (!rest->empty()) return UsageError(ctx, self, "unexpected argument \"" + rest->front() + "\"");
  hcudp::StatusOr<hcudp::Strategy> strategy = hcudp::ParseStrategy(strategy_text);
  if (!strategy.ok()) return UsageError(ctx, self, "--strategy: " + strategy.status().message());

  auto inv = ctx.Look();
  if (!inv.ok()) return Fail(ctx, self.name, inv.status());
  const hcudp::NodeLabels labels = hcudp::ComputeNodeLabels(*inv, *strategy);
  if (nfd) {
    // The expiry the daemon writes: its publisher's default TTL from now.
    ctx.out() << hcudp::RenderNfdFeatureFile(
        labels, std::chrono::system_clock::now() + hcudp::NodeLabelPublisherOptions{}.nfd_ttl);
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
    "hcuctl [global flags] labels [--strategy hcu|vhcu|mig|mixed|hami|dra] [--nfd]", RunLabels};

}  // namespace hcuctl
