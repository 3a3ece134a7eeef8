// The DRAResourceHealth stream (dra.md §2.8): the full list at once, again
// on every change the driver announces, again before kubelet's timeout, in
// the versions each kubelet release opens; and streams end when we stop.
#include <boost/test/unit_test.hpp>
#include <iostream>
#include <thread>

#include "dra/health_broadcaster.h"
#include "dra_wire/dra_node.h"
#include "testing/sim_clock.h"

namespace hcudp::testing {
namespace {

using daemon::dra::DeviceHealth;
using daemon::dra::DeviceHealthStatus;
using daemon::dra::HealthBroadcaster;
using std::chrono::milliseconds;
using std::chrono::seconds;
using SteadyClock = std::chrono::steady_clock;

constexpr int kHealthy = 1;    // HealthStatus HEALTHY
constexpr int kUnhealthy = 2;  // HealthStatus UNHEALTHY

DeviceHealth Device(const std::string& name, DeviceHealthStatus health,
                    const std::string& message = "") {
  DeviceHealth d;
  d.pool_name = "node-a";
  d.device_name = name;
  d.health = health;
  d.message = message;
  return d;
}

std::optional<WatcherSnapshot> WaitForHealth(DraNode& node, const std::string& device, int health,
                                             milliseconds timeout = seconds(10)) {
  return node.kubelet().WaitFor(
      [&](const WatcherSnapshot& s) {
        auto h = s.health.find(kDriver);
        if (h == s.health.end()) return false;
        auto d = h->second.devices.find("node-a/" + device);
        return d != h->second.devices.end() && d->second == health;
      },
      timeout);
}

BOOST_AUTO_TEST_SUITE(health)

BOOST_AUTO_TEST_CASE(kubelet_1_37_gets_the_list_at_once_and_on_change_over_v1) {
  DraNode node;  // HealthMode::kAdvertised: v1 preferred
  node.handler().SetHealth({Device("hcu-a", DeviceHealthStatus::kHealthy),
                            Device("hcu-b", DeviceHealthStatus::kHealthy)});
  node.Start();
  auto s = WaitForHealth(node, "hcu-a", kHealthy);
  BOOST_REQUIRE(s.has_value());
  BOOST_TEST(s->health.at(kDriver).devices.size() == 2u);
  BOOST_TEST(s->plugins.at(kDriver)[0].health_service == "v1.DRAResourceHealth");

  node.handler().SetHealth({Device("hcu-a", DeviceHealthStatus::kUnhealthy, "ECC errors"),
                            Device("hcu-b", DeviceHealthStatus::kHealthy)});
  const auto t0 = SteadyClock::now();
  node.plugin().NotifyHealthChanged();
  s = WaitForHealth(node, "hcu-a", kUnhealthy);
  BOOST_REQUIRE(s.has_value());
  std::cerr << "DRA: health change -> on the stream in "
            << std::chrono::duration_cast<milliseconds>(SteadyClock::now() - t0).count() << " ms\n";
  BOOST_TEST(s->health.at(kDriver).messages.at("node-a/hcu-a") == "ECC errors");
  BOOST_TEST(s->health.at(kDriver).devices.at("node-a/hcu-b") == kHealthy);
}

BOOST_AUTO_TEST_CASE(kubelet_1_36_opens_v1alpha1_and_gets_the_same_list) {
  FakePluginWatcher::Config config;
  config.health_mode = FakePluginWatcher::HealthMode::kV1alpha1ForEveryone;
  DraNode node(config);
  node.handler().SetHealth({Device("hcu-a", DeviceHealthStatus::kUnhealthy)});
  node.Start();
  auto s = WaitForHealth(node, "hcu-a", kUnhealthy);
  BOOST_REQUIRE(s.has_value());
  BOOST_TEST(s->plugins.at(kDriver)[0].health_service == "v1alpha1.DRAResourceHealth");
  node.handler().SetHealth({Device("hcu-a", DeviceHealthStatus::kHealthy)});
  node.plugin().NotifyHealthChanged();
  BOOST_TEST(WaitForHealth(node, "hcu-a", kHealthy).has_value());
  BOOST_TEST(PollUntil([&] { return node.plugin().health_streams() == 1; }));
}

BOOST_AUTO_TEST_CASE(a_long_message_is_cut_as_kubelet_would) {
  DraNode node;
  node.handler().SetHealth(
      {Device("hcu-a", DeviceHealthStatus::kUnhealthy, std::string(2000, 'x'))});
  node.Start();
  auto s = WaitForHealth(node, "hcu-a", kUnhealthy);
  BOOST_REQUIRE(s.has_value());
  const std::string& m = s->health.at(kDriver).messages.at("node-a/hcu-a");
  BOOST_TEST(m.size() == 1024u);
  BOOST_TEST(m.substr(1021) == "...");
}

BOOST_AUTO_TEST_CASE(a_new_kubelet_after_a_restart_gets_the_list_again) {
  DraNode node;
  node.handler().SetHealth({Device("hcu-a", DeviceHealthStatus::kHealthy)});
  node.Start();
  BOOST_REQUIRE(WaitForHealth(node, "hcu-a", kHealthy).has_value());
  BOOST_REQUIRE_EQUAL(node.kubelet().Restart(), "");
  auto s = node.kubelet().WaitFor(
      [](const WatcherSnapshot& s) {
        auto h = s.health.find(kDriver);
        return h != s.health.end() && h->second.streams_opened >= 2 &&
               h->second.devices.count("node-a/hcu-a") == 1;
      },
      seconds(10));
  BOOST_TEST(s.has_value());
  // The old stream ended on our side too: one stream is open.
  BOOST_TEST(PollUntil([&] { return node.plugin().health_streams() == 1; }));
}

// The broadcaster alone, on simulated time: dedupe and the periodic resend.
class RecordingSink final : public HealthBroadcaster::Sink {
 public:
  void Push(std::shared_ptr<const daemon::dra::HealthList> list) override {
    std::lock_guard<std::mutex> lock(mu_);
    lists_.push_back(*list);
    cv_.notify_all();
  }
  void Close() override {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
  }
  bool WaitForPushes(size_t n, milliseconds timeout) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return lists_.size() >= n; });
  }
  std::vector<daemon::dra::HealthList> lists() {
    std::lock_guard<std::mutex> lock(mu_);
    return lists_;
  }
  bool closed() {
    std::lock_guard<std::mutex> lock(mu_);
    return closed_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<daemon::dra::HealthList> lists_;
  bool closed_ = false;
};

BOOST_AUTO_TEST_CASE(unchanged_health_is_not_resent_until_the_resend_period) {
  SimClock clock;
  TestHandler handler;
  handler.SetHealth({Device("hcu-a", DeviceHealthStatus::kHealthy)});
  HealthBroadcaster b(handler, clock);
  b.Start();
  RecordingSink sink;
  BOOST_REQUIRE(b.Add(&sink));
  BOOST_REQUIRE(sink.WaitForPushes(1, seconds(5)));
  BOOST_TEST(sink.lists()[0][0].last_updated_unix_seconds == 1'800'000'000);  // stamped
  BOOST_TEST(sink.lists()[0][0].message == "");

  // A notification without a change: the snapshot is read, nothing is sent.
  const int snapshots = handler.snapshots();
  b.NotifyChanged();
  BOOST_REQUIRE(clock.WaitForSleepers(1, seconds(5)));
  BOOST_REQUIRE(
      PollUntil([&] { return handler.snapshots() > snapshots; }, seconds(5), milliseconds(1)));
  BOOST_REQUIRE(clock.WaitForSleepers(1, seconds(5)));
  BOOST_TEST(sink.lists().size() == 1u);

  // Before kubelet's timeout the full list goes again.
  clock.Advance(HealthBroadcaster::kResendPeriod);
  BOOST_REQUIRE(sink.WaitForPushes(2, seconds(5)));
  BOOST_TEST(sink.lists()[1].size() == 1u);

  // A change goes at once.
  handler.SetHealth({Device("hcu-a", DeviceHealthStatus::kUnhealthy)});
  b.NotifyChanged();
  BOOST_REQUIRE(sink.WaitForPushes(3, seconds(5)));
  BOOST_TEST(static_cast<int>(sink.lists()[2][0].health) ==
             static_cast<int>(DeviceHealthStatus::kUnhealthy));

  b.Stop();
  BOOST_TEST(sink.closed());
  RecordingSink late;
  BOOST_TEST(!b.Add(&late));
  b.Remove(&sink);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp::testing
