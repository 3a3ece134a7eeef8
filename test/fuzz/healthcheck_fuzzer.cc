// Fuzzes ParseHealthcheck (hy-smi --healthcheck output). It must never
// crash; every accepted entry must carry a well-formed lower-case BDF, a
// non-empty word without trailing punctuation, and a verdict that agrees
// with the word. The input is also parsed between two known good card
// lines: whatever odd lines it holds, those two cards keep their verdicts
// (one odd line never freezes the health of every card).
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "hcudp/healthcheck.h"

namespace {

void CheckEntries(const std::vector<hcudp::HealthcheckEntry>& entries) {
  if (entries.empty()) std::abort();
  for (const hcudp::HealthcheckEntry& e : entries) {
    if (e.bdf.size() != 12 || e.word.empty() || e.index < 0) std::abort();
    if (std::ispunct(static_cast<unsigned char>(e.word.back()))) std::abort();
    for (char c : e.bdf) {
      if (std::isupper(static_cast<unsigned char>(c))) std::abort();
    }
    const bool healthy_word = e.word.size() == 7 && (e.word[0] == 'H' || e.word[0] == 'h');
    if (e.health == hcudp::Health::kHealthy && !healthy_word) std::abort();
  }
}

std::string Lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  hcudp::StatusOr<std::vector<hcudp::HealthcheckEntry>> got = hcudp::ParseHealthcheck(text);
  if (got.ok()) CheckEntries(*got);

  // Odd lines mixed into good ones.
  constexpr char kGood[] = "0000:09:00.0";
  constexpr char kBad[] = "0000:0c:00.0";
  const std::string mixed = std::string("HCU[0] : Bus Id : ") + kGood + " : Healthy\n" +
                            std::string(text) + "\nHCU[1] : Bus Id : " + kBad + " : Error.\n";
  std::vector<std::string> skipped;
  hcudp::StatusOr<std::vector<hcudp::HealthcheckEntry>> both =
      hcudp::ParseHealthcheck(mixed, &skipped);
  if (!both.ok()) std::abort();
  CheckEntries(*both);
  const std::string lowered = Lower(text);
  bool saw_good = false, saw_bad = false;
  for (const hcudp::HealthcheckEntry& e : *both) {
    if (e.bdf == kGood) {
      saw_good = true;
      // Healthy unless the input itself lists that card with another word.
      if (e.health != hcudp::Health::kHealthy && lowered.find(kGood) == std::string::npos) {
        std::abort();
      }
    }
    if (e.bdf == kBad) {
      saw_bad = true;
      if (e.health != hcudp::Health::kUnhealthy) std::abort();  // the worse verdict wins
    }
  }
  if (!saw_good || !saw_bad) std::abort();
  return 0;
}
