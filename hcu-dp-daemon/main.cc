// hcu-dp-daemon: parse flags, set up logging, run. Everything else lives in
// the daemon's components and in libhcudp.
#include <malloc.h>

#include <cstdio>
#include <string>

#include "daemon.h"
#include "daemon_flags.h"
#include "hcudp/version.h"
#include "hcudp_internal/log.h"
#include "logging.h"

int main(int argc, char** argv) {
  using hcudp::daemon::DaemonCommand;
  // Few, mostly idle threads: one malloc arena each would only cost resident
  // memory (measured ~0.3 MiB); two are plenty for Allocate's load.
  mallopt(M_ARENA_MAX, 2);
  hcudp::daemon::BlockTerminationSignals();
  auto command = hcudp::daemon::ParseDaemonFlags(argc, argv, hcudp::ProcessEnv());
  if (!command.ok()) {
    std::fprintf(stderr, "hcu-dp-daemon: %s\n", command.status().message().c_str());
    return 2;
  }
  switch (command->action) {
    case DaemonCommand::Action::kHelp:
      std::fputs(command->help_text.c_str(), stdout);
      return 0;
    case DaemonCommand::Action::kVersion:
      std::printf("%s\n", hcudp::Version());
      return 0;
    case DaemonCommand::Action::kRun:
      break;
  }
  const hcudp::Options& options = command->options;
  hcudp::daemon::InitLogging(argv[0], options.log_level, options.log_severity);
  for (const std::string& notice : command->notices) LOG(INFO) << notice;
  return hcudp::daemon::RunDaemon(options);
}
