#include <iostream>

#include "command.h"
#include "hcudp/vhcu_lock.h"
#include "pod_holders.h"

namespace hcuctl {

hcudp::StatusOr<hcudp::Node*> Context::node() {
  if (!node_) {
    hcudp::NodeOptions o;
    o.options = options_;
    o.vhcu_lock_timeout = vhcu_lock_wait_;
    const std::string socket = options_.pod_resources_socket;
    o.pod_resources = [socket] { return PodResourcesHolders(socket); };
    const std::string lock = hcudp::VhcuLockPath(hcudp::EffectiveHostRoot(options_));
    const long wait_s = static_cast<long>(vhcu_lock_wait_.count());
    std::ostream& err = err_;
    o.on_lock_wait = [&err, lock, wait_s](const std::string& holder) {
      err << "hcuctl: the vHCU lock " << lock << " is held by " << holder << "; waiting up to "
          << wait_s << " s (--lock-wait)" << std::endl;
    };
    // A bad node file, host root or vendor path is InvalidArgument: exit 2
    // (ExitCodeFor), as the daemon does at start-up.
    auto opened = hcudp::Node::Open(std::move(o));
    if (!opened.ok()) return opened.status();
    node_ = std::move(opened).value();
  }
  return node_.get();
}

hcudp::StatusOr<hcudp::NodeInventory> Context::Look() {
  HCUDP_ASSIGN_OR_RETURN(hcudp::Node * node, this->node());
  // Health is its own question (hy-smi on a real node); the look reports
  // the answer. A failed query leaves the cards as discovered.
  (void)node->backend().QueryHealth();
  return node->Look();
}

hcudp::StatusOr<hcudp::Backend*> Context::backend() {
  HCUDP_ASSIGN_OR_RETURN(hcudp::Node * node, this->node());
  return &node->backend();
}

const std::vector<Command>& CommandTable() {
  static const std::vector<Command> kTable = {
      kDevicesCommand,  kNamesCommand,       kTopologyCommand, kVhcuCommand,   kPluginsCommand,
      kAllocateCommand, kAllocationsCommand, kHamiCommand,     kDoctorCommand, kDraCommand,
      kLabelsCommand,   kCdiHookCommand,     kWatchCommand,    kVersionCommand};
  return kTable;
}

const Command* FindCommand(std::string_view name) {
  for (const Command& c : CommandTable()) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

int ExitCodeFor(const hcudp::Status& status) {
  if (status.ok()) return kExitOk;
  return hcudp::IsInputError(status) ? kExitUsage : kExitFailed;
}

int Fail(Context& ctx, std::string_view command, const hcudp::Status& status) {
  ctx.err() << "hcuctl " << command << ": " << status.message() << "\n";
  return ExitCodeFor(status);
}

int UsageError(Context& ctx, const Command& command, std::string_view problem) {
  ctx.err() << "hcuctl " << command.name << ": " << problem << "\n"
            << "usage: " << command.usage << "\n"
            << "(see: hcuctl " << command.name << " --help)\n";
  return kExitUsage;
}

std::optional<std::vector<std::string>> ParseCommandArgs(Context& ctx, const Command& command,
                                                         hcudp::FlagSet& flags,
                                                         const std::vector<std::string>& args,
                                                         int* exit_code) {
  std::string output;
  hcudp::Flag output_flag =
      hcudp::Flag::Enum("output", "", "output format (overrides the global -o)",
                        {"table", "json", "yaml"}, "table", [&output](const std::string& v) {
                          output = v;
                          return hcudp::OkStatus();
                        });
  output_flag.aliases = {"o"};
  flags.Add(std::move(output_flag));
  flags.set_interspersed(true);
  // Only the command line counts here: environment variables are global.
  auto parsed = flags.Parse(args, [](const std::string&) { return std::nullopt; });
  if (!parsed.ok()) {
    *exit_code = UsageError(ctx, command, parsed.status().message());
    return std::nullopt;
  }
  if (parsed->help_requested) {
    ctx.out() << flags.Help();
    *exit_code = kExitOk;
    return std::nullopt;
  }
  if (!output.empty()) ctx.set_format(*ParseOutputFormat(output));
  return parsed->positional;
}

int RunInventoryReport(Context& ctx, const Command& command, const std::vector<std::string>& args,
                       Report (*build)(const hcudp::NodeInventory&)) {
  hcudp::FlagSet flags("hcuctl " + std::string(command.name), std::string(command.summary));
  int code = kExitOk;
  auto rest = ParseCommandArgs(ctx, command, flags, args, &code);
  if (!rest) return code;
  if (!rest->empty()) {
    return UsageError(ctx, command, "unexpected argument \"" + rest->front() + "\"");
  }
  auto inventory = ctx.Look();
  if (!inventory.ok()) return Fail(ctx, command.name, inventory.status());
  ctx.Print(build(*inventory));
  return kExitOk;
}

}  // namespace hcuctl
