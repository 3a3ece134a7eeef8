// Fuzzes encoding detection (hcuctl hami decode): whatever decodes as some
// encoding encodes back to a value that decodes as the same encoding.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "hami_fuzz_fail.h"
#include "hami_readable.h"

namespace hami = hcuctl::hami;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view value(reinterpret_cast<const char*>(data), size);
  auto decoded = hami::DecodeAnyReadable(value);
  if (!decoded.ok()) return 0;
  auto encoded = hami::EncodeReadable(*decoded);
  if (!encoded.ok()) return 0;  // e.g. a mark named ".."
  auto again = hami::DecodeReadable(decoded->encoding, *encoded);
  if (!again.ok()) HamiFuzzFail(value, "hami_readable:1");
  return 0;
}
