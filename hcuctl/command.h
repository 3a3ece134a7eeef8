// hcuctl's subcommand table: each command lives in its own cmd_<name>.cc and
// registers a Command here. main.cc parses the global flags into a Context
// and dispatches.
#ifndef HCUCTL_COMMAND_H_
#define HCUCTL_COMMAND_H_

#include <chrono>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "hcudp/backend.h"
#include "hcudp/node.h"
#include "hcudp/options.h"
#include "hcudp/status.h"
#include "hcudp_cli/flags.h"
#include "output.h"

namespace hcuctl {

// Exit codes: 0 success, 1 a failed operation, 2 bad usage or bad input.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;
inline constexpr int kExitUsage = 2;

// What every command gets: the global options and where to print.
class Context {
 public:
  Context(hcudp::Options options, OutputFormat format, std::ostream& out, std::ostream& err)
      : options_(std::move(options)), format_(format), out_(out), err_(err) {}

  const hcudp::Options& options() const { return options_; }
  OutputFormat format() const { return format_; }
  std::ostream& out() { return out_; }
  std::ostream& err() { return err_; }

  // The node (hcudp/node.h) of --backend, opened on first use: the one way
  // a command reaches it. Holders include kubelet's pod-resources (asked
  // within a second).
  hcudp::StatusOr<hcudp::Node*> node();
  // The node's health query (hy-smi on a real node; a failed query leaves
  // the cards as discovered), then a fresh fail-closed look.
  hcudp::StatusOr<hcudp::NodeInventory> Look();
  // The node's backend, for what the node watcher takes (hcuctl watch).
  hcudp::StatusOr<hcudp::Backend*> backend();
  // The longest wait for the host-wide vHCU lock; set before node().
  void set_vhcu_lock_wait(std::chrono::seconds wait) { vhcu_lock_wait_ = wait; }

  void Print(const Report& report) { PrintReport(report, format_, out_); }
  void set_format(OutputFormat format) { format_ = format; }

 private:
  hcudp::Options options_;
  OutputFormat format_;
  std::ostream& out_;
  std::ostream& err_;
  std::chrono::seconds vhcu_lock_wait_{10};
  std::unique_ptr<hcudp::Node> node_;
};

struct Command {
  std::string_view name;
  std::string_view summary;  // one line for `hcuctl --help`
  std::string_view usage;    // "hcuctl vhcu create --card N --cu C --mem-mib M"
  // `args` are the words after the command name.
  int (*run)(Context& ctx, const std::vector<std::string>& args);
};

const std::vector<Command>& CommandTable();
const Command* FindCommand(std::string_view name);

// The one mapping from a Status to an exit code: bad input
// (hcudp::IsInputError, as in the daemon) is 2, anything else a failed
// operation (1).
int ExitCodeFor(const hcudp::Status& status);
// Prints "hcuctl <command>: <message>" to stderr and returns ExitCodeFor.
int Fail(Context& ctx, std::string_view command, const hcudp::Status& status);
// Prints a usage error with what to type instead and returns kExitUsage.
int UsageError(Context& ctx, const Command& command, std::string_view problem);

// Parses a command's own flags (interspersed with positionals; `-o/--output`
// is accepted there too and overrides the global one). On a usage error it
// prints it and returns nullopt; `*exit_code` is then set.
std::optional<std::vector<std::string>> ParseCommandArgs(Context& ctx, const Command& command,
                                                         hcudp::FlagSet& flags,
                                                         const std::vector<std::string>& args,
                                                         int* exit_code);

// The common shape of read-only commands: no flags of their own beyond -o,
// no positional arguments, look at the node and print build(inventory).
int RunInventoryReport(Context& ctx, const Command& command, const std::vector<std::string>& args,
                       Report (*build)(const hcudp::NodeInventory&));

// The commands, one per cmd_<name>.cc.
extern const Command kDevicesCommand;
extern const Command kNamesCommand;
extern const Command kTopologyCommand;
extern const Command kVhcuCommand;
extern const Command kVersionCommand;
extern const Command kCdiHookCommand;
extern const Command kPluginsCommand;
extern const Command kAllocateCommand;
extern const Command kAllocationsCommand;
extern const Command kHamiCommand;
extern const Command kDoctorCommand;
extern const Command kLabelsCommand;
extern const Command kDraCommand;
extern const Command kWatchCommand;
// Sub-commands of `hcuctl dra`, one per cmd_dra_<name>.cc.
extern const Command kDraPreparedCommand;
extern const Command kDraCheckCommand;

}  // namespace hcuctl

#endif  // HCUCTL_COMMAND_H_
