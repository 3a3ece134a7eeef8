#include "dra/slice_names.h"

#include <cctype>
#include <vector>

namespace hcudp::dra {
namespace {

bool LabelOk(std::string_view s) {
  if (s.empty() || s.size() > 63) return false;
  for (char c : s) {
    if (!(std::islower(static_cast<unsigned char>(c)) ||
          std::isdigit(static_cast<unsigned char>(c)) || c == '-')) {
      return false;
    }
  }
  return s.front() != '-' && s.back() != '-';
}

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (;;) {
    size_t pos = s.find(sep, start);
    out.push_back(s.substr(start, pos == std::string_view::npos ? pos : pos - start));
    if (pos == std::string_view::npos) return out;
    start = pos + 1;
  }
}

bool NumericOk(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return s.size() == 1 || s.front() != '0';
}

bool IdentifiersOk(std::string_view s, bool prerelease) {
  for (std::string_view id : Split(s, '.')) {
    if (id.empty()) return false;
    bool all_digits = true;
    for (char c : id) {
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-')) return false;
      all_digits = all_digits && std::isdigit(static_cast<unsigned char>(c));
    }
    if (prerelease && all_digits && !NumericOk(id)) return false;
  }
  return true;
}

}  // namespace

std::string QuoteShort(std::string_view text) {
  constexpr size_t kShown = 64;
  if (text.size() <= kShown) return "\"" + std::string(text) + "\"";
  return "\"" + std::string(text.substr(0, kShown)) + "...\" (" + std::to_string(text.size()) +
         " bytes)";
}

Status CheckDnsLabel(std::string_view name, const std::string& what) {
  if (LabelOk(name)) return OkStatus();
  return InvalidArgumentError(what + " " + QuoteShort(name) +
                              " is not a DNS label (lower-case letters, digits and '-', "
                              "starting and ending with a letter or digit, at most 63)");
}

Status CheckDnsSubdomain(std::string_view name, const std::string& what, size_t max_length) {
  bool ok = !name.empty() && name.size() <= max_length;
  if (ok) {
    for (std::string_view label : Split(name, '.')) ok = ok && LabelOk(label);
  }
  if (ok) return OkStatus();
  return InvalidArgumentError(what + " " + QuoteShort(name) +
                              " is not a DNS subdomain (lower-case labels joined by '.', at most " +
                              std::to_string(max_length) + " characters)");
}

bool IsSemver(std::string_view text) {
  if (text.empty() || text.size() > 64) return false;
  std::string_view core = text;
  std::string_view build, pre;
  if (size_t plus = core.find('+'); plus != std::string_view::npos) {
    build = core.substr(plus + 1);
    core = core.substr(0, plus);
    if (!IdentifiersOk(build, false)) return false;
  }
  if (size_t dash = core.find('-'); dash != std::string_view::npos) {
    pre = core.substr(dash + 1);
    core = core.substr(0, dash);
    if (!IdentifiersOk(pre, true)) return false;
  }
  std::vector<std::string_view> parts = Split(core, '.');
  if (parts.size() != 3) return false;
  for (std::string_view p : parts) {
    if (!NumericOk(p)) return false;
  }
  return true;
}

}  // namespace hcudp::dra
