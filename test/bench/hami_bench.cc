// HAMi Allocate latency (one container, a vHCU created on the simulated
// K100_AI) against the fake API server on loopback, next to the physical
// Allocate of a --strategy=hcu daemon on the same node file in the same run,
// and the API calls each HAMi Allocate makes (target: p50 <= 20 ms, no LIST).
// Iterations: HCUDP_BENCH_ITERATIONS (default 20; BENCHMARKS.md used 300).
//   HCUDP_BENCH_ITERATIONS=300 build/release/test/bench/test_bench_hami
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "bench_util.h"
#include "integration/hami_node.h"

namespace hcudp::testing {
namespace {

using hcudp::bench::EnvCount;
using hcudp::bench::Percentile;

using SteadyClock = std::chrono::steady_clock;

double Ms(SteadyClock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

int Iterations() { return static_cast<int>(EnvCount("HCUDP_BENCH_ITERATIONS", 20)); }

BOOST_AUTO_TEST_CASE(hami_allocate_next_to_physical_allocate) {
  const char* flags = std::getenv("HCUDP_BENCH_HAMI_FLAGS");  // e.g. --log-level=4
  HamiNode hami(flags ? std::vector<std::string>{flags} : std::vector<std::string>{});
  hami.Start();
  DaemonHarness physical("demo/nodes/k100ai-8.yaml", {"--strategy=hcu"});
  physical.Start();
  physical.RequireRegistered("hygon.com/hcu");

  const int n = Iterations();
  std::vector<double> hami_ms, physical_ms;
  size_t calls_total = 0, calls_max = 0, lists = 0;
  for (int i = 0; i < n; ++i) {
    const std::string name = "bench-" + std::to_string(i);
    const char* serial = i % 2 == 0 ? kSn0 : kSn1;
    hami.SchedulePod({name, {{"main", std::string(serial) + ",HCU,8192,30:"}}});
    // Steady state: the daemon's pod cache has seen the bind.
    std::this_thread::sleep_for(milliseconds(30));
    hami.api().ClearRequests();
    v1beta1::AllocateResponse response;
    auto t0 = SteadyClock::now();
    grpc::Status s = hami.Allocate({{std::string(serial) + "-fake-0"}}, &response);
    auto t1 = SteadyClock::now();
    BOOST_REQUIRE_MESSAGE(s.ok(), s.error_message());
    hami_ms.push_back(Ms(t1 - t0));
    auto calls = AllocatePathRequests(hami.api().Requests());
    calls_total += calls.size();
    calls_max = std::max(calls_max, calls.size());
    lists += static_cast<size_t>(std::count_if(calls.begin(), calls.end(), IsPodList));

    v1beta1::AllocateResponse card;
    t0 = SteadyClock::now();
    s = physical.kubelet().Allocate("hygon.com/hcu", {{K100Bdfs()[i % 8]}}, &card);
    t1 = SteadyClock::now();
    BOOST_REQUIRE_MESSAGE(s.ok(), s.error_message());
    physical_ms.push_back(Ms(t1 - t0));

    hami.api().MustRequest("DELETE", "/api/v1/namespaces/default/pods/" + name);
    BOOST_REQUIRE(WaitUntil([&] { return hami.Confs().empty(); }));
  }
  std::printf(
      "HAMi Allocate (1 container, vHCU created), %d iterations:\n"
      "  hami     p50 %.2f ms  p99 %.2f ms\n"
      "  physical p50 %.3f ms  p99 %.3f ms\n"
      "  API calls per HAMi Allocate: mean %.2f, max %zu; LISTs: %zu\n",
      n, Percentile(hami_ms, 0.5), Percentile(hami_ms, 0.99), Percentile(physical_ms, 0.5),
      Percentile(physical_ms, 0.99), static_cast<double>(calls_total) / n, calls_max, lists);
  if (flags) std::printf("--- HAMi daemon log ---\n%s", hami.h().daemon().Log().c_str());
  BOOST_TEST(lists == 0u);
  BOOST_WARN(Percentile(hami_ms, 0.5) <= 20.0);
}

}  // namespace
}  // namespace hcudp::testing
