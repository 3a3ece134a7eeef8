// Fuzzes ParseVdevConf and the file-name parser; an accepted conf must
// survive Format -> Parse unchanged.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "hcudp/vdev_conf.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)hcudp::ParseVdevConfFileName(text);
  hcudp::StatusOr<hcudp::VdevConf> conf = hcudp::ParseVdevConf(text);
  if (!conf.ok()) return 0;
  std::string formatted = hcudp::FormatVdevConf(*conf);
  hcudp::StatusOr<hcudp::VdevConf> back = hcudp::ParseVdevConf(formatted);
  if (!back.ok() || hcudp::FormatVdevConf(*back) != formatted) std::abort();
  (void)hcudp::CheckPipeIdsUnique({*conf, *back});
  return 0;
}
