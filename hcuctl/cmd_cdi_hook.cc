// hcuctl cdi-hook: the CDI createContainer hook (cdi_hook.h) from the CLI,
// for trying it on a bundle by hand; specs name the static hcu-cdi-hook.
#include <iostream>

#include "cdi_hook.h"
#include "command.h"

namespace hcuctl {
namespace {

int RunCdiHookCommand(Context& ctx, const std::vector<std::string>& args) {
  if (!args.empty() && (args[0] == "--help" || args[0] == "-h")) {
    ctx.out() << "usage: " << kCdiHookCommand.usage << "\n";
    return kExitOk;
  }
  return RunCdiHook(args, std::cin, ctx.err());
}

}  // namespace

const Command kCdiHookCommand = {
    "cdi-hook", "CDI createContainer hook: make /dev/dri/by-path links in a container",
    "hcuctl cdi-hook create-symlinks --link ../card1::/dev/dri/by-path/pci-<bdf>-card ... "
    "(OCI state on stdin)",
    RunCdiHookCommand};

}  // namespace hcuctl
