#include "hcudp_cli/flags.h"

#include <boost/test/unit_test.hpp>
#include <map>
#include <string>
#include <vector>

namespace hcudp {
namespace {

// A flag set over plain variables, like the daemon's, plus a fake environment.
struct Fixture {
  std::string strategy = "mixed";
  int pulse = 30;
  bool topology = true;
  std::string path = "/var/lib/kubelet/device-plugins/";
  std::map<std::string, std::string> environment;
  FlagSet set{"prog", "does things"};

  Fixture() {
    set.Add(Flag::Enum("strategy", "RESOURCE_REGISTER_STRATEGY", "Strategy.",
                       {"hcu", "vhcu", "mig", "mixed"}, "mixed", [this](const std::string& v) {
                         strategy = v;
                         return OkStatus();
                       }));
    set.Add(Flag::Int("pulse", "PULSE", "Health period in seconds.", &pulse, 0));
    set.Add(Flag::Bool("topology-register", "TOPOLOGY_REGISTER", "Topology.", &topology));
    set.Add(Flag::String("device-plugin-path", "DEVICE_PLUGIN_PATH", "Dir.", &path));
  }

  EnvLookup Env() {
    return [this](const std::string& name) -> std::optional<std::string> {
      auto it = environment.find(name);
      if (it == environment.end()) return std::nullopt;
      return it->second;
    };
  }

  StatusOr<ParsedArgs> Parse(std::vector<std::string> args) { return set.Parse(args, Env()); }
};

BOOST_AUTO_TEST_SUITE(flags)

BOOST_FIXTURE_TEST_CASE(defaults_stay_when_nothing_is_given, Fixture) {
  auto r = Parse({});
  BOOST_REQUIRE(r.ok());
  BOOST_TEST(strategy == "mixed");
  BOOST_TEST(pulse == 30);
  BOOST_TEST(topology);
  BOOST_TEST(!r->WasSet("pulse"));
}

BOOST_FIXTURE_TEST_CASE(space_and_equals_forms_both_set_values, Fixture) {
  auto r = Parse({"--strategy", "hcu", "--pulse=5", "-device-plugin-path=/x"});
  BOOST_REQUIRE(r.ok());
  BOOST_TEST(strategy == "hcu");
  BOOST_TEST(pulse == 5);
  BOOST_TEST(path == "/x");
  BOOST_TEST(r->WasSet("strategy"));
}

BOOST_FIXTURE_TEST_CASE(command_line_beats_env_beats_default, Fixture) {
  environment = {{"PULSE", "7"}, {"RESOURCE_REGISTER_STRATEGY", "vhcu"}};
  auto r = Parse({"--pulse", "9"});
  BOOST_REQUIRE(r.ok());
  BOOST_TEST(pulse == 9);
  BOOST_TEST(strategy == "vhcu");
  BOOST_TEST((r->sources.at("pulse") == FlagSource::kCommandLine));
  BOOST_TEST((r->sources.at("strategy") == FlagSource::kEnv));
}

BOOST_FIXTURE_TEST_CASE(bool_flag_alone_means_true_and_takes_no_next_argument, Fixture) {
  topology = false;
  auto r = Parse({"--topology-register", "false"});
  BOOST_REQUIRE(r.ok());
  BOOST_TEST(topology);
  BOOST_TEST(r->positional == std::vector<std::string>{"false"});
}

BOOST_AUTO_TEST_CASE(bool_spellings_are_gos) {
  const std::vector<std::pair<std::string, std::optional<bool>>> table = {
      {"1", true},           {"t", true},
      {"T", true},           {"true", true},
      {"TRUE", true},        {"True", true},
      {"0", false},          {"f", false},
      {"F", false},          {"false", false},
      {"FALSE", false},      {"False", false},
      {"yes", std::nullopt}, {"tRUE", std::nullopt},
      {"", std::nullopt}};
  for (const auto& [text, want] : table) {
    BOOST_TEST_INFO("text " << text);
    BOOST_TEST((ParseGoBool(text) == want));
  }
}

BOOST_FIXTURE_TEST_CASE(bool_with_value_is_parsed, Fixture) {
  BOOST_REQUIRE(Parse({"--topology-register=f"}).ok());
  BOOST_TEST(!topology);
  auto r = Parse({"--topology-register=maybe"});
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST(r.status().message() ==
             "--topology-register: \"maybe\" is not a bool (true, false, 1, 0, t, f)");
}

BOOST_FIXTURE_TEST_CASE(empty_bool_env_means_false, Fixture) {
  environment = {{"TOPOLOGY_REGISTER", ""}};
  BOOST_REQUIRE(Parse({}).ok());
  BOOST_TEST(!topology);
}

BOOST_FIXTURE_TEST_CASE(empty_int_env_means_unset, Fixture) {
  environment = {{"PULSE", ""}};
  auto r = Parse({});
  BOOST_REQUIRE(r.ok());
  BOOST_TEST(pulse == 30);
  BOOST_TEST(!r->WasSet("pulse"));
}

BOOST_AUTO_TEST_CASE(ints_use_go_base_detection) {
  const std::vector<std::pair<std::string, std::optional<int64_t>>> table = {
      {"10", 10},
      {"0x10", 16},
      {"0X1f", 31},
      {"010", 8},
      {"0o17", 15},
      {"0b101", 5},
      {"-3", -3},
      {"+4", 4},
      {"0", 0},
      {"1_000", 1000},
      {"", std::nullopt},
      {"0x", std::nullopt},
      {"08", std::nullopt},
      {"1.5", std::nullopt},
      {"abc", std::nullopt},
      {"9223372036854775807", INT64_MAX},
      {"9223372036854775808", std::nullopt},
      {"-9223372036854775808", INT64_MIN},
      {"1__0", std::nullopt},
      {"_1", std::nullopt}};
  for (const auto& [text, want] : table) {
    BOOST_TEST_INFO("text " << text);
    BOOST_TEST((ParseGoInt(text) == want));
  }
}

BOOST_FIXTURE_TEST_CASE(hex_int_from_env_is_accepted, Fixture) {
  environment = {{"PULSE", "0x10"}};
  BOOST_REQUIRE(Parse({}).ok());
  BOOST_TEST(pulse == 16);
}

BOOST_FIXTURE_TEST_CASE(bad_int_names_flag_and_accepted_values, Fixture) {
  auto r = Parse({"--pulse", "soon"});
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST((r.status().code() == StatusCode::kInvalidArgument));
  BOOST_TEST(r.status().message() ==
             "--pulse: \"soon\" is not an integer (decimal or 0x hex, >= 0)");
}

BOOST_FIXTURE_TEST_CASE(int_below_minimum_is_out_of_range, Fixture) {
  auto r = Parse({"--pulse=-1"});
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST(r.status().message() == "--pulse: \"-1\" is out of range (>= 0)");
}

BOOST_FIXTURE_TEST_CASE(bad_env_value_names_flag_and_env_var, Fixture) {
  environment = {{"RESOURCE_REGISTER_STRATEGY", "whole"}};
  auto r = Parse({});
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST(r.status().message() ==
             "--strategy (env RESOURCE_REGISTER_STRATEGY): \"whole\" is not one of hcu, vhcu, "
             "mig, mixed");
}

// A ConfigMap made with --from-file ends its value in a newline: the
// error stays one line and shows the invisible character.
BOOST_FIXTURE_TEST_CASE(control_characters_in_a_bad_value_are_escaped, Fixture) {
  environment = {{"RESOURCE_REGISTER_STRATEGY", "hcu\n"}, {"PULSE", "5\r\t\x01"}};
  auto r = Parse({});
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST(r.status().message() ==
             "--strategy (env RESOURCE_REGISTER_STRATEGY): \"hcu\\n\" is not one of hcu, vhcu, "
             "mig, mixed");
  r = Parse({"--strategy=hcu"});
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST(r.status().message() ==
             "--pulse (env PULSE): \"5\\r\\t\\x01\" is not an integer (decimal or 0x hex, >= 0)");
}

BOOST_FIXTURE_TEST_CASE(bad_env_value_is_ignored_when_flag_is_given, Fixture) {
  environment = {{"PULSE", "nonsense"}};
  BOOST_REQUIRE(Parse({"--pulse=3"}).ok());
  BOOST_TEST(pulse == 3);
}

BOOST_FIXTURE_TEST_CASE(unknown_flag_suggests_the_closest, Fixture) {
  auto r = Parse({"--pulsee=3"});
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST(r.status().message() == "unknown flag --pulsee (did you mean --pulse?)");
  auto far = Parse({"--zzzzzzzzzzzzzz"});
  BOOST_REQUIRE(!far.ok());
  BOOST_TEST(far.status().message() == "unknown flag --zzzzzzzzzzzzzz (see --help)");
}

BOOST_FIXTURE_TEST_CASE(missing_value_at_the_end_is_an_error, Fixture) {
  auto r = Parse({"--strategy"});
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST(r.status().message() == "--strategy: missing value (one of hcu, vhcu, mig, mixed)");
}

BOOST_FIXTURE_TEST_CASE(parsing_stops_at_first_positional_by_default, Fixture) {
  auto r = Parse({"--pulse=1", "plugins", "--pulse=2", "-o", "json"});
  BOOST_REQUIRE(r.ok());
  BOOST_TEST(pulse == 1);
  BOOST_TEST((r->positional == std::vector<std::string>{"plugins", "--pulse=2", "-o", "json"}));
}

BOOST_FIXTURE_TEST_CASE(interspersed_mode_mixes_flags_and_positionals, Fixture) {
  set.set_interspersed(true);
  auto r = Parse({"a", "--pulse=2", "b", "--", "--pulse=3"});
  BOOST_REQUIRE(r.ok());
  BOOST_TEST(pulse == 2);
  BOOST_TEST((r->positional == std::vector<std::string>{"a", "b", "--pulse=3"}));
}

BOOST_FIXTURE_TEST_CASE(help_is_reported_not_an_error, Fixture) {
  auto r = Parse({"--help"});
  BOOST_REQUIRE(r.ok());
  BOOST_TEST(r->help_requested);
  BOOST_TEST(Parse({"-h"})->help_requested);
}

BOOST_FIXTURE_TEST_CASE(help_lists_every_flag_with_env_and_default, Fixture) {
  std::string help = set.Help();
  BOOST_TEST(help.find("Usage: prog [flags]") != std::string::npos);
  BOOST_TEST(help.find("--strategy hcu|vhcu|mig|mixed") != std::string::npos);
  BOOST_TEST(help.find("env RESOURCE_REGISTER_STRATEGY, default \"mixed\"") != std::string::npos);
  BOOST_TEST(help.find("env PULSE, default \"30\", >= 0") != std::string::npos);
  BOOST_TEST(help.find("env TOPOLOGY_REGISTER, default \"true\"") != std::string::npos);
  BOOST_TEST(help.find("--device-plugin-path string") != std::string::npos);
}

BOOST_FIXTURE_TEST_CASE(alias_reaches_the_same_flag, Fixture) {
  std::string output = "table";
  Flag f = Flag::String("output", "", "Output format.", &output);
  f.aliases = {"o"};
  set.Add(f);
  BOOST_REQUIRE(Parse({"-o", "json"}).ok());
  BOOST_TEST(output == "json");
}

BOOST_FIXTURE_TEST_CASE(setter_error_is_prefixed_with_the_flag, Fixture) {
  set.Add(Flag{"node-name",
               "NODE_NAME",
               "",
               "Node.",
               FlagKind::kString,
               {},
               {},
               {},
               {},
               {},
               {},
               [](const std::string&) { return InvalidArgumentError("must be a DNS name"); }});
  auto r = Parse({"--node-name=_x"});
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST(r.status().message() == "--node-name: must be a DNS name");
}

BOOST_FIXTURE_TEST_CASE(duplicate_registration_is_internal, Fixture) {
  set.Add(Flag::Int("pulse", "", "Again.", &pulse));
  auto r = Parse({});
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST((r.status().code() == StatusCode::kInternal));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp
