// ParseHealthcheck: the output of the vendor's `hy-smi --healthcheck`
// (reference/hcu-hardware.md §1.8), one entry per card line:
//   HCU[0]          : Bus Id : 0000:09:00.0         : Healthy
// Older drivers print "DCU[" instead of "HCU[". Matching is tolerant, as the
// vendor's own wrapper (reference/hcu-hardware.md §1.9): spacing around the
// colons and brackets is free, "Bus Id" may be "BusId" in any case, and the
// status word is compared without trailing punctuation ("Healthy."). The
// word "Healthy" (any case) is healthy; any other word is unhealthy, with
// the word as the reason. Cards are keyed by PCI BDF, never by the printed
// index, which need not match the library's index.
#ifndef HCUDP_HEALTHCHECK_H_
#define HCUDP_HEALTHCHECK_H_

#include <string>
#include <string_view>
#include <vector>

#include "hcudp/device.h"
#include "hcudp/export.h"
#include "hcudp/status.h"

namespace hcudp {

struct HealthcheckEntry {
  int index = 0;     // the printed HCU[i] / DCU[i]
  std::string bdf;   // lower-case "0000:09:00.0"
  std::string word;  // the status word as printed ("Healthy", "Error", ...)
  Health health = Health::kHealthy;

  bool operator==(const HealthcheckEntry& o) const {
    return index == o.index && bdf == o.bdf && word == o.word && health == o.health;
  }
};

// Lines not starting with "HCU[" or "DCU[" (banners, blank lines, warnings)
// are ignored. A card line that does not match is skipped (one odd line
// never freezes the health of every card) and described in `skipped` as
// "line N: why: \"text\"" when given. The same BDF twice keeps the worse
// verdict (and the second line is reported as skipped). An output with no
// usable card line is an InvalidArgument naming the skipped lines (hy-smi
// answered nothing useful, which must not read as "every card vanished").
HCUDP_EXPORT StatusOr<std::vector<HealthcheckEntry>> ParseHealthcheck(
    std::string_view text, std::vector<std::string>* skipped = nullptr);

}  // namespace hcudp

#endif  // HCUDP_HEALTHCHECK_H_
