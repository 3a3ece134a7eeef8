// Small strict text helpers of the HAMi codec (internal): the shared ones
// (hcudp_internal/strict_text.h) plus the colon-terminated list decoder.
#ifndef HCUDP_SRC_HAMI_TEXT_UTIL_H_
#define HCUDP_SRC_HAMI_TEXT_UTIL_H_

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hcudp/status.h"
#include "hcudp_internal/strict_text.h"

namespace hcudp::hami::internal {

using text::ContainsAny;
using text::ParseInt;
using text::Quote;
using text::Split;

// The bound of the codec's int32 fields (HAMi's Go types).
inline constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();

// Decodes a list of records each terminated by ':' ("a:b:"), calling
// decode_record(n, record) for each; `what` names the list in errors
// ("node devices", "container devices"). An empty value is an empty list.
template <typename T, typename DecodeRecord>
StatusOr<std::vector<T>> DecodeColonTerminated(std::string_view value, std::string_view what,
                                               const DecodeRecord& decode_record) {
  std::vector<T> out;
  if (value.empty()) return out;
  if (value.back() != ':') {
    return InvalidArgumentError(std::string(what) + " " + Quote(value) +
                                " do not end with ':' (each record ends in ':')");
  }
  std::vector<std::string_view> records = Split(value.substr(0, value.size() - 1), ':');
  for (size_t n = 0; n < records.size(); ++n) {
    if (records[n].empty()) {
      std::string singular(what);
      if (!singular.empty() && singular.back() == 's') singular.pop_back();
      return InvalidArgumentError(singular + " record " + std::to_string(n) + " is empty");
    }
    StatusOr<T> record = decode_record(n, records[n]);
    if (!record.ok()) return record.status();
    out.push_back(std::move(record).value());
  }
  return out;
}

}  // namespace hcudp::hami::internal

#endif  // HCUDP_SRC_HAMI_TEXT_UTIL_H_
