// Small strict text helpers shared by libhcudp's HAMi codec and the two
// frontends (flags, hcuctl's readable HAMi records). Header-only and never
// installed: the library does not export them, and each user compiles its own
// inline copy of one definition.
#ifndef HCUDP_INTERNAL_STRICT_TEXT_H_
#define HCUDP_INTERNAL_STRICT_TEXT_H_

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hcudp::text {

// Splits on `sep`, keeping empty parts ("a,,b" -> a, "", b; "" -> {""}).
inline std::vector<std::string_view> Split(std::string_view text, char sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    size_t pos = text.find(sep, start);
    if (pos == std::string_view::npos) {
      parts.push_back(text.substr(start));
      return parts;
    }
    parts.push_back(text.substr(start, pos - start));
    start = pos + 1;
  }
}

// Decimal integer: optional '-', then 1..18 digits, nothing else. Returns
// nullopt when malformed or outside [min, max].
inline std::optional<int64_t> ParseInt(std::string_view text, int64_t min, int64_t max) {
  bool negative = !text.empty() && text[0] == '-';
  std::string_view digits = negative ? text.substr(1) : text;
  if (digits.empty() || digits.size() > 18) return std::nullopt;
  int64_t value = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + (c - '0');
  }
  if (negative) value = -value;
  if (value < min || value > max) return std::nullopt;
  return value;
}

// True when `text` contains any of `chars`.
inline bool ContainsAny(std::string_view text, std::string_view chars) {
  return text.find_first_of(chars) != std::string_view::npos;
}

// Text quoted for an error message, cut to 64 bytes, non-printable bytes
// shown as \xNN.
inline std::string Quote(std::string_view text) {
  constexpr size_t kMax = 64;
  std::string out = "\"";
  for (size_t i = 0; i < text.size() && i < kMax; ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\') {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  if (text.size() > kMax) out += "...";
  out += "\"";
  return out;
}

// Go's strconv.ParseBool spellings: 1 t T TRUE true True, 0 f F FALSE false
// False.
inline std::optional<bool> ParseGoBool(std::string_view text) {
  for (std::string_view t : {"1", "t", "T", "TRUE", "true", "True"}) {
    if (text == t) return true;
  }
  for (std::string_view f : {"0", "f", "F", "FALSE", "false", "False"}) {
    if (text == f) return false;
  }
  return std::nullopt;
}

}  // namespace hcudp::text

#endif  // HCUDP_INTERNAL_STRICT_TEXT_H_
