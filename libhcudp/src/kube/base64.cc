#include "kube/base64.h"

#include <cstdint>

namespace hcudp::kube {
namespace {

int Value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

}  // namespace

std::optional<std::string> Base64Decode(std::string_view text) {
  std::string out;
  out.reserve(text.size() * 3 / 4);
  uint32_t bits = 0;
  int nbits = 0;
  size_t digits = 0;
  size_t padding = 0;
  for (char c : text) {
    if (c == '\n' || c == '\r') continue;
    if (c == '=') {
      ++padding;
      continue;
    }
    if (padding > 0) return std::nullopt;  // data after padding
    int v = Value(c);
    if (v < 0) return std::nullopt;
    ++digits;
    bits = (bits << 6) | static_cast<uint32_t>(v);
    nbits += 6;
    if (nbits >= 8) {
      nbits -= 8;
      out.push_back(static_cast<char>((bits >> nbits) & 0xff));
    }
  }
  if (digits % 4 == 1) return std::nullopt;
  if (padding > 0 && (digits + padding) % 4 != 0) return std::nullopt;
  if (padding > 2) return std::nullopt;
  return out;
}

}  // namespace hcudp::kube
