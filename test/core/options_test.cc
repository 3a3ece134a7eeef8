#include "hcudp/options.h"

#include <boost/test/unit_test.hpp>

namespace hcudp {
namespace {

BOOST_AUTO_TEST_SUITE(options)

BOOST_AUTO_TEST_CASE(strategies_round_trip) {
  for (const char* name : {"hcu", "vhcu", "mig", "mixed", "hami", "dra"}) {
    auto s = ParseStrategy(name);
    BOOST_REQUIRE(s.ok());
    BOOST_TEST(StrategyName(*s) == name);
  }
}

BOOST_AUTO_TEST_CASE(unknown_strategy_names_the_accepted_values) {
  auto s = ParseStrategy("whole");
  BOOST_REQUIRE(!s.ok());
  BOOST_TEST(s.status().message() ==
             "strategy \"whole\" is not one of hcu, vhcu, mig, mixed, hami, dra");
}

BOOST_AUTO_TEST_CASE(policy_accepts_only_0_1_2) {
  BOOST_TEST(ParseNamingPolicy("0").ok());
  BOOST_TEST(ParseNamingPolicy("2").ok());
  BOOST_TEST(!ParseNamingPolicy("3").ok());
  BOOST_TEST(!ParseNamingPolicy("").ok());
  BOOST_TEST(!ParseNamingPolicy("01").ok());
}

BOOST_AUTO_TEST_CASE(log_severity_is_case_insensitive_and_trimmed_with_warn_alias) {
  BOOST_TEST(static_cast<int>(*ParseLogSeverity(" warn ")) == static_cast<int>(LogSeverity::kWarning));
  BOOST_TEST(static_cast<int>(*ParseLogSeverity("Error")) == static_cast<int>(LogSeverity::kError));
  BOOST_TEST(!ParseLogSeverity("debug").ok());
}

BOOST_AUTO_TEST_CASE(host_root_defaults_to_slash_for_host_backend) {
  Options o;
  BOOST_TEST(EffectiveHostRoot(o) == "/");
  o.host_root = "/tmp/x";
  BOOST_TEST(EffectiveHostRoot(o) == "/tmp/x");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp
