// PCI BDF text <-> the RSMI BDFID integer (seed-behaviour.md §6.3).
#include <cstdio>

#include "hcudp/topology.h"

namespace hcudp {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Exactly `min_digits`..`max_digits` hex digits.
bool ParseHex(std::string_view text, size_t min_digits, size_t max_digits, uint64_t* out) {
  if (text.size() < min_digits || text.size() > max_digits) return false;
  uint64_t v = 0;
  for (char c : text) {
    int h = HexValue(c);
    if (h < 0) return false;
    v = v << 4 | static_cast<uint64_t>(h);
  }
  *out = v;
  return true;
}

}  // namespace

StatusOr<uint64_t> BdfToId(std::string_view bdf) {
  auto bad = [&](std::string_view why) {
    return InvalidArgumentError("PCI address \"" + std::string(bdf) +
                                "\" is not domain:bus:device.function (" + std::string(why) + ")");
  };
  size_t colon1 = bdf.find(':');
  size_t colon2 = colon1 == std::string_view::npos ? colon1 : bdf.find(':', colon1 + 1);
  size_t dot = colon2 == std::string_view::npos ? colon2 : bdf.find('.', colon2 + 1);
  if (dot == std::string_view::npos) return bad("expected dddd:bb:dd.f");
  uint64_t domain = 0, bus = 0, device = 0, function = 0;
  if (!ParseHex(bdf.substr(0, colon1), 4, 8, &domain)) return bad("domain");
  if (!ParseHex(bdf.substr(colon1 + 1, colon2 - colon1 - 1), 2, 2, &bus)) return bad("bus");
  if (!ParseHex(bdf.substr(colon2 + 1, dot - colon2 - 1), 2, 2, &device) || device > 0x1f) {
    return bad("device must be 00-1f");
  }
  if (!ParseHex(bdf.substr(dot + 1), 1, 1, &function) || function > 7) {
    return bad("function must be 0-7");
  }
  return domain << 32 | bus << 8 | device << 3 | function;
}

std::string BdfFromId(uint64_t id) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04x:%02x:%02x.%x",
                static_cast<unsigned>((id >> 32) & 0xffffffffu),
                static_cast<unsigned>((id >> 8) & 0xff), static_cast<unsigned>((id >> 3) & 0x1f),
                static_cast<unsigned>(id & 0x7));
  return buf;
}

}  // namespace hcudp
