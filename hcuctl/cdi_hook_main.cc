// hcu-cdi-hook: RunCdiHook as a statically linked program, for the host
// (cdi_hook.h). The runtime passes argv[0] as the spec's args[0].
#include <iostream>
#include <string>
#include <vector>

#include "cdi_hook.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return hcuctl::RunCdiHook(args, std::cin, std::cerr);
}
