// Civil time <-> system_clock without the C library's time zone state
// (internal to the HAMi codec).
#ifndef HCUDP_SRC_HAMI_TIME_TEXT_H_
#define HCUDP_SRC_HAMI_TIME_TEXT_H_

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace hcudp::hami::internal {

// "2006-01-02 15:04:05" (sep ' ') or "2006-01-02T15:04:05" (sep 'T') at the
// start of `text`, read as UTC; nullopt when malformed or out of range.
std::optional<std::chrono::system_clock::time_point> ParseCivil(std::string_view text, char sep);

// "2006-01-02<sep>15:04:05" of `time` in UTC, or in local time when `local`.
std::string FormatCivil(std::chrono::system_clock::time_point time, char sep, bool local);

}  // namespace hcudp::hami::internal

#endif  // HCUDP_SRC_HAMI_TIME_TEXT_H_
