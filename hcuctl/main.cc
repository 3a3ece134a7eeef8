// hcuctl: the node admin's CLI. main only parses the global flags, builds
// Options and dispatches to the subcommand table (command.h).
#include <iostream>
#include <string>
#include <vector>

#include "command.h"
#include "hcudp/logging.h"
#include "hcudp/version.h"
#include "hcudp_cli/flags.h"
#include "hcudp_cli/option_flags.h"

namespace {

std::string TopLevelHelp(const hcudp::FlagSet& flags) {
  std::string help = flags.Help();
  help += "\nCommands:\n";
  for (const hcuctl::Command& c : hcuctl::CommandTable()) {
    std::string name(c.name);
    help += "  " + name + std::string(name.size() < 12 ? 12 - name.size() : 1, ' ') +
            std::string(c.summary) + "\n";
  }
  help += "\nRun 'hcuctl <command> --help' for a command's flags.\n";
  return help;
}

}  // namespace

int main(int argc, char** argv) {
  // A CLI shows the library's warnings as they are, but no INFO chatter.
  hcudp::SetLogLevel(hcudp::LogSeverity::kWarning, 0);
  hcudp::Options options;
  std::string output = "table";
  hcudp::FlagSet flags("hcuctl", "hcuctl [global flags] <command> [flags]: inspect and manage "
                                 "the HCUs of this node and the running device plugin");
  hcudp::AddNodeAccessFlags(flags, &options);
  hcudp::Flag output_flag = hcudp::Flag::Enum(
      "output", "", "output format", {"table", "json", "yaml"}, "table",
      [&output](const std::string& v) {
        output = v;
        return hcudp::OkStatus();
      });
  output_flag.aliases = {"o"};
  flags.Add(std::move(output_flag));

  auto parsed = flags.Parse(argc, argv, hcudp::ProcessEnv());
  if (!parsed.ok()) {
    std::cerr << "hcuctl: " << parsed.status().message() << "\n"
              << "usage: hcuctl [global flags] <command> (see: hcuctl --help)\n";
    return hcuctl::kExitUsage;
  }
  if (parsed->help_requested) {
    std::cout << TopLevelHelp(flags);
    return hcuctl::kExitOk;
  }
  if (parsed->positional.empty()) {
    std::cerr << "hcuctl: missing command\n" << TopLevelHelp(flags);
    return hcuctl::kExitUsage;
  }
  hcudp::Status valid = hcudp::ValidateNodeAccessOptions(options);
  if (!valid.ok()) {
    std::cerr << "hcuctl: " << valid.message() << "\n";
    return hcuctl::kExitUsage;
  }

  const std::string& name = parsed->positional.front();
  const hcuctl::Command* command = hcuctl::FindCommand(name);
  if (command == nullptr) {
    std::cerr << "hcuctl: unknown command \"" << name << "\"\n" << TopLevelHelp(flags);
    return hcuctl::kExitUsage;
  }
  hcuctl::Context ctx(options, *hcuctl::ParseOutputFormat(output), std::cout, std::cerr);
  std::vector<std::string> args(parsed->positional.begin() + 1, parsed->positional.end());
  return command->run(ctx, args);
}
