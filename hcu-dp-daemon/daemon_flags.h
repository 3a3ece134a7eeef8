// The daemon's command line (DESIGN.md §3): every flag with its environment
// variable, parsed into hcudp::Options with flag > env > default precedence.
#ifndef HCU_DP_DAEMON_DAEMON_FLAGS_H_
#define HCU_DP_DAEMON_DAEMON_FLAGS_H_

#include <string>
#include <vector>

#include "hcudp/options.h"
#include "hcudp/status.h"
#include "hcudp_cli/flags.h"

namespace hcudp::daemon {

// What the command line asks for.
struct DaemonCommand {
  enum class Action { kRun, kHelp, kVersion };
  Action action = Action::kRun;
  Options options;
  std::string help_text;  // filled for kHelp
  // What start-up should log once logging is set up: Hygon's variable names
  // read as aliases of ours (flag, value, alias).
  std::vector<std::string> notices;
};

// Parses and validates. Errors are InvalidArgument with one line naming the
// flag (and env var) and the accepted values; main prints it and exits 2.
StatusOr<DaemonCommand> ParseDaemonFlags(int argc, const char* const* argv, const EnvLookup& env);

}  // namespace hcudp::daemon

#endif  // HCU_DP_DAEMON_DAEMON_FLAGS_H_
