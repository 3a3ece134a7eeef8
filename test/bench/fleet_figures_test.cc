// The fleet benchmark's arithmetic on a request log made up here: a wrong
// figure in BENCHMARKS.md would otherwise go unnoticed.
#include "fleet_figures.h"

#include <boost/test/unit_test.hpp>

namespace hcudp::bench {
namespace {

FakeRequest Req(const std::string& user, double t, const std::string& verb,
                const std::string& resource, int status = 200) {
  FakeRequest r;
  r.user = user;
  r.t = t;
  r.verb = verb;
  r.resource = resource;
  r.status = status;
  return r;
}

const std::vector<std::string> kNodes = {"a", "b", "c"};

}  // namespace

BOOST_AUTO_TEST_SUITE(fleet_figures)

BOOST_AUTO_TEST_CASE(rates_are_per_node_per_minute_with_silent_nodes_as_zero) {
  // Two minutes: a patches 4 times and watches once, b patches twice, c is
  // silent; the test's own request ("" user) and those outside are ignored.
  const std::vector<FakeRequest> log = {
      Req("a", 100, "patch", "nodes"), Req("a", 130, "patch", "nodes"),
      Req("a", 160, "patch", "nodes"), Req("a", 190, "patch", "nodes"),
      Req("a", 150, "watch", "pods"),  Req("b", 110, "patch", "nodes"),
      Req("b", 170, "patch", "nodes"), Req("", 120, "list", "nodes"),
      Req("b", 99, "list", "pods"),    Req("b", 220, "list", "pods")};
  const auto rates = RatesPerMinute(log, kNodes, {100, 220});
  BOOST_TEST(rates.size() == 3u);                   // total, patch nodes, watch pods
  BOOST_TEST(rates.at("patch nodes").mean == 1.0);  // (2 + 1 + 0) / 3
  BOOST_TEST(rates.at("patch nodes").max == 2.0);
  BOOST_TEST(rates.at("patch nodes").median == 1.0);
  BOOST_TEST(rates.at("watch pods").max == 0.5);
  BOOST_TEST(rates.at("total").mean == 7.0 / 6, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(rates.at("total").min == 0.0);
}

BOOST_AUTO_TEST_CASE(counts_and_nodes_with_a_verb) {
  const std::vector<FakeRequest> log = {Req("a", 1, "list", "pods"), Req("a", 2, "watch", "pods"),
                                        Req("b", 3, "watch", "pods"), Req("c", 9, "list", "pods")};
  const Window w{0, 5};
  BOOST_TEST(CountsPerNode(log, kNodes, w).max == 2.0);
  BOOST_TEST(CountsPerNode(log, kNodes, w).mean == 1.0);
  BOOST_TEST(CountsPerNode(log, kNodes, w, "list").mean == 1.0 / 3);
  BOOST_TEST(NodesWith(log, kNodes, w, "list") == 1);
  BOOST_TEST(NodesWith(log, kNodes, w, "watch") == 2);
}

BOOST_AUTO_TEST_CASE(first_requests_after_recovery_and_their_spread) {
  // Recovery at t=50: a comes back at +0.5 (and again later), b at +6, c
  // only before.
  const std::vector<FakeRequest> log = {Req("a", 50.5, "watch", "pods"),
                                        Req("a", 52, "list", "pods"), Req("b", 56, "watch", "pods"),
                                        Req("c", 49, "get", "nodes")};
  const FirstRequests f = FirstRequestsIn(log, kNodes, {50, 80});
  BOOST_TEST(f.nodes == 2);
  BOOST_TEST(f.silent == 1);
  BOOST_TEST(f.first == 0.5);
  BOOST_TEST(f.last == 6.0);
  BOOST_TEST(f.spread() == 5.5);
}

BOOST_AUTO_TEST_CASE(intervals_of_one_node_in_time_order) {
  const std::vector<FakeRequest> log = {
      Req("a", 10.8, "list", "pods"), Req("a", 10.1, "list", "pods"),
      Req("b", 10.2, "list", "pods"), Req("a", 10.4, "list", "pods")};
  const std::vector<double> got = Intervals(log, "a", {10, 20});
  BOOST_REQUIRE(got.size() == 2u);
  BOOST_TEST(got[0] == 0.3, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(got[1] == 0.4, boost::test_tools::tolerance(1e-9));
}

BOOST_AUTO_TEST_CASE(answers_other_than_the_outage_status_are_found) {
  const std::vector<FakeRequest> log = {Req("a", 1, "list", "pods", 503),
                                        Req("b", 2, "list", "pods", 200),
                                        Req("", 2, "list", "pods", 200)};
  BOOST_TEST(AnsweredOtherThan(log, {0, 5}, 503) == 1);
  BOOST_TEST(AnsweredOtherThan(log, {0, 1.5}, 503) == 0);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace hcudp::bench
