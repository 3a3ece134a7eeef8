#include "hcudp/healthcheck.h"

#include <algorithm>
#include <cctype>
#include <set>

namespace hcudp {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

// "0000:09:00.0": 4 hex, ':', 2 hex, ':', 2 hex, '.', 1 digit 0-7.
bool IsBdf(std::string_view s) {
  if (s.size() != 12) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (i == 4 || i == 7) {
      if (c != ':') return false;
    } else if (i == 10) {
      if (c != '.') return false;
    } else if (i == 11) {
      if (c < '0' || c > '7') return false;
    } else if (!std::isxdigit(static_cast<unsigned char>(c))) {
      return false;
    }
  }
  return true;
}

// Splits on ':' but not inside the BDF: the line has the fields
// "HCU[i]", "Bus Id", "<bdf>", "<word>", and the BDF itself holds colons.
Status ParseCardLine(std::string_view line, int line_no, HealthcheckEntry* out) {
  const auto bad = [&](const std::string& why) {
    return InvalidArgumentError("hy-smi --healthcheck line " + std::to_string(line_no) + ": " +
                                why + ": \"" + std::string(line) + "\"");
  };
  const size_t close = line.find(']');
  if (close == std::string_view::npos) return bad("missing ']'");
  const std::string_view index_text = line.substr(4, close - 4);
  if (index_text.empty() || index_text.size() > 6 ||
      !std::all_of(index_text.begin(), index_text.end(),
                   [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
    return bad("card index is not a number");
  }
  out->index = std::stoi(std::string(index_text));

  std::string_view rest = Trim(line.substr(close + 1));
  if (rest.empty() || rest.front() != ':') return bad("expected ':' after the card index");
  rest = Trim(rest.substr(1));
  constexpr std::string_view kBusId = "Bus Id";
  if (rest.size() < kBusId.size() || !EqualsIgnoreCase(rest.substr(0, kBusId.size()), kBusId)) {
    return bad("expected \"Bus Id\"");
  }
  rest = Trim(rest.substr(kBusId.size()));
  if (rest.empty() || rest.front() != ':') return bad("expected ':' after \"Bus Id\"");
  rest = Trim(rest.substr(1));
  const size_t bdf_end = rest.find_first_of(" \t");
  const std::string_view bdf = rest.substr(0, std::min(bdf_end, rest.size()));
  if (!IsBdf(bdf)) return bad("bus id is not a PCI address like 0000:09:00.0");
  out->bdf.assign(bdf);
  std::transform(out->bdf.begin(), out->bdf.end(), out->bdf.begin(), ::tolower);
  rest = Trim(rest.substr(bdf.size()));
  if (rest.empty() || rest.front() != ':') return bad("expected ':' after the bus id");
  rest = Trim(rest.substr(1));
  if (rest.empty()) return bad("missing status word");
  // The status is the first word; anything after it is commentary.
  const size_t word_end = rest.find_first_of(" \t");
  out->word.assign(rest.substr(0, std::min(word_end, rest.size())));
  out->health = EqualsIgnoreCase(out->word, "Healthy") ? Health::kHealthy : Health::kUnhealthy;
  return OkStatus();
}

}  // namespace

StatusOr<std::vector<HealthcheckEntry>> ParseHealthcheck(std::string_view text) {
  std::vector<HealthcheckEntry> entries;
  std::set<std::string> seen;
  int line_no = 0;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    ++line_no;
    line = Trim(line);
    if (line.size() < 4 || (line.substr(0, 4) != "HCU[" && line.substr(0, 4) != "DCU[")) continue;
    HealthcheckEntry entry;
    HCUDP_RETURN_IF_ERROR(ParseCardLine(line, line_no, &entry));
    if (!seen.insert(entry.bdf).second) {
      return InvalidArgumentError("hy-smi --healthcheck line " + std::to_string(line_no) +
                                  ": bus id " + entry.bdf + " listed twice");
    }
    entries.push_back(std::move(entry));
  }
  if (entries.empty()) {
    return InvalidArgumentError("hy-smi --healthcheck printed no HCU[..] or DCU[..] card line");
  }
  return entries;
}

}  // namespace hcudp
