// Shared pieces of the kube tests: one fake API server per test executable
// (starting one costs ~0.3 s), clients for it, and object builders.
#ifndef HCUDP_TEST_KUBE_KUBE_TEST_UTIL_H_
#define HCUDP_TEST_KUBE_KUBE_TEST_UTIL_H_

#include <atomic>
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "fake_apiserver/fake_apiserver_process.h"
#include "hcudp/kube_client.h"
#include "hcudp/kube_config.h"
#include "testing/sim_clock.h"
#include "testing/testutil.h"

namespace hcudp::testing {

// Created on first use; ended by SharedApiServerTeardown (a global fixture
// in kube_client_test.cc) so no server outlives the test run.
inline std::unique_ptr<FakeApiServer>& SharedApiServerSlot() {
  static std::unique_ptr<FakeApiServer> server;
  return server;
}

inline FakeApiServer& SharedApiServer() {
  if (!SharedApiServerSlot()) SharedApiServerSlot() = std::make_unique<FakeApiServer>();
  return *SharedApiServerSlot();
}

struct SharedApiServerTeardown {
  ~SharedApiServerTeardown() { SharedApiServerSlot().reset(); }
};

// A config for `server` that reads the server's own token file, so token
// changes by other tests never break it.
inline KubeConfig ConfigFor(const FakeApiServer& server) {
  KubeConfig c;
  c.source = "test";
  c.server = server.server_url();
  c.ca_pem = ReadFile(server.ca_file());
  c.token_file = server.token_file();
  return c;
}

// Fast retries so fault tests stay quick.
inline KubeClientOptions FastOptions() {
  KubeClientOptions o;
  o.initial_backoff_ms = 20;
  o.max_backoff_ms = 100;
  o.request_timeout_ms = 5000;
  o.watch_timeout_s = 10;
  return o;
}

// A retry policy without jitter and with a budget that never runs out, from
// the client options' backoffs, on their clock: a test's schedule of pauses
// is exact. (Jitter and the budget have tests of their own.)
inline std::shared_ptr<RetryPolicy> ExactPolicy(const KubeClientOptions& options) {
  RetryPolicyOptions ro;
  ro.initial_backoff = std::chrono::milliseconds(options.initial_backoff_ms);
  ro.max_backoff = std::chrono::milliseconds(options.max_backoff_ms);
  ro.max_retry_after = std::chrono::milliseconds(options.max_retry_after_ms);
  ro.jitter = 0;
  ro.budget_burst = 1000000;
  ro.clock = options.clock;
  ro.seed = 1;
  StatusOr<std::shared_ptr<RetryPolicy>> policy = RetryPolicy::New(ro);
  BOOST_REQUIRE_MESSAGE(policy.ok(), policy.status().ToString());
  return std::move(policy).value();
}

// A client for `config`; unless `options` brings a retry policy, one from
// ExactPolicy.
inline std::unique_ptr<KubeClient> ClientFor(const KubeConfig& config,
                                             KubeClientOptions options = FastOptions()) {
  if (options.retry_policy == nullptr) options.retry_policy = ExactPolicy(options);
  StatusOr<std::unique_ptr<KubeClient>> c = KubeClient::New(config, options);
  BOOST_REQUIRE_MESSAGE(c.ok(), c.status().ToString());
  return std::move(c).value();
}

// A per-test fixture: a clean fault list and request log on the shared
// server, and a client for it.
struct ApiFixture {
  ApiFixture() : api(SharedApiServer()) {
    api.ClearFaults();
    api.ClearRequests();
    client = ClientFor(ConfigFor(api));
  }
  ~ApiFixture() { api.ClearFaults(); }
  FakeApiServer& api;
  std::unique_ptr<KubeClient> client;
};

inline std::string NodeJson(const std::string& name, const std::string& annotations = "{}") {
  return R"({"apiVersion":"v1","kind":"Node","metadata":{"name":")" + name + R"(","annotations":)" +
         annotations + "}}";
}

inline std::string PodJson(const std::string& name, const std::string& node,
                           const std::string& annotations = "{}") {
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name + R"(","annotations":)" +
         annotations + R"(},"spec":{"nodeName":")" + node +
         R"(","containers":[{"name":"main","resources":{"limits":{"hygon.com/hcunum":"1"}}}]}})";
}

// Polls `condition` every 10 ms for up to `timeout_ms`.
inline bool Eventually(const std::function<bool()>& condition, int timeout_ms = 5000) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return condition();
}

// Runs `call` on another thread, moving `clock` through every backoff it
// sleeps (AdvanceUntil), and returns the simulated time the call took. A call
// that is still running after 20 s of real time fails the test (the clock is
// then pushed far ahead so that the thread can be joined).
inline std::chrono::milliseconds SimulatedDuration(SimClock& clock,
                                                   const std::function<void()>& call) {
  std::atomic<bool> done{false};
  const Clock::TimePoint start = clock.Now();
  std::thread caller([&] {
    call();
    done = true;
  });
  const bool finished = AdvanceUntil(clock, [&] { return done.load(); });
  while (!done.load()) clock.Advance(std::chrono::hours(1));
  caller.join();
  BOOST_REQUIRE_MESSAGE(finished, "the call did not finish within 20 s of real time");
  return std::chrono::duration_cast<std::chrono::milliseconds>(clock.Now() - start);
}

}  // namespace hcudp::testing

#endif  // HCUDP_TEST_KUBE_KUBE_TEST_UTIL_H_
