#include "hami/time_text.h"

#include <cstdio>
#include <ctime>

#include "hami/text_util.h"

namespace hcudp::hami::internal {
namespace {

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's
// days_from_civil).
int64_t DaysFromCivil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

int DaysInMonth(int64_t y, int64_t m) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return m == 2 && leap ? 29 : kDays[m - 1];
}

std::optional<int64_t> Digits(std::string_view text, size_t pos, size_t n, int64_t min,
                              int64_t max) {
  if (pos + n > text.size()) return std::nullopt;
  std::string_view part = text.substr(pos, n);
  if (part.find('-') != std::string_view::npos) return std::nullopt;
  return ParseInt(part, min, max);
}

}  // namespace

std::optional<std::chrono::system_clock::time_point> ParseCivil(std::string_view text, char sep) {
  if (text.size() < 19 || text[4] != '-' || text[7] != '-' || text[10] != sep || text[13] != ':' ||
      text[16] != ':') {
    return std::nullopt;
  }
  // Years a system_clock (int64 ns) holds with room to spare.
  auto y = Digits(text, 0, 4, 1900, 2200);
  auto mo = Digits(text, 5, 2, 1, 12);
  auto d = Digits(text, 8, 2, 1, 31);
  auto h = Digits(text, 11, 2, 0, 23);
  auto mi = Digits(text, 14, 2, 0, 59);
  auto s = Digits(text, 17, 2, 0, 59);
  if (!y || !mo || !d || !h || !mi || !s) return std::nullopt;
  if (*d > DaysInMonth(*y, *mo)) return std::nullopt;
  int64_t seconds = DaysFromCivil(*y, *mo, *d) * 86400 + *h * 3600 + *mi * 60 + *s;
  return std::chrono::system_clock::time_point(std::chrono::seconds(seconds));
}

std::string FormatCivil(std::chrono::system_clock::time_point time, char sep, bool local) {
  std::time_t t = std::chrono::system_clock::to_time_t(time);
  std::tm tm{};
  if (local) {
    localtime_r(&t, &tm);
  } else {
    gmtime_r(&t, &tm);
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02d%c%02d:%02d:%02d", tm.tm_year + 1900, tm.tm_mon + 1,
                tm.tm_mday, sep, tm.tm_hour, tm.tm_min, tm.tm_sec);
  return buf;
}

}  // namespace hcudp::hami::internal
