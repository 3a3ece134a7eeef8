// What the /metrics tests share: the port the daemon logged, and one scrape
// that fails the test unless it is a valid exposition answered with 200.
#pragma once

#include <boost/test/unit_test.hpp>
#include <regex>
#include <string>

#include "ops_metrics/exposition.h"

namespace hcudp::testing {

// The port of the daemon's "metrics on <address> (port N)" log line.
inline int LoggedMetricsPort(const std::string& log) {
  std::smatch m;
  BOOST_REQUIRE_MESSAGE(std::regex_search(log, m, std::regex(R"(metrics on \S+ \(port (\d+)\))")),
                        "no \"metrics on ... (port N)\" line: " << log);
  return std::stoi(m[1]);
}

// One scrape; fails the test unless it answers 200 with a valid exposition.
inline Exposition Scrape(int port) {
  auto got = HttpGet(port, "/metrics");
  BOOST_REQUIRE_MESSAGE(got.ok(), got.status().ToString());
  BOOST_REQUIRE_EQUAL(got->status, 200);
  auto parsed = ParseExposition(got->body);
  BOOST_REQUIRE_MESSAGE(parsed.ok(), parsed.status().ToString() << "\n" << got->body);
  return *parsed;
}

}  // namespace hcudp::testing
