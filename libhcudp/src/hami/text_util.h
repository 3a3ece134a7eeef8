// Small strict text helpers shared by the HAMi codec (internal).
#ifndef HCUDP_SRC_HAMI_TEXT_UTIL_H_
#define HCUDP_SRC_HAMI_TEXT_UTIL_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hcudp::hami::internal {

// Splits on `sep`, keeping empty parts ("a,,b" -> a, "", b; "" -> {""}).
std::vector<std::string_view> Split(std::string_view text, char sep);

// Decimal integer: optional '-', then 1..18 digits, nothing else. Returns
// nullopt when malformed or outside [min, max].
std::optional<int64_t> ParseInt(std::string_view text, int64_t min, int64_t max);

// Go's strconv.ParseBool spellings.
std::optional<bool> ParseGoBool(std::string_view text);

// True when `text` contains any of `chars`.
bool ContainsAny(std::string_view text, std::string_view chars);

// Text quoted for an error message, cut to 64 bytes, non-printable bytes
// shown as \xNN.
std::string Quote(std::string_view text);

}  // namespace hcudp::hami::internal

#endif  // HCUDP_SRC_HAMI_TEXT_UTIL_H_
