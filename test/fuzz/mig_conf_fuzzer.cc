// Fuzzes ParseMigConf and the file-name parser; an accepted conf must
// survive Format -> Parse unchanged.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "hcudp/mig_conf.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)hcudp::ParseMigConfFileName(text);
  hcudp::StatusOr<hcudp::MigConf> conf = hcudp::ParseMigConf(text);
  if (!conf.ok()) return 0;
  std::string formatted = hcudp::FormatMigConf(*conf);
  hcudp::StatusOr<hcudp::MigConf> back = hcudp::ParseMigConf(formatted);
  if (!back.ok() || hcudp::FormatMigConf(*back) != formatted) std::abort();
  (void)hcudp::MigProfileName(8, conf->gi.gpu_slice_count, conf->ci.gpu_slice_count,
                              conf->gi.memory_size_mb);
  return 0;
}
