// RFC3339 time: the library's one parser (HAMi annotations, object metadata).
#include "hcudp/hami/rfc3339.h"

#include "hami/text_util.h"
#include "hami/time_text.h"

namespace hcudp::hami {

using internal::ParseInt;
using internal::Quote;

StatusOr<std::chrono::system_clock::time_point> ParseRfc3339(std::string_view text) {
  auto base = internal::ParseCivil(text, 'T');
  if (!base) {
    return InvalidArgumentError("time " + Quote(text) +
                                " is not RFC3339 (2006-01-02T15:04:05Z07:00)");
  }
  size_t pos = 19;
  if (pos < text.size() && text[pos] == '.') {
    size_t digits = 0;
    while (pos + 1 + digits < text.size() && text[pos + 1 + digits] >= '0' &&
           text[pos + 1 + digits] <= '9') {
      ++digits;
    }
    if (digits == 0 || digits > 9) {
      return InvalidArgumentError("time " + Quote(text) + " has a malformed fraction");
    }
    pos += 1 + digits;
  }
  std::string_view zone = text.substr(pos);
  if (zone == "Z") return *base;
  if (zone.size() == 6 && (zone[0] == '+' || zone[0] == '-') && zone[3] == ':') {
    auto hh = ParseInt(zone.substr(1, 2), 0, 23);
    auto mm = ParseInt(zone.substr(4, 2), 0, 59);
    if (hh && mm && zone[1] != '-' && zone[4] != '-') {
      auto offset = std::chrono::seconds(*hh * 3600 + *mm * 60);
      return zone[0] == '+' ? *base - offset : *base + offset;
    }
  }
  return InvalidArgumentError("time " + Quote(text) + " has no valid zone (Z or +hh:mm)");
}

std::string FormatRfc3339Utc(std::chrono::system_clock::time_point time) {
  return internal::FormatCivil(time, 'T', /*local=*/false) + "Z";
}

}  // namespace hcudp::hami
