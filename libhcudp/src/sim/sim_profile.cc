#include "sim/sim_profile.h"

#include <string>

#include "conf/text_util.h"

namespace hcudp::sim {
namespace {

// Reads digits then `suffix` from the front of `rest`.
std::optional<uint64_t> Take(std::string_view* rest, std::string_view suffix) {
  size_t end = rest->find(suffix);
  if (end == std::string_view::npos || end == 0 || end > 6) return std::nullopt;
  std::string_view digits = rest->substr(0, end);
  if (digits.size() > 1 && digits[0] == '0') return std::nullopt;
  std::optional<uint64_t> v = text::ParseUint(digits);
  rest->remove_prefix(end + suffix.size());
  return v;
}

bool ValidSlices(uint64_t engines) {
  if (engines % kMigSesPerSlice != 0) return false;
  uint64_t slices = engines / kMigSesPerSlice;
  return slices == 1 || slices == 2 || slices == 4;
}

}  // namespace

StatusOr<MigProfile> ParseMigProfile(std::string_view name) {
  auto bad = [&](const std::string& why) {
    return InvalidArgumentError("profile \"" + std::string(name) +
                                "\" is not <g>g.<m>gb or <c>c.<g>g.<m>gb: " + why);
  };
  std::string_view rest = name;
  std::optional<uint64_t> c;
  if (rest.find('c') != std::string_view::npos) {
    c = Take(&rest, "c.");
    if (!c) return bad("bad <c>c. part");
  }
  std::optional<uint64_t> g = Take(&rest, "g.");
  if (!g) return bad("bad <g>g. part");
  std::optional<uint64_t> m = Take(&rest, "gb");
  if (!m || !rest.empty()) return bad("bad <m>gb part");
  if (!ValidSlices(*g)) return bad("g must be 2, 4 or 8 (2 shader engines per slice)");
  MigProfile p;
  p.gi_slices = static_cast<int>(*g / kMigSesPerSlice);
  p.ci_slices = p.gi_slices;
  if (c) {
    if (*c == 0 || *c % kMigSesPerSlice != 0 || *c >= *g) {
      return bad("c must be a multiple of 2 below g");
    }
    p.ci_slices = static_cast<int>(*c / kMigSesPerSlice);
  }
  p.memory_gib = *m;
  return p;
}

}  // namespace hcudp::sim
