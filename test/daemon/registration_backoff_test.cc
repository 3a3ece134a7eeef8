// PluginManager keeps its registration backoff on the hcudp::Clock it is
// given: with a SimClock a kubelet that keeps refusing is retried exactly at
// 100, 200, 400 ... ms and then every 5 s of simulated time, and never
// before the clock moves.
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <filesystem>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "hcudp/allocation.h"
#include "hcudp/backend.h"
#include "hcudp/naming.h"
#include "hcudp/node_state.h"
#include "plugin_manager.h"
#include "testing/sim_clock.h"

namespace hcudp::daemon {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using testing::SimClock;

bool WaitFor(const std::function<bool()>& done, milliseconds timeout = milliseconds(10000)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(milliseconds(1));
  }
  return true;
}

// A kubelet.sock whose kubelet is broken: it accepts every connection and
// closes it at once, so each Register fails fast. Records the simulated time
// of each connection (one per Register attempt: the registrar dials the
// socket itself).
class RefusingKubelet {
 public:
  RefusingKubelet(const std::string& path, SimClock& clock) : clock_(clock) {
    fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    BOOST_REQUIRE(fd_ >= 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    BOOST_REQUIRE(path.size() < sizeof addr.sun_path);
    path.copy(addr.sun_path, path.size());
    BOOST_REQUIRE(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    BOOST_REQUIRE(::listen(fd_, 16) == 0);
    thread_ = std::thread([this] {
      while (!stop_) {
        pollfd p{fd_, POLLIN, 0};
        if (::poll(&p, 1, 20) <= 0) continue;
        const int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
        if (c < 0) continue;
        ::close(c);
        std::lock_guard<std::mutex> lock(mu_);
        times_.push_back(clock_.Now());
      }
    });
  }
  ~RefusingKubelet() {
    stop_ = true;
    thread_.join();
    ::close(fd_);
  }

  size_t attempts() const {
    std::lock_guard<std::mutex> lock(mu_);
    return times_.size();
  }
  std::vector<Clock::TimePoint> times() const {
    std::lock_guard<std::mutex> lock(mu_);
    return times_;
  }

 private:
  SimClock& clock_;
  int fd_ = -1;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  mutable std::mutex mu_;
  std::vector<Clock::TimePoint> times_;
};

struct Fixture {
  Fixture() {
    char tmpl[] = "/tmp/hcudp-backoff-XXXXXX";
    BOOST_REQUIRE(::mkdtemp(tmpl) != nullptr);
    dir = tmpl;
    options.backend = BackendKind::kSim;
    options.sim_node_path = std::string(HCUDP_SOURCE_DIR) + "/demo/nodes/k100ai-8.yaml";
    options.host_root = dir + "/root";
    options.strategy = Strategy::kHcu;
    options.device_plugin_path = dir + "/plugins/";
    fs::create_directories(options.device_plugin_path);
    auto backend = OpenBackend(options);
    BOOST_REQUIRE_MESSAGE(backend.ok(), backend.status().ToString());
    auto inventory = (*backend)->Discover();
    BOOST_REQUIRE(inventory.ok());
    NamingParams params;
    params.strategy = options.strategy;
    auto resources = BuildResources(*inventory, params);
    BOOST_REQUIRE(resources.ok());
    BOOST_REQUIRE_EQUAL(resources->size(), 1u);  // hygon.com/hcu
    state.Publish(std::move(*inventory), std::move(*resources));
    kubelet = std::make_unique<RefusingKubelet>(options.device_plugin_path + "kubelet.sock", clock);
  }
  ~Fixture() {
    if (manager) manager->Stop();
    kubelet.reset();
    std::error_code ec;
    fs::remove_all(dir, ec);
  }

  // Waits (real time, bounded) until the manager sleeps on the clock until
  // exactly `at`, with `attempts` attempts made; then moves the clock there.
  void AdvanceToDeadline(Clock::TimePoint at, size_t attempts) {
    BOOST_REQUIRE_MESSAGE(
        WaitFor([&] {
          const auto next = clock.NextDeadline();
          return kubelet->attempts() == attempts && next && *next == at;
        }),
        "expected the manager asleep until +"
            << std::chrono::duration_cast<milliseconds>(at - t0).count() << " ms after " << attempts
            << " attempts; saw " << kubelet->attempts() << " attempts, now +"
            << std::chrono::duration_cast<milliseconds>(clock.Now() - t0).count()
            << " ms, next deadline +"
            << (clock.NextDeadline()
                    ? std::chrono::duration_cast<milliseconds>(*clock.NextDeadline() - t0).count()
                    : -1)
            << " ms");
    clock.Advance(at - clock.Now());
  }

  std::string dir;
  Options options;
  NodeState state;
  AllocationBuilder builder{AllocationBuilderOptions{}};
  SimClock clock;
  const Clock::TimePoint t0 = clock.Now();
  std::unique_ptr<RefusingKubelet> kubelet;
  std::unique_ptr<PluginManager> manager;
};

BOOST_AUTO_TEST_SUITE(registration_backoff)

BOOST_AUTO_TEST_CASE(a_refusing_kubelet_is_retried_on_the_backoff_schedule_in_simulated_time) {
  static_assert(PluginManager::kBackoffMin == milliseconds(100));
  static_assert(PluginManager::kBackoffMax == milliseconds(5000));
  static_assert(PluginManager::kBackstop == milliseconds(5000));
  // Attempts at 0, then backoffs of 100 ms doubling, capped at 5 s.
  const std::vector<milliseconds> expected = {
      milliseconds(0),    milliseconds(100),   milliseconds(300),
      milliseconds(700),  milliseconds(1500),  milliseconds(3100),
      milliseconds(6300), milliseconds(11300), milliseconds(16300)};
  Fixture f;
  f.manager =
      std::make_unique<PluginManager>(f.options, f.state, f.builder, nullptr, nullptr, f.clock);
  BOOST_REQUIRE(f.manager->Start().ok());
  BOOST_REQUIRE(WaitFor([&] { return f.kubelet->attempts() == 1; }));
  milliseconds backstop(5000);  // the 5 s stat backstop also wakes the manager
  for (size_t i = 1; i < expected.size(); ++i) {
    while (backstop < expected[i]) {
      f.AdvanceToDeadline(f.t0 + backstop, i);  // a backstop wake-up: no attempt
      backstop += PluginManager::kBackstop;
    }
    f.AdvanceToDeadline(f.t0 + expected[i], i);
    BOOST_REQUIRE(WaitFor([&] { return f.kubelet->attempts() == i + 1; }));
  }
  const std::vector<Clock::TimePoint> times = f.kubelet->times();
  BOOST_REQUIRE_EQUAL(times.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    BOOST_TEST((times[i] - f.t0 == expected[i]), "attempt " << i);
  }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp::daemon
