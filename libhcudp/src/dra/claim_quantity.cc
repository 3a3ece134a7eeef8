// Kubernetes quantities as integers (resource.Quantity.Value(): rounded up).
#include <cstdint>
#include <limits>
#include <string>

#include "hcudp/dra/claim.h"

namespace hcudp::dra {
namespace {

using Wide = __int128;

constexpr Wide kWideLimit = Wide{1} << 120;

Status Bad(std::string_view text, const char* why) {
  return InvalidArgumentError("quantity \"" + std::string(text.substr(0, 64)) + "\": " + why);
}

bool MulChecked(Wide* value, Wide by) {
  if (*value != 0 && by > kWideLimit / *value) return false;
  *value *= by;
  return true;
}

}  // namespace

StatusOr<int64_t> ParseQuantity(std::string_view text) {
  std::string_view rest = text;
  if (rest.empty()) return Bad(text, "empty");
  if (rest.front() == '+') rest.remove_prefix(1);
  if (!rest.empty() && rest.front() == '-') return Bad(text, "negative");
  Wide num = 0;
  Wide den = 1;
  int digits = 0;
  bool dot = false;
  size_t i = 0;
  for (; i < rest.size(); ++i) {
    char c = rest[i];
    if (c == '.' && !dot) {
      dot = true;
      continue;
    }
    if (c < '0' || c > '9') break;
    if (++digits > 30) return Bad(text, "too many digits");
    num = num * 10 + (c - '0');
    if (dot) den *= 10;
  }
  if (digits == 0) return Bad(text, "no digits");
  std::string_view suffix = rest.substr(i);
  int binary_shift = 0;
  int decimal_exp = 0;
  if (suffix.empty()) {
  } else if (suffix.size() == 2 && suffix[1] == 'i') {
    static constexpr std::string_view kBinary = "KMGTPE";
    size_t at = kBinary.find(suffix[0]);
    if (at == std::string_view::npos) return Bad(text, "unknown suffix");
    binary_shift = 10 * static_cast<int>(at + 1);
  } else if (suffix.size() == 1) {
    switch (suffix[0]) {
      case 'n':
        decimal_exp = -9;
        break;
      case 'u':
        decimal_exp = -6;
        break;
      case 'm':
        decimal_exp = -3;
        break;
      case 'k':
        decimal_exp = 3;
        break;
      case 'M':
        decimal_exp = 6;
        break;
      case 'G':
        decimal_exp = 9;
        break;
      case 'T':
        decimal_exp = 12;
        break;
      case 'P':
        decimal_exp = 15;
        break;
      case 'E':
        decimal_exp = 18;
        break;
      default:
        return Bad(text, "unknown suffix");
    }
  } else if (suffix[0] == 'e' || suffix[0] == 'E') {
    std::string_view exp = suffix.substr(1);
    bool negative = false;
    if (!exp.empty() && (exp[0] == '+' || exp[0] == '-')) {
      negative = exp[0] == '-';
      exp.remove_prefix(1);
    }
    if (exp.empty() || exp.size() > 2) return Bad(text, "bad exponent");
    for (char c : exp) {
      if (c < '0' || c > '9') return Bad(text, "bad exponent");
      decimal_exp = decimal_exp * 10 + (c - '0');
    }
    if (negative) decimal_exp = -decimal_exp;
  } else {
    return Bad(text, "unknown suffix");
  }
  if (!MulChecked(&num, Wide{1} << binary_shift)) return Bad(text, "too large");
  for (int e = 0; e < decimal_exp; ++e) {
    if (!MulChecked(&num, 10)) return Bad(text, "too large");
  }
  for (int e = 0; e > decimal_exp; --e) {
    if (!MulChecked(&den, 10)) return Bad(text, "too many decimals");
  }
  Wide value = (num + den - 1) / den;
  if (value > std::numeric_limits<int64_t>::max()) return Bad(text, "too large");
  return static_cast<int64_t>(value);
}

}  // namespace hcudp::dra
