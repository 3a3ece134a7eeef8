// The malloc settings the image gives the daemon, for benchmarks whose
// figures should be those of the image every manifest and the chart deploy.
#pragma once

#include <cstdlib>
#include <sstream>
#include <string>

#include "testing/testutil.h"

namespace hcudp::bench {

// GLIBC_TUNABLES=<value> as the Dockerfile's ENV gives it to the daemon in
// the image ("GLIBC_TUNABLES=" when it sets none: glibc's defaults), or
// HCUDP_BENCH_GLIBC_TUNABLES's value when that is set. The runner's own
// GLIBC_TUNABLES is not passed on.
inline std::string DaemonMallocEnv() {
  const std::string key = "GLIBC_TUNABLES=";
  if (const char* v = std::getenv("HCUDP_BENCH_GLIBC_TUNABLES")) return key + v;
  std::istringstream dockerfile(hcudp::testing::ReadFile(hcudp::testing::SourcePath("Dockerfile")));
  std::string line, value;
  while (std::getline(dockerfile, line)) {
    if (line.rfind("ENV ", 0) != 0 && line.rfind(" ", 0) != 0) continue;  // ENV or continued
    std::istringstream words(line);
    std::string word;
    while (words >> word) {
      if (word.rfind(key, 0) == 0) value = word.substr(key.size());
    }
  }
  return key + value;
}

}  // namespace hcudp::bench
