// Fuzzes hcu-cdi-hook's reading of the OCI state on stdin (hcuctl/cdi_hook.h):
// any bytes give exit 0 or 2 and a message, never a crash (a million '['
// once overflowed the stack). No --link is given, so the hook stops after
// the state and never touches the file system the state names.
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>

#include "cdi_hook.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::istringstream state(std::string(reinterpret_cast<const char*>(data), size));
  std::ostringstream err;
  const int code = hcuctl::RunCdiHook({"create-symlinks"}, state, err);
  if (code != 0 && code != 2) std::abort();
  if (code == 2 && err.str().empty()) std::abort();  // bad usage always says why
  return 0;
}
