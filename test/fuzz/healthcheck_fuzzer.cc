// Fuzzes ParseHealthcheck (hy-smi --healthcheck output). It must never
// crash; every accepted entry must carry a well-formed lower-case BDF, a
// non-empty word, and a verdict that agrees with the word.
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "hcudp/healthcheck.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  hcudp::StatusOr<std::vector<hcudp::HealthcheckEntry>> got = hcudp::ParseHealthcheck(text);
  if (!got.ok()) return 0;
  if (got->empty()) std::abort();
  for (const hcudp::HealthcheckEntry& e : *got) {
    if (e.bdf.size() != 12 || e.word.empty() || e.index < 0) std::abort();
    for (char c : e.bdf) {
      if (std::isupper(static_cast<unsigned char>(c))) std::abort();
    }
    const bool healthy_word = e.word.size() == 7 && (e.word[0] == 'H' || e.word[0] == 'h');
    if (e.health == hcudp::Health::kHealthy && !healthy_word) std::abort();
  }
  return 0;
}
