#include "conf/text_util.h"

#include <charconv>
#include <limits>

namespace hcudp::text {
namespace {

bool IsLowerHex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

bool AllLowerHex(std::string_view s) {
  for (char c : s) {
    if (!IsLowerHex(c)) return false;
  }
  return true;
}

}  // namespace

std::vector<Line> SplitLines(std::string_view text) {
  std::vector<Line> lines;
  int number = 1;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back({number++, line});
    start = end + 1;
  }
  return lines;
}

std::string_view Trim(std::string_view s) {
  const char* kSpace = " \t\r\n\f\v";
  size_t b = s.find_first_not_of(kSpace);
  if (b == std::string_view::npos) return {};
  size_t e = s.find_last_not_of(kSpace);
  return s.substr(b, e - b + 1);
}

std::optional<KeyValue> SplitKeyValue(std::string_view line) {
  size_t colon = line.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  std::string_view key = line.substr(0, colon);
  if (key.empty() || key.find_first_of(" \t") != std::string_view::npos) return std::nullopt;
  return KeyValue{key, Trim(line.substr(colon + 1))};
}

std::optional<int64_t> ParseInt(std::string_view s) {
  if (s.empty() || s.front() == '+') return std::nullopt;
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v, 10);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<uint64_t> ParseUint(std::string_view s) {
  if (s.empty() || s.front() == '+' || s.front() == '-') return std::nullopt;
  uint64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v, 10);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<uint64_t> ParseHex64(std::string_view s) {
  if (s.size() < 3 || s.size() > 18 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X')) {
    return std::nullopt;
  }
  std::string_view digits = s.substr(2);
  if (digits.front() == '-' || digits.front() == '+') return std::nullopt;
  uint64_t v = 0;
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v, 16);
  if (ec != std::errc() || ptr != digits.data() + digits.size()) return std::nullopt;
  return v;
}

bool IsPciBdf(std::string_view s) {
  // 0000:09:00.0
  if (s.size() != 12 || s[4] != ':' || s[7] != ':' || s[10] != '.') return false;
  if (!AllLowerHex(s.substr(0, 4)) || !AllLowerHex(s.substr(5, 2)) ||
      !AllLowerHex(s.substr(8, 2))) {
    return false;
  }
  // Device numbers are 5 bits (0x00..0x1f), functions 3 bits.
  int device = std::stoi(std::string(s.substr(8, 2)), nullptr, 16);
  return device <= 0x1f && s[11] >= '0' && s[11] <= '7';
}

bool IsUuid(std::string_view s) {
  if (s.size() != 36) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    bool dash = (i == 8 || i == 13 || i == 18 || i == 23);
    if (dash ? s[i] != '-' : !IsLowerHex(s[i])) return false;
  }
  return true;
}

std::string AtLine(int line, std::string_view message) {
  return "line " + std::to_string(line) + ": " + std::string(message);
}

}  // namespace hcudp::text
