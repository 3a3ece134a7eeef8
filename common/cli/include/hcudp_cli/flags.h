// FlagSet: a small command-line flag parser shared by hcu-dp-daemon and
// hcuctl (the internal hcudp_cli library, common/cli; not libhcudp's API).
// Every flag may also read an environment variable; precedence is
// flag > env > default (the default is whatever the target already holds).
//
// Syntax accepted (as Go's flag package / urfave/cli):
//   --name value   --name=value   -name value   -name=value
//   bool flags:    --x   --x=true|false|1|0|t|f|T|F|TRUE|FALSE|True|False
//                  (never consume the next argument)
//   ints:          decimal, 0x hex, 0o / leading-0 octal, 0b binary, sign
//   "--" ends the flags; everything after it is positional.
// Environment values use the same parsers, except that an empty value means
// false for a bool and "not set" for an int or enum.
//
// Errors are InvalidArgument with exactly one line naming the flag (and the
// environment variable when the value came from there) and what is accepted:
//   --policy: "3" is not one of 0, 1, 2
//   --pulse (env PULSE): "x" is not an integer (decimal or 0x hex)
//   unknown flag --polcy (did you mean --policy?)
//
// Not thread-safe; build and parse on one thread.
#ifndef HCUDP_CLI_FLAGS_H_
#define HCUDP_CLI_FLAGS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hcudp/status.h"
#include "hcudp_internal/strict_text.h"

namespace hcudp {

enum class FlagKind { kBool, kInt, kString, kEnum };

// Where a flag's value came from after Parse().
enum class FlagSource { kDefault, kEnv, kCommandLine };

struct Flag {
  std::string name;          // without dashes: "device-plugin-path"
  std::string env;           // environment variable, or empty for none
  std::string default_text;  // shown by Help(); does not set anything
  std::string help;          // one sentence
  FlagKind kind = FlagKind::kString;
  std::vector<std::string> accepted;  // kEnum: the accepted spellings
  std::optional<int64_t> min;         // kInt: inclusive bounds
  std::optional<int64_t> max;
  std::vector<std::string> aliases;  // other names, e.g. "o" for "output"
  // The setter matching `kind` (kString and kEnum share set_string). A
  // non-OK return is reported as "--name: <message>".
  std::function<Status(bool)> set_bool;
  std::function<Status(int64_t)> set_int;
  std::function<Status(const std::string&)> set_string;

  // Convenience constructors writing straight into a target that must
  // outlive the FlagSet; the default text is the target's current value.
  static Flag Bool(std::string name, std::string env, std::string help, bool* target);
  static Flag Int(std::string name, std::string env, std::string help, int* target,
                  std::optional<int64_t> min = std::nullopt,
                  std::optional<int64_t> max = std::nullopt);
  static Flag String(std::string name, std::string env, std::string help, std::string* target);
  // `set` receives one of `accepted`, already checked.
  static Flag Enum(std::string name, std::string env, std::string help,
                   std::vector<std::string> accepted, std::string default_text,
                   std::function<Status(const std::string&)> set);
};

// Returns the value of an environment variable, or nullopt when unset.
using EnvLookup = std::function<std::optional<std::string>(const std::string&)>;

// EnvLookup over the process environment (getenv).
EnvLookup ProcessEnv();

struct ParsedArgs {
  bool help_requested = false;                // --help / -h was given
  std::vector<std::string> positional;        // non-flag arguments, in order
  std::map<std::string, FlagSource> sources;  // every registered flag name

  bool WasSet(const std::string& name) const;  // from env or command line
};

class FlagSet {
 public:
  // `program` and `synopsis` head the Help() text.
  FlagSet(std::string program, std::string synopsis);

  // Registers a flag. Names and aliases must be unique (checked by Parse,
  // which reports a duplicate as kInternal).
  void Add(Flag flag);

  // When false (the default), parsing stops at the first positional
  // argument and the rest is returned as is (subcommands parse their own
  // flags); when true, flags and positionals may be mixed.
  void set_interspersed(bool interspersed) { interspersed_ = interspersed; }

  // Parses argv[1..argc) and then the environment for flags not given on the
  // command line, calling each setter at most once. Stops at the first error.
  StatusOr<ParsedArgs> Parse(int argc, const char* const* argv, const EnvLookup& env) const;
  StatusOr<ParsedArgs> Parse(const std::vector<std::string>& args, const EnvLookup& env) const;

  // "Usage: ...", the synopsis, and one block per flag with its env var,
  // default and accepted values.
  std::string Help() const;

  const std::vector<Flag>& flags() const { return flags_; }

 private:
  const Flag* Find(std::string_view name) const;

  std::string program_;
  std::string synopsis_;
  std::vector<Flag> flags_;
  bool interspersed_ = false;
};

// Go's strconv.ParseBool spellings (shared with the HAMi codec).
using text::ParseGoBool;
// Go's strconv.ParseInt(text, 0, 64): sign, 0x/0o/0b prefixes, leading-0
// octal, '_' digit separators after a prefix.
std::optional<int64_t> ParseGoInt(std::string_view text);

}  // namespace hcudp

#endif  // HCUDP_CLI_FLAGS_H_
