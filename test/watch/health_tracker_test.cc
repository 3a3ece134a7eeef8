#include "watch/health_tracker.h"

#include <boost/test/unit_test.hpp>

namespace hcudp {
namespace {

constexpr Health kOk = Health::kHealthy;
constexpr Health kBad = Health::kUnhealthy;

BOOST_AUTO_TEST_SUITE(health_tracker)

BOOST_AUTO_TEST_CASE(one_bad_reading_does_not_drain_a_card) {
  HealthTracker t;
  t.Seed("a", kOk);
  BOOST_TEST(!t.Record("a", kBad));
  BOOST_TEST((t.Reported("a", kOk) == kOk));
  BOOST_TEST(t.AnyPending());  // "a" is the only card
  BOOST_TEST(!t.Record("a", kOk));
  BOOST_TEST(!t.AnyPending());
  BOOST_TEST((t.Reported("a", kOk) == kOk));
}

BOOST_AUTO_TEST_CASE(two_bad_readings_in_a_row_make_it_unhealthy) {
  HealthTracker t;
  t.Seed("a", kOk);
  BOOST_TEST(!t.Record("a", kBad));
  BOOST_TEST(t.Record("a", kBad));
  BOOST_TEST((t.Reported("a", kOk) == kBad));
  BOOST_TEST(!t.AnyPending());
}

BOOST_AUTO_TEST_CASE(any_pending_sees_one_unconfirmed_card_among_several) {
  HealthTracker t;
  t.Seed("a", kOk);
  t.Seed("b", kOk);
  BOOST_TEST(!t.Record("a", kOk));
  BOOST_TEST(!t.AnyPending());
  BOOST_TEST(!t.Record("b", kBad));
  BOOST_TEST(t.AnyPending());
  t.Retain({"a"});  // the pending card left the node
  BOOST_TEST(!t.AnyPending());
}

BOOST_AUTO_TEST_CASE(recovery_also_needs_two_good_readings) {
  HealthTracker t;
  t.Seed("a", kBad);
  BOOST_TEST(!t.Record("a", kOk));
  BOOST_TEST((t.Reported("a", kOk) == kBad));
  BOOST_TEST(t.Record("a", kOk));
  BOOST_TEST((t.Reported("a", kBad) == kOk));
}

BOOST_AUTO_TEST_CASE(seed_does_not_override_a_tracked_card) {
  HealthTracker t;
  t.Seed("a", kBad);
  t.Seed("a", kOk);
  BOOST_TEST((t.Reported("a", kOk) == kBad));
}

BOOST_AUTO_TEST_CASE(untracked_card_reports_the_fallback_and_retain_forgets) {
  HealthTracker t;
  BOOST_TEST((t.Reported("x", kBad) == kBad));
  t.Seed("a", kBad);
  t.Retain({"b"});
  BOOST_TEST((t.Reported("a", kOk) == kOk));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp
