// RetryPolicy in simulated time: the ladder's growth and cap, the jitter's
// bounds, the reset after a stable period (and only then), Retry-After, the
// process's retry budget; and the client's retries on that one ladder: a
// loop that tries again continues it, a caller with its own deadline keeps
// that deadline.
#include "hcudp/retry_policy.h"

#include <boost/test/unit_test.hpp>
#include <chrono>
#include <set>
#include <vector>

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
  std::vector<int64_t> pauses;
  for (int i = 0; i < 8; ++i) {
    milliseconds p = policy->Pause();
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
  std::set<int64_t> at_cap;
  for (int i = 0; i < 40; ++i) {
    const milliseconds step = policy->NextStep();
    const milliseconds p = policy->Pause();
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
    milliseconds p{0};
    for (int i = 0; i < 5; ++i) p = policy->Pause();
    fifth_pauses.insert(p.count());
  }
  BOOST_TEST(fifth_pauses.size() > 15u);
}

BOOST_AUTO_TEST_CASE(the_ladder_resets_only_after_a_stable_period) {
  testing::SimClock clock;
  auto policy = MustNew(Exact(clock));
  for (int i = 0; i < 4; ++i) clock.Advance(policy->Pause());  // 1+2+4+8 s
  BOOST_TEST((policy->NextStep() == seconds(16)));
  // Going well for less than the stable period (60 s) changes nothing: one
  // success is no reason to come back at the bottom of the ladder.
  clock.Advance(seconds(59));
  BOOST_TEST((policy->NextStep() == seconds(16)));
  BOOST_TEST((policy->Pause() == seconds(16)));
  clock.Advance(seconds(16) + seconds(60));
  BOOST_TEST((policy->NextStep() == seconds(1)));
  BOOST_TEST((policy->Pause() == seconds(1)));
}

BOOST_AUTO_TEST_CASE(a_retry_after_raises_the_pause_up_to_the_longest_honoured) {
  testing::SimClock clock;
  RetryPolicyOptions o = Exact(clock);
  o.max_retry_after = seconds(60);
  auto policy = MustNew(o);
  BOOST_TEST((policy->Pause(30) == seconds(30)));    // a 429 that says 30 s: 30 s
  BOOST_TEST((policy->Pause(1) == seconds(2)));      // never shorter than the ladder
  BOOST_TEST((policy->Pause(3600) == seconds(60)));  // a hostile hour: cut
}

BOOST_AUTO_TEST_CASE(the_budget_queues_retries_beyond_the_burst) {
  testing::SimClock clock;
  RetryPolicyOptions o = Exact(clock);
  o.initial_backoff = milliseconds(10);
  o.max_backoff = milliseconds(10);
  o.budget_burst = 3;
  o.budget_refill = seconds(5);
  auto policy = MustNew(o);
  // Several loops failing at the same moment: three retries at once, then
  // one per refill, each queued behind the one before.
  std::vector<int64_t> pauses;
  for (int i = 0; i < 6; ++i) pauses.push_back(policy->Pause().count());
  BOOST_TEST(pauses == (std::vector<int64_t>{10, 10, 10, 5000, 10000, 15000}),
             boost::test_tools::per_element());
  // Refilled with time: after a quiet minute the burst is back.
  clock.Advance(seconds(60));
  BOOST_TEST(policy->Pause().count() == 10);
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
  const milliseconds took = testing::SimulatedDuration(clock, [&] {
    BOOST_TEST((c->Get(NodePath("ladder")).status().code() == StatusCode::kUnavailable));
  });
  BOOST_TEST((took == seconds(1 + 2)));
  BOOST_TEST((policy->Pause() == seconds(4)));  // the loop's pause: the next step
}

// Allocate or Prepare during an outage: the caller's deadline holds (an
// answer in time, no hang), its retries inside it do not move the process's
// ladder.
BOOST_AUTO_TEST_CASE(a_caller_with_its_own_deadline_retries_within_it_only) {
  testing::SimClock clock;
  auto policy = MustNew(Exact(clock));
  KubeClientOptions co = testing::FastOptions();
  co.clock = &clock;
  co.max_retries = 10;
  co.retry_policy = policy;
  auto c = testing::ClientFor(testing::ConfigFor(api), co);
  api.AddFault(R"({"method":"GET","path":"^/api/v1/nodes/urgent$","status":503,"count":-1})");
  CallOptions call;
  call.deadline = clock.Now() + seconds(2);
  call.within_deadline = true;
  const milliseconds took = testing::SimulatedDuration(clock, [&] {
    BOOST_TEST((c->Get(NodePath("urgent"), call).status().code() == StatusCode::kUnavailable));
  });
  BOOST_TEST(took.count() <= 2000);
  BOOST_TEST(CountRequests(api.Requests(), "GET", "/api/v1/nodes/urgent") >= 3);
  BOOST_TEST((policy->NextStep() == seconds(1)));
  // Without: the shared ladder's first pause (1 s) fits once, the next (2 s)
  // does not; the call still ends by its deadline.
  api.ClearRequests();
  CallOptions shared;
  shared.deadline = clock.Now() + seconds(2);
  const milliseconds took_shared = testing::SimulatedDuration(clock, [&] {
    BOOST_TEST((c->Get(NodePath("urgent"), shared).status().code() == StatusCode::kUnavailable));
  });
  BOOST_TEST((took_shared == seconds(1)));
  BOOST_TEST(CountRequests(api.Requests(), "GET", "/api/v1/nodes/urgent") == 2);
}

// A POST whose answer was lost may have been applied: it is not sent again
// (a duplicate object), neither by the client's retries nor by libcurl's
// own resend on a kept-alive connection.
BOOST_AUTO_TEST_CASE(a_post_whose_answer_was_lost_is_not_sent_again) {
  api.MustRequest("GET", "/api/v1/namespaces/lost/configmaps");
  // A kept-alive connection first: libcurl would resend on it.
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

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp
