// Small strict text helpers shared by the conf-file and SimNode parsers:
// line splitting, `key: value` splitting, decimal and hex numbers, PCI BDFs
// and UUIDs. Internal to libhcudp.
#ifndef HCUDP_SRC_CONF_TEXT_UTIL_H_
#define HCUDP_SRC_CONF_TEXT_UTIL_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hcudp::text {

struct Line {
  int number = 0;  // 1-based
  std::string_view text;
};

// Splits at '\n' (a trailing '\r' is dropped). Blank lines are kept.
std::vector<Line> SplitLines(std::string_view text);

std::string_view Trim(std::string_view s);

struct KeyValue {
  std::string_view key;
  std::string_view value;  // trimmed
};

// "key: value" split at the first ':'; nullopt when there is no ':' or the
// key is empty or contains whitespace.
std::optional<KeyValue> SplitKeyValue(std::string_view line);

// Decimal integer, optional leading '-', no '+', no spaces, no overflow.
std::optional<int64_t> ParseInt(std::string_view s);
std::optional<uint64_t> ParseUint(std::string_view s);
// "0x" followed by 1..16 hex digits (either case).
std::optional<uint64_t> ParseHex64(std::string_view s);

// "dddd:bb:dd.f": 4+2+2 lower-case hex digits and a function digit 0..7.
bool IsPciBdf(std::string_view s);
// 8-4-4-4-12 lower-case hex digits.
bool IsUuid(std::string_view s);

// "line 7: " + message.
std::string AtLine(int line, std::string_view message);

}  // namespace hcudp::text

#endif  // HCUDP_SRC_CONF_TEXT_UTIL_H_
