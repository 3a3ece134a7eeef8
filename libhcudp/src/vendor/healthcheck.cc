#include "hcudp/healthcheck.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <string>

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

bool IsPunct(char c) { return std::ispunct(static_cast<unsigned char>(c)) != 0; }

// Consumes `word` (case-insensitive) at the front of `s`.
bool Eat(std::string_view* s, std::string_view word) {
  if (s->size() < word.size() || !EqualsIgnoreCase(s->substr(0, word.size()), word)) return false;
  s->remove_prefix(word.size());
  return true;
}

// The fields "HCU[i]", "Bus Id", "<bdf>", "<word>", separated by ':' with
// free spacing; the BDF itself holds colons, so the line is walked, not
// split. `line` is trimmed and starts with "HCU[" / "DCU[" (any case, with
// optional spaces before '[').
Status ParseCardLine(std::string_view line, int line_no, HealthcheckEntry* out) {
  const auto bad = [&](const std::string& why) {
    return InvalidArgumentError("line " + std::to_string(line_no) + ": " + why + ": \"" +
                                std::string(line.substr(0, 120)) + "\"");
  };
  std::string_view rest = Trim(line.substr(3));  // after "HCU" / "DCU"
  rest.remove_prefix(1);                         // '['
  const size_t close = rest.find(']');
  if (close == std::string_view::npos) return bad("missing ']'");
  const std::string_view index_text = Trim(rest.substr(0, close));
  if (index_text.empty() || index_text.size() > 6 ||
      !std::all_of(index_text.begin(), index_text.end(),
                   [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
    return bad("card index is not a number");
  }
  out->index = std::stoi(std::string(index_text));

  rest = Trim(rest.substr(close + 1));
  if (rest.empty() || rest.front() != ':') return bad("expected ':' after the card index");
  rest = Trim(rest.substr(1));
  if (!Eat(&rest, "Bus")) return bad("expected \"Bus Id\"");
  rest = Trim(rest);
  if (!Eat(&rest, "Id")) return bad("expected \"Bus Id\"");
  rest = Trim(rest);
  if (rest.empty() || rest.front() != ':') return bad("expected ':' after \"Bus Id\"");
  rest = Trim(rest.substr(1));
  const std::string_view bdf = rest.substr(0, std::min<size_t>(12, rest.size()));
  if (!IsBdf(bdf)) return bad("bus id is not a PCI address like 0000:09:00.0");
  out->bdf.assign(bdf);
  std::transform(out->bdf.begin(), out->bdf.end(), out->bdf.begin(), ::tolower);
  rest = Trim(rest.substr(bdf.size()));
  if (rest.empty() || rest.front() != ':') return bad("expected ':' after the bus id");
  rest = Trim(rest.substr(1));
  // The status is the first word, without trailing punctuation ("Healthy.");
  // anything after it is commentary.
  std::string_view word = rest.substr(0, std::min(rest.find_first_of(" \t"), rest.size()));
  while (!word.empty() && IsPunct(word.back())) word.remove_suffix(1);
  if (word.empty()) return bad("missing status word");
  out->word.assign(word);
  out->health = EqualsIgnoreCase(out->word, "Healthy") ? Health::kHealthy : Health::kUnhealthy;
  return OkStatus();
}

// "HCU[", "DCU[", "hcu [" ...: a line meant as a card line.
bool LooksLikeCardLine(std::string_view line) {
  if (line.size() < 4) return false;
  if (!EqualsIgnoreCase(line.substr(0, 3), "HCU") && !EqualsIgnoreCase(line.substr(0, 3), "DCU")) {
    return false;
  }
  std::string_view rest = Trim(line.substr(3));
  return !rest.empty() && rest.front() == '[';
}

}  // namespace

StatusOr<std::vector<HealthcheckEntry>> ParseHealthcheck(std::string_view text,
                                                         std::vector<std::string>* skipped) {
  std::vector<HealthcheckEntry> entries;
  std::map<std::string, size_t> by_bdf;
  std::vector<std::string> odd;
  int line_no = 0;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    ++line_no;
    line = Trim(line);
    if (!LooksLikeCardLine(line)) continue;
    HealthcheckEntry entry;
    Status st = ParseCardLine(line, line_no, &entry);
    if (!st.ok()) {
      odd.push_back(st.message());
      continue;
    }
    auto seen = by_bdf.find(entry.bdf);
    if (seen != by_bdf.end()) {
      HealthcheckEntry& first = entries[seen->second];
      odd.push_back("line " + std::to_string(line_no) + ": bus id " + entry.bdf +
                    " listed twice; keeping the worse verdict");
      if (first.health == Health::kHealthy && entry.health != Health::kHealthy) first = entry;
      continue;
    }
    by_bdf[entry.bdf] = entries.size();
    entries.push_back(std::move(entry));
  }
  if (entries.empty()) {
    std::string why = "hy-smi --healthcheck printed no usable HCU[..] or DCU[..] card line";
    for (size_t i = 0; i < odd.size() && i < 3; ++i) why += (i == 0 ? ": " : "; ") + odd[i];
    return InvalidArgumentError(why);
  }
  if (skipped != nullptr) *skipped = std::move(odd);
  return entries;
}

}  // namespace hcudp
