// RetryPolicy in simulated time: the ladder's growth and cap, the jitter's
// bounds, the reset after a stable period (and only then), Retry-After, the
// process's retry budget; and the client's retries on that one ladder: a
// loop that tries again continues it, a caller with its own deadline keeps
// that deadline.
#include "hcudp/retry_policy.h"

#include <boost/test/unit_test.hpp>
#include <chrono>
#include <ctime>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "kube/http_request.h"
#include "kube/kube_test_util.h"
#include "testing/sim_clock.h"

namespace hcudp {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

std::shared_ptr<RetryPolicy> MustNew(RetryPolicyOptions o) {
  auto p = RetryPolicy::New(o);
  BOOST_REQUIRE_MESSAGE(p.ok(), p.status().ToString());
  return std::move(p).value();
}

// The default ladder without jitter, with a budget that never runs out.
RetryPolicyOptions Exact(testing::SimClock& clock) {
  RetryPolicyOptions o;
  o.jitter = 0;
  o.budget_burst = 1000;
  o.clock = &clock;
  o.seed = 7;
  return o;
}

BOOST_AUTO_TEST_SUITE(retry_policy)

BOOST_AUTO_TEST_CASE(the_ladder_doubles_from_one_second_to_the_30_second_cap) {
  testing::SimClock clock;
  auto policy = MustNew(Exact(clock));
  auto ladder = policy->NewBackoff();
  std::vector<int64_t> pauses;
  for (int i = 0; i < 8; ++i) {
    milliseconds p = ladder->Pause();
    pauses.push_back(p.count());
    clock.Advance(p);  // the retry fails at once, as in an outage
  }
  BOOST_TEST(pauses == (std::vector<int64_t>{1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(each_pause_lies_between_half_its_step_and_its_step) {
  testing::SimClock clock;
  RetryPolicyOptions o = Exact(clock);
  o.jitter = 0.5;
  auto policy = MustNew(o);
  auto ladder = policy->NewBackoff();
  std::set<int64_t> at_cap;
  for (int i = 0; i < 40; ++i) {
    const milliseconds step = ladder->NextStep();
    const milliseconds p = ladder->Pause();
    BOOST_TEST(p.count() >= step.count() / 2);
    BOOST_TEST(p.count() <= step.count());
    if (step == seconds(30)) at_cap.insert(p.count());
    clock.Advance(p);
  }
  // Spread, not one value: nodes at the cap do not retry in lockstep.
  BOOST_TEST(at_cap.size() > 10u);
}

BOOST_AUTO_TEST_CASE(processes_with_their_own_seeds_retry_at_different_times) {
  testing::SimClock clock;
  RetryPolicyOptions o = Exact(clock);
  o.jitter = 0.5;
  std::set<int64_t> fifth_pauses;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    o.seed = seed;
    auto policy = MustNew(o);
    auto ladder = policy->NewBackoff();
    milliseconds p{0};
    for (int i = 0; i < 5; ++i) p = ladder->Pause();
    fifth_pauses.insert(p.count());
  }
  BOOST_TEST(fifth_pauses.size() > 15u);
}

BOOST_AUTO_TEST_CASE(a_callers_fixed_period_is_spread_and_leaves_the_ladder_alone) {
  // Events retry every 10 s of their own: the same 10 s on every node
  // brought a fleet's Events back within 0.6 s of an outage's end.
  testing::SimClock clock;
  RetryPolicyOptions o = Exact(clock);
  o.jitter = 0.5;
  o.budget_burst = 1;
  auto policy = MustNew(o);
  auto ladder = policy->NewBackoff();
  std::set<int64_t> spread;
  for (int i = 0; i < 40; ++i) {
    const milliseconds p = policy->Spread(seconds(10));
    BOOST_TEST(p.count() >= 10000);
    BOOST_TEST(p.count() <= 15000);
    spread.insert(p.count());
  }
  BOOST_TEST(spread.size() > 30u);
  BOOST_TEST((ladder->NextStep() == seconds(1)));  // no step taken
  BOOST_TEST(ladder->Pause().count() <= 1000);     // nor a budget token
  // Without jitter (the tests' clients) the period is kept exactly.
  auto exact = MustNew(Exact(clock));
  BOOST_TEST((exact->Spread(seconds(10)) == seconds(10)));
}

BOOST_AUTO_TEST_CASE(the_ladder_resets_only_after_a_stable_period) {
  testing::SimClock clock;
  auto policy = MustNew(Exact(clock));
  auto ladder = policy->NewBackoff();
  for (int i = 0; i < 4; ++i) clock.Advance(ladder->Pause());  // 1+2+4+8 s
  BOOST_TEST((ladder->NextStep() == seconds(16)));
  // Going well for less than the stable period (60 s) changes nothing: one
  // success is no reason to come back at the bottom of the ladder.
  clock.Advance(seconds(59));
  BOOST_TEST((ladder->NextStep() == seconds(16)));
  BOOST_TEST((ladder->Pause() == seconds(16)));
  clock.Advance(seconds(16) + seconds(60));
  BOOST_TEST((ladder->NextStep() == seconds(1)));
  BOOST_TEST((ladder->Pause() == seconds(1)));
}

BOOST_AUTO_TEST_CASE(a_retry_after_raises_the_pause_up_to_the_longest_honoured) {
  testing::SimClock clock;
  RetryPolicyOptions o = Exact(clock);
  o.max_retry_after = seconds(60);
  auto policy = MustNew(o);
  auto ladder = policy->NewBackoff();
  BOOST_TEST((ladder->Pause(30) == seconds(30)));    // a 429 that says 30 s: 30 s
  BOOST_TEST((ladder->Pause(1) == seconds(2)));      // never shorter than the ladder
  BOOST_TEST((ladder->Pause(3600) == seconds(60)));  // a hostile hour: cut
}

BOOST_AUTO_TEST_CASE(the_budget_queues_retries_beyond_the_burst) {
  testing::SimClock clock;
  RetryPolicyOptions o = Exact(clock);
  o.initial_backoff = milliseconds(10);
  o.max_backoff = milliseconds(20);
  o.budget_burst = 3;
  o.budget_refill = seconds(5);
  auto policy = MustNew(o);
  auto ladder = policy->NewBackoff();
  // A loop that keeps failing: three retries at once, then one per refill,
  // each queued behind the one before.
  std::vector<int64_t> pauses;
  for (int i = 0; i < 6; ++i) pauses.push_back(ladder->Pause().count());
  BOOST_TEST(pauses == (std::vector<int64_t>{10, 20, 20, 5000, 10000, 15000}),
             boost::test_tools::per_element());
  // Refilled with time: after a quiet minute the burst is back (and the
  // ladder, stable that long, at its first step).
  clock.Advance(seconds(15 + 60));  // the last pause, then a quiet minute
  BOOST_TEST(ladder->Pause().count() == 10);
}

// client-go gives each reflector its own backoff: here each loop has its own
// ladder. The bug: one process-wide ladder, pushed up by the start-up
// failures of other loops, kept the pod cache's re-watch 15 s away.
BOOST_AUTO_TEST_CASE(one_loops_failures_do_not_move_another_loops_ladder) {
  testing::SimClock clock;
  auto policy = MustNew(Exact(clock));
  auto registration = policy->NewBackoff();
  auto pod_cache = policy->NewBackoff();
  for (int i = 0; i < 5; ++i) clock.Advance(registration->Pause());  // 1+2+4+8+16 s
  BOOST_TEST((registration->NextStep() == seconds(30)));
  BOOST_TEST((pod_cache->NextStep() == seconds(1)));
  BOOST_TEST((pod_cache->Pause() == seconds(1)));
}

// The process-wide budget caps the total, but a loop's first retry waits at
// most a second for it, however many retries the other loops made.
BOOST_AUTO_TEST_CASE(a_spent_budget_holds_back_another_loops_first_retry_by_a_second_at_most) {
  testing::SimClock clock;
  RetryPolicyOptions o = Exact(clock);
  o.budget_burst = 2;
  o.budget_refill = seconds(5);
  auto policy = MustNew(o);
  auto noisy = policy->NewBackoff();
  for (int i = 0; i < 6; ++i) noisy->Pause();  // the budget spent, deep in debt
  auto quiet = policy->NewBackoff();
  const milliseconds first = quiet->Pause();
  BOOST_TEST(first.count() >= 1000);
  BOOST_TEST(first.count() <= 1000 + 1000);
  // Its later retries queue behind the others, as the cap means.
  BOOST_TEST((quiet->Pause() > seconds(2)));
}

BOOST_AUTO_TEST_CASE(ladders_of_one_process_draw_different_jitter) {
  testing::SimClock clock;
  RetryPolicyOptions o = Exact(clock);
  o.jitter = 0.5;
  auto policy = MustNew(o);
  std::set<int64_t> firsts;
  for (int i = 0; i < 20; ++i) firsts.insert(policy->NewBackoff()->Pause().count());
  BOOST_TEST(firsts.size() > 15u);
}

BOOST_AUTO_TEST_CASE(bad_options_are_refused) {
  auto refused = [](auto change) {
    RetryPolicyOptions o;
    change(o);
    return RetryPolicy::New(o).status().code() == StatusCode::kInvalidArgument;
  };
  BOOST_TEST((refused([](RetryPolicyOptions& o) { o.initial_backoff = milliseconds(0); })));
  BOOST_TEST((refused([](RetryPolicyOptions& o) { o.max_backoff = milliseconds(10); })));
  BOOST_TEST(refused([](RetryPolicyOptions& o) { o.jitter = 1.5; }));
  BOOST_TEST(refused([](RetryPolicyOptions& o) { o.budget_burst = 0; }));
  BOOST_TEST((refused([](RetryPolicyOptions& o) { o.budget_refill = milliseconds(0); })));
  BOOST_TEST(
      (refused([](RetryPolicyOptions& o) { o.first_retry_budget_wait = milliseconds(-1); })));
  BOOST_TEST(RetryPolicy::New({}).ok());
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_FIXTURE_TEST_SUITE(client_retry_policy, testing::ApiFixture)

// The client's retries and the loop around it take the same ladder: the
// loop's next pause continues where the call's retries ended, it does not
// restart from the bottom (the bug: 0.1 0.2 0.4 0.8 0.8 0.1 0.2 ...).
BOOST_AUTO_TEST_CASE(a_loop_around_a_retrying_call_continues_its_ladder) {
  testing::SimClock clock;
  RetryPolicyOptions ro = Exact(clock);
  auto policy = MustNew(ro);
  KubeClientOptions co = testing::FastOptions();
  co.clock = &clock;
  co.max_retries = 2;
  co.retry_policy = policy;
  auto c = testing::ClientFor(testing::ConfigFor(api), co);
  api.AddFault(R"({"method":"GET","path":"^/api/v1/nodes/ladder$","status":503,"count":-1})");
  auto ladder = policy->NewBackoff();  // the loop's
  CallOptions call;
  call.backoff = ladder.get();
  const milliseconds took = testing::SimulatedDuration(clock, [&] {
    BOOST_TEST((c->Get(NodePath("ladder"), call).status().code() == StatusCode::kUnavailable));
  });
  BOOST_TEST((took == seconds(1 + 2)));
  BOOST_TEST((ladder->Pause() == seconds(4)));  // the loop's pause: the next step
  // A one-off call (no ladder given) retries on a fresh ladder of its own,
  // and moves no loop's.
  auto other = policy->NewBackoff();
  const milliseconds took_alone = testing::SimulatedDuration(clock, [&] {
    BOOST_TEST((c->Get(NodePath("ladder")).status().code() == StatusCode::kUnavailable));
  });
  BOOST_TEST((took_alone == seconds(1 + 2)));
  BOOST_TEST((other->NextStep() == seconds(1)));
  BOOST_TEST((ladder->NextStep() == seconds(8)));
}

// Allocate or Prepare during an outage: the caller's deadline holds (an
// answer in time, no hang), its retries inside it do not move the loop's
// ladder it was given.
BOOST_AUTO_TEST_CASE(a_caller_with_its_own_deadline_retries_within_it_only) {
  testing::SimClock clock;
  auto policy = MustNew(Exact(clock));
  KubeClientOptions co = testing::FastOptions();
  co.clock = &clock;
  co.max_retries = 10;
  co.retry_policy = policy;
  auto c = testing::ClientFor(testing::ConfigFor(api), co);
  api.AddFault(R"({"method":"GET","path":"^/api/v1/nodes/urgent$","status":503,"count":-1})");
  auto ladder = policy->NewBackoff();
  CallOptions call;
  call.deadline = clock.Now() + seconds(2);
  call.within_deadline = true;
  call.backoff = ladder.get();
  const milliseconds took = testing::SimulatedDuration(clock, [&] {
    BOOST_TEST((c->Get(NodePath("urgent"), call).status().code() == StatusCode::kUnavailable));
  });
  BOOST_TEST(took.count() <= 2000);
  BOOST_TEST(CountRequests(api.Requests(), "GET", "/api/v1/nodes/urgent") >= 3);
  BOOST_TEST((ladder->NextStep() == seconds(1)));
  // Without: the ladder's first pause (1 s) fits once, the next (2 s)
  // does not; the call still ends by its deadline.
  api.ClearRequests();
  CallOptions shared;
  shared.deadline = clock.Now() + seconds(2);
  shared.backoff = ladder.get();
  const milliseconds took_shared = testing::SimulatedDuration(clock, [&] {
    BOOST_TEST((c->Get(NodePath("urgent"), shared).status().code() == StatusCode::kUnavailable));
  });
  BOOST_TEST((took_shared == seconds(1)));
  BOOST_TEST(CountRequests(api.Requests(), "GET", "/api/v1/nodes/urgent") == 2);
}

// A POST whose answer was lost may have been applied: it is not sent again
// (a duplicate object), neither by the client's retries nor by the HTTP
// layer's resend on a kept-alive connection.
BOOST_AUTO_TEST_CASE(a_post_whose_answer_was_lost_is_not_sent_again) {
  api.MustRequest("GET", "/api/v1/namespaces/lost/configmaps");
  // A kept-alive connection first: a GET would be resent on it.
  BOOST_REQUIRE(client->Get(ConfigMapsPath("lost")).ok());
  api.AddFault(R"({"method":"POST","path":"/configmaps$","lose_answer":true,"count":1})");
  auto created =
      client->Create(ConfigMapsPath("lost"),
                     R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"generateName":"cm-"}})");
  BOOST_TEST((created.status().code() == StatusCode::kUnavailable));
  BOOST_TEST(CountRequests(api.Requests(), "POST", "/api/v1/namespaces/lost/configmaps") == 1);
  const std::string list = api.MustRequest("GET", "/api/v1/namespaces/lost/configmaps");
  BOOST_TEST(list.find("\"cm-") != std::string::npos);
}

// A POST refused with 503 was not applied: retried like any call.
BOOST_AUTO_TEST_CASE(a_post_refused_with_503_is_retried) {
  api.AddFault(R"({"method":"POST","path":"/configmaps$","status":503,"count":1})");
  auto created =
      client->Create(ConfigMapsPath("refused"),
                     R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm-refused"}})");
  BOOST_TEST(created.ok());
  BOOST_TEST(CountRequests(api.Requests(), "POST", "/api/v1/namespaces/refused/configmaps") == 2);
}

// Retry-After as an HTTP-date (RFC 9110 §10.2.3): the seconds from the
// response's Date to it. It was read as seconds only, and a date ignored.
BOOST_AUTO_TEST_CASE(a_retry_after_given_as_an_http_date_is_honoured) {
  char date[64];
  const std::time_t at = std::time(nullptr) + 7;
  std::tm tm{};
  gmtime_r(&at, &tm);
  std::strftime(date, sizeof(date), "%a, %d %b %Y %H:%M:%S GMT", &tm);
  api.AddFault(std::string(R"({"method":"GET","path":"^/api/v1/nodes/dated$","status":429,)") +
               R"("count":1,"retry_after":")" + date + R"("})");
  std::optional<int> retry_after_s;
  CallOptions call;
  call.max_retries = 0;
  call.retry_after_s = &retry_after_s;
  BOOST_TEST(
      (client->Get(NodePath("dated"), call).status().code() == StatusCode::kResourceExhausted));
  BOOST_REQUIRE(retry_after_s.has_value());
  BOOST_TEST(*retry_after_s >= 5);
  BOOST_TEST(*retry_after_s <= 8);
}

// A transfer may carry interim responses before the final one: a
// Retry-After of an interim 103 is not the final answer's.
BOOST_AUTO_TEST_CASE(only_the_final_responses_retry_after_counts) {
  api.AddFault(R"({"method":"GET","path":"^/api/v1/nodes/interim$","status":503,"count":1,)"
               R"("interim_retry_after":120})");
  std::optional<int> retry_after_s;
  CallOptions call;
  call.max_retries = 0;
  call.retry_after_s = &retry_after_s;
  BOOST_TEST((client->Get(NodePath("interim"), call).status().code() == StatusCode::kUnavailable));
  BOOST_TEST(!retry_after_s.has_value());
  // And the final one's, when it has one, does.
  api.AddFault(R"({"method":"GET","path":"^/api/v1/nodes/interim$","status":503,"count":1,)"
               R"("interim_retry_after":120,"retry_after":3})");
  BOOST_TEST((client->Get(NodePath("interim"), call).status().code() == StatusCode::kUnavailable));
  BOOST_TEST((retry_after_s == std::optional<int>(3)));
}

BOOST_AUTO_TEST_CASE(retry_after_values_parse_as_seconds_or_dates) {
  using kube::ParseRetryAfter;
  const int64_t now = 1445412480;  // Wed, 21 Oct 2015 07:28:00 GMT
  BOOST_TEST((ParseRetryAfter("120", "", now) == std::optional<int>(120)));
  BOOST_TEST((ParseRetryAfter("Wed, 21 Oct 2015 07:28:30 GMT", "", now) == std::optional<int>(30)));
  // From the server's Date, not the local clock.
  BOOST_TEST((ParseRetryAfter("Wed, 21 Oct 2015 07:28:30 GMT", "Wed, 21 Oct 2015 07:28:20 GMT",
                              now + 1000) == std::optional<int>(10)));
  // RFC 850 and asctime, as RFC 9110 asks a recipient to accept.
  BOOST_TEST(
      (ParseRetryAfter("Wednesday, 21-Oct-15 07:28:05 GMT", "", now) == std::optional<int>(5)));
  BOOST_TEST((ParseRetryAfter("Wed Oct 21 07:28:09 2015", "", now) == std::optional<int>(9)));
  BOOST_TEST((ParseRetryAfter("Wed, 21 Oct 2015 07:27:00 GMT", "", now) == std::optional<int>(0)));
  BOOST_TEST(!ParseRetryAfter("soon", "", now).has_value());
  BOOST_TEST(!ParseRetryAfter("-5", "", now).has_value());
  BOOST_TEST(!ParseRetryAfter("999999999", "", now).has_value());
  BOOST_TEST(!ParseRetryAfter("", "", now).has_value());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp
