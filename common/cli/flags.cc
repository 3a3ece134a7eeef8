#include "hcudp_cli/flags.h"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <set>
#include <utility>

namespace hcudp {
namespace {

// Control characters are escaped (as Go's %q does) so that an error stays
// one line and shows, say, the trailing newline of a ConfigMap value.
std::string Quote(std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "\"";
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (u < 0x20 || u == 0x7f) {
      out += "\\x";
      out += kHex[u >> 4];
      out += kHex[u & 0xf];
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string JoinAccepted(const std::vector<std::string>& values) {
  std::string out;
  for (const auto& v : values) {
    if (!out.empty()) out += ", ";
    out += v;
  }
  return out;
}

// Levenshtein distance, for "did you mean".
size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

int DigitValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'z') return c - 'a' + 10;
  if (c >= 'A' && c <= 'Z') return c - 'A' + 10;
  return 99;
}

// How a value reached a flag, for error messages.
struct Origin {
  std::string_view env;  // empty: command line
};

std::string Subject(const Flag& flag, Origin origin) {
  std::string s = "--" + flag.name;
  if (!origin.env.empty()) s += " (env " + std::string(origin.env) + ")";
  return s;
}

std::string IntRangeText(const Flag& flag) {
  if (flag.min && flag.max) {
    return std::to_string(*flag.min) + " to " + std::to_string(*flag.max);
  }
  if (flag.min) return ">= " + std::to_string(*flag.min);
  if (flag.max) return "<= " + std::to_string(*flag.max);
  return "";
}

Status Apply(const Flag& flag, const std::string& value, Origin origin) {
  const std::string who = Subject(flag, origin);
  Status st;
  switch (flag.kind) {
    case FlagKind::kBool: {
      auto b = ParseGoBool(value);
      if (!b) {
        return InvalidArgumentError(who + ": " + Quote(value) +
                                    " is not a bool (true, false, 1, 0, t, f)");
      }
      st = flag.set_bool ? flag.set_bool(*b) : InternalError("no bool setter");
      break;
    }
    case FlagKind::kInt: {
      auto n = ParseGoInt(value);
      if (!n) {
        std::string range = IntRangeText(flag);
        return InvalidArgumentError(who + ": " + Quote(value) +
                                    " is not an integer (decimal or 0x hex" +
                                    (range.empty() ? "" : ", " + range) + ")");
      }
      if ((flag.min && *n < *flag.min) || (flag.max && *n > *flag.max)) {
        return InvalidArgumentError(who + ": " + Quote(value) + " is out of range (" +
                                    IntRangeText(flag) + ")");
      }
      st = flag.set_int ? flag.set_int(*n) : InternalError("no int setter");
      break;
    }
    case FlagKind::kEnum:
      if (std::find(flag.accepted.begin(), flag.accepted.end(), value) == flag.accepted.end()) {
        return InvalidArgumentError(who + ": " + Quote(value) + " is not one of " +
                                    JoinAccepted(flag.accepted));
      }
      st = flag.set_string ? flag.set_string(value) : InternalError("no string setter");
      break;
    case FlagKind::kString:
      st = flag.set_string ? flag.set_string(value) : InternalError("no string setter");
      break;
  }
  if (!st.ok()) return Status(st.code(), who + ": " + st.message());
  return OkStatus();
}

std::string KindValueName(const Flag& flag) {
  switch (flag.kind) {
    case FlagKind::kBool:
      return "";
    case FlagKind::kInt:
      return " int";
    case FlagKind::kString:
      return " string";
    case FlagKind::kEnum:
      return " " + [&] {
        std::string s;
        for (const auto& a : flag.accepted) s += (s.empty() ? "" : "|") + a;
        return s;
      }();
  }
  return "";
}

}  // namespace

std::optional<int64_t> ParseGoInt(std::string_view text) {
  bool negative = false;
  if (!text.empty() && (text[0] == '+' || text[0] == '-')) {
    negative = text[0] == '-';
    text.remove_prefix(1);
  }
  if (text.empty()) return std::nullopt;
  int base = 10;
  if (text.size() >= 2 && text[0] == '0') {
    char p = static_cast<char>(text[1] | 0x20);
    if (p == 'x') base = 16;
    if (p == 'o') base = 8;
    if (p == 'b') base = 2;
    if (base != 10) {
      text.remove_prefix(2);
      if (!text.empty() && text[0] == '_') text.remove_prefix(1);  // 0x_1f
    } else {
      base = 8;  // leading 0: octal
      text.remove_prefix(1);
    }
  }
  if (text.empty() || text.front() == '_' || text.back() == '_') return std::nullopt;
  uint64_t value = 0;
  const uint64_t limit = negative ? uint64_t{1} << 63 : (uint64_t{1} << 63) - 1;
  char prev = 0;
  for (char c : text) {
    if (c == '_') {
      if (prev == '_') return std::nullopt;
      prev = c;
      continue;
    }
    prev = c;
    int d = DigitValue(c);
    if (d >= base) return std::nullopt;
    if (value > (limit - static_cast<uint64_t>(d)) / static_cast<uint64_t>(base)) {
      return std::nullopt;
    }
    value = value * static_cast<uint64_t>(base) + static_cast<uint64_t>(d);
  }
  if (negative) {
    return value == (uint64_t{1} << 63) ? std::numeric_limits<int64_t>::min()
                                        : -static_cast<int64_t>(value);
  }
  return static_cast<int64_t>(value);
}

Flag Flag::Bool(std::string name, std::string env, std::string help, bool* target) {
  Flag f;
  f.name = std::move(name);
  f.env = std::move(env);
  f.help = std::move(help);
  f.kind = FlagKind::kBool;
  f.default_text = *target ? "true" : "false";
  f.set_bool = [target](bool v) {
    *target = v;
    return OkStatus();
  };
  return f;
}

Flag Flag::Int(std::string name, std::string env, std::string help, int* target,
               std::optional<int64_t> min, std::optional<int64_t> max) {
  Flag f;
  f.name = std::move(name);
  f.env = std::move(env);
  f.help = std::move(help);
  f.kind = FlagKind::kInt;
  f.default_text = std::to_string(*target);
  f.min = min;
  f.max = max;
  f.set_int = [target](int64_t v) {
    if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max()) {
      return InvalidArgumentError(Quote(std::to_string(v)) + " does not fit in 32 bits");
    }
    *target = static_cast<int>(v);
    return OkStatus();
  };
  return f;
}

Flag Flag::String(std::string name, std::string env, std::string help, std::string* target) {
  Flag f;
  f.name = std::move(name);
  f.env = std::move(env);
  f.help = std::move(help);
  f.kind = FlagKind::kString;
  f.default_text = *target;
  f.set_string = [target](const std::string& v) {
    *target = v;
    return OkStatus();
  };
  return f;
}

Flag Flag::Enum(std::string name, std::string env, std::string help,
                std::vector<std::string> accepted, std::string default_text,
                std::function<Status(const std::string&)> set) {
  Flag f;
  f.name = std::move(name);
  f.env = std::move(env);
  f.help = std::move(help);
  f.kind = FlagKind::kEnum;
  f.accepted = std::move(accepted);
  f.default_text = std::move(default_text);
  f.set_string = std::move(set);
  return f;
}

EnvLookup ProcessEnv() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    if (v == nullptr) return std::nullopt;
    return std::string(v);
  };
}

bool ParsedArgs::WasSet(const std::string& name) const {
  auto it = sources.find(name);
  return it != sources.end() && it->second != FlagSource::kDefault;
}

FlagSet::FlagSet(std::string program, std::string synopsis)
    : program_(std::move(program)), synopsis_(std::move(synopsis)) {}

void FlagSet::Add(Flag flag) { flags_.push_back(std::move(flag)); }

const Flag* FlagSet::Find(std::string_view name) const {
  for (const auto& f : flags_) {
    if (f.name == name) return &f;
    for (const auto& a : f.aliases) {
      if (a == name) return &f;
    }
  }
  return nullptr;
}

StatusOr<ParsedArgs> FlagSet::Parse(int argc, const char* const* argv, const EnvLookup& env) const {
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) args.emplace_back(argv[i]);
  return Parse(args, env);
}

StatusOr<ParsedArgs> FlagSet::Parse(const std::vector<std::string>& args,
                                    const EnvLookup& env) const {
  std::set<std::string> names;
  for (const auto& f : flags_) {
    for (const auto& n : [&] {
           std::vector<std::string> all = f.aliases;
           all.push_back(f.name);
           return all;
         }()) {
      if (!names.insert(n).second) return InternalError("flag --" + n + " registered twice");
    }
  }

  ParsedArgs parsed;
  for (const auto& f : flags_) parsed.sources[f.name] = FlagSource::kDefault;

  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") {
      parsed.positional.insert(parsed.positional.end(), args.begin() + i + 1, args.end());
      break;
    }
    if (arg.size() < 2 || arg[0] != '-') {
      if (!interspersed_) {
        parsed.positional.insert(parsed.positional.end(), args.begin() + i, args.end());
        break;
      }
      parsed.positional.push_back(arg);
      continue;
    }
    std::string_view body(arg);
    body.remove_prefix(arg[1] == '-' ? 2 : 1);
    std::string_view name = body;
    std::optional<std::string> value;
    if (auto eq = body.find('='); eq != std::string_view::npos) {
      name = body.substr(0, eq);
      value = std::string(body.substr(eq + 1));
    }
    if (name == "help" || name == "h") {
      parsed.help_requested = true;
      continue;
    }
    const Flag* flag = Find(name);
    if (flag == nullptr) {
      std::string message = "unknown flag --" + std::string(name);
      const Flag* best = nullptr;
      size_t best_distance = std::numeric_limits<size_t>::max();
      for (const auto& f : flags_) {
        size_t d = EditDistance(name, f.name);
        if (d < best_distance) {
          best_distance = d;
          best = &f;
        }
      }
      if (best != nullptr && best_distance <= std::max<size_t>(2, name.size() / 3)) {
        message += " (did you mean --" + best->name + "?)";
      } else {
        message += " (see --help)";
      }
      return InvalidArgumentError(message);
    }
    if (!value) {
      if (flag->kind == FlagKind::kBool) {
        value = "true";
      } else if (i + 1 < args.size()) {
        value = args[++i];
      } else {
        std::string what =
            flag->kind == FlagKind::kEnum ? " (one of " + JoinAccepted(flag->accepted) + ")" : "";
        return InvalidArgumentError("--" + flag->name + ": missing value" + what);
      }
    }
    // A repeated flag runs its setter again: the last one wins, as in Go.
    HCUDP_RETURN_IF_ERROR(Apply(*flag, *value, Origin{}));
    parsed.sources[flag->name] = FlagSource::kCommandLine;
  }

  if (env) {
    for (const auto& f : flags_) {
      if (f.env.empty() || parsed.sources[f.name] == FlagSource::kCommandLine) continue;
      std::optional<std::string> v = env(f.env);
      if (!v) continue;
      if (v->empty()) {
        if (f.kind == FlagKind::kInt || f.kind == FlagKind::kEnum) continue;
        if (f.kind == FlagKind::kBool) *v = "false";
      }
      HCUDP_RETURN_IF_ERROR(Apply(f, *v, Origin{f.env}));
      parsed.sources[f.name] = FlagSource::kEnv;
    }
  }
  return parsed;
}

std::string FlagSet::Help() const {
  std::string out = "Usage: " + program_ + " [flags]";
  if (!synopsis_.empty()) out += "\n" + synopsis_;
  out += "\n\nFlags:\n";
  for (const auto& f : flags_) {
    out += "  --" + f.name;
    for (const auto& a : f.aliases) out += (a.size() == 1 ? ", -" : ", --") + a;
    out += KindValueName(f) + "\n";
    out += "        " + f.help;
    std::string meta;
    if (!f.env.empty()) meta += "env " + f.env;
    if (!meta.empty()) meta += ", ";
    meta += "default " + (f.default_text.empty() ? std::string("none") : Quote(f.default_text));
    if (f.kind == FlagKind::kInt) {
      std::string range = IntRangeText(f);
      if (!range.empty()) meta += ", " + range;
    }
    out += " (" + meta + ")\n";
  }
  out += "  --help, -h\n        Show this help and exit.\n";
  return out;
}

}  // namespace hcudp
