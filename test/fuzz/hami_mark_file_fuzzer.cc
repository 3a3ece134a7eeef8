// Fuzzes the mark-file-name parser: accepted names re-format byte for byte
// when their numbers are canonical, and always re-parse to the same fields.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "hami_fuzz_fail.h"
#include "hcudp/hami/mark_file.h"

namespace hami = hcudp::hami;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view value(reinterpret_cast<const char*>(data), size);
  auto mark = hami::ParseMarkFileName(value);
  if (!mark.ok()) return 0;
  auto name = hami::FormatMarkFileName(*mark);
  if (!name.ok()) return 0;  // e.g. a container named ".."
  auto again = hami::ParseMarkFileName(*name);
  if (!again.ok() || !(*again == *mark)) HamiFuzzFail(value, "hami_mark_file:1");
  return 0;
}
