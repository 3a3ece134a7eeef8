// NodeWatcher keeps its schedules (the pulse, the confirming re-read, the
// restart grace) on the hcudp::Clock it is given: with a SimClock they run in simulated time, so
// "not before 30 s" is shown without waiting 30 s and cannot flake.
#include <atomic>
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <mutex>
#include <string>
#include <thread>

#include "hcudp/backend.h"
#include "hcudp/node_state.h"
#include "hcudp/node_watcher.h"
#include "testing/sim_clock.h"

namespace hcudp {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::SimClock;

// Counts what the watcher asks; RestartRequired fails while `restart` is set.
class CountingBackend final : public Backend {
 public:
  StatusOr<NodeInventory> Discover() override {
    ++discovers;
    std::lock_guard<std::mutex> lock(mu);
    return inventory;
  }
  StatusOr<std::vector<CardHealthReport>> QueryHealth() override {
    std::lock_guard<std::mutex> lock(mu);
    return health;
  }
  StatusOr<Vhcu> CreateVhcu(int, int, uint64_t) override { return InternalError("not here"); }
  Status DestroyVhcu(int) override { return InternalError("not here"); }
  const std::string& host_root() const override { return root; }
  std::vector<std::string> WatchPaths() const override { return {}; }
  Status RestartRequired() const override {
    ++checks;
    return restart ? UnavailableError("lost hymgr") : OkStatus();
  }

  std::atomic<int> discovers{0};
  mutable std::atomic<int> checks{0};
  std::atomic<bool> restart{false};
  std::mutex mu;
  NodeInventory inventory;               // what Discover answers; guarded by mu
  std::vector<CardHealthReport> health;  // what QueryHealth answers; guarded by mu
  std::string root = "/";                // set before the watcher starts
};

// Polls `done` in real time until it holds or `timeout` passes.
bool WaitFor(const std::function<bool()>& done, milliseconds timeout = milliseconds(5000)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(milliseconds(1));
  }
  return true;
}

struct Fixture {
  explicit Fixture(NodeInventory first = {}, const std::string& cdi_dir = "",
                   const std::string& host_root = "/") {
    backend.inventory = std::move(first);
    backend.root = host_root;
    options.pulse_seconds = 30;
    if (!cdi_dir.empty()) {
      options.device_list_strategy = DeviceListStrategy::kCdi;
      options.cdi_spec_dir = cdi_dir;
    }
    watcher = std::make_unique<NodeWatcher>(options, &backend, &state, &clock);
    watcher->set_restart_handler([this] { restarted = true; });
    watcher->set_health_listener([this](const Card& card, Health health, const std::string& why) {
      std::lock_guard<std::mutex> lock(mu);
      changes.push_back(card.bdf + " " + std::string(HealthName(health)) + ": " + why);
    });
    BOOST_REQUIRE(watcher->Start().ok());
    BOOST_REQUIRE(clock.WaitForSleepers(1, milliseconds(5000)));
  }
  ~Fixture() { watcher->Stop(); }

  // Moves simulated time by `d` and waits (in real time, bounded) until the
  // watcher has handled it: it checks the backend's restart state on every
  // wake-up (after any re-discovery), then waits on the clock again.
  void Step(std::chrono::nanoseconds d) {
    BOOST_REQUIRE(clock.WaitForSleepers(1, milliseconds(5000)));
    const int before = backend.checks;
    clock.Advance(d);
    BOOST_REQUIRE(WaitFor([&] { return backend.checks > before; }));
    BOOST_REQUIRE(clock.WaitForSleepers(1, milliseconds(5000)));  // the wake-up is over
  }

  Options options;
  CountingBackend backend;
  NodeState state;
  SimClock clock;
  std::atomic<bool> restarted{false};
  std::mutex mu;
  std::vector<std::string> changes;  // the health listener's calls; guarded by mu
  std::unique_ptr<NodeWatcher> watcher;
};

BOOST_AUTO_TEST_SUITE(node_watcher_clock)

BOOST_AUTO_TEST_CASE(the_pulse_rediscovers_at_30_simulated_seconds_not_before) {
  Fixture f;
  BOOST_TEST(f.backend.discovers.load() == 1);  // Start's first look
  f.Step(seconds(29));
  BOOST_TEST(f.backend.discovers.load() == 1);
  f.Step(seconds(1));
  BOOST_TEST(f.backend.discovers.load() == 2);
  f.Step(seconds(29));
  BOOST_TEST(f.backend.discovers.load() == 2);
  f.Step(seconds(1));
  BOOST_TEST(f.backend.discovers.load() == 3);
}

BOOST_AUTO_TEST_CASE(a_required_restart_is_acted_on_after_the_grace_not_before) {
  Fixture f;
  f.backend.restart = true;
  f.Step(NodeWatcher::kRestartCheck);  // first seen: the grace starts
  for (int i = 1; i < 5; ++i) {
    f.Step(NodeWatcher::kRestartCheck);
    BOOST_TEST(!f.restarted.load(), "after " << i << " s of the 5 s grace");
  }
  f.Step(NodeWatcher::kRestartCheck);
  BOOST_TEST(f.restarted.load());
  BOOST_TEST(f.watcher->restart_requested());
}

BOOST_AUTO_TEST_CASE(a_restart_condition_that_clears_within_the_grace_is_forgiven) {
  Fixture f;
  f.backend.restart = true;
  for (int i = 0; i < 4; ++i) f.Step(NodeWatcher::kRestartCheck);
  f.backend.restart = false;
  f.Step(NodeWatcher::kRestartCheck);
  f.backend.restart = true;
  for (int i = 0; i < 5; ++i) f.Step(NodeWatcher::kRestartCheck);  // a new grace
  BOOST_TEST(!f.restarted.load());
  f.Step(NodeWatcher::kRestartCheck);
  BOOST_TEST(f.restarted.load());
}

// A card seen before udev made its /dev/dri nodes: the same device list,
// but what Allocate hands out has changed.
NodeInventory OneCard(std::vector<std::string> dri_nodes) {
  NodeInventory inv;
  Card card;
  card.index = 0;
  card.bdf = "0000:09:00.0";
  card.dri_nodes = std::move(dri_nodes);
  if (card.dri_nodes.empty()) card.dri_error = "no drm directory yet";
  inv.cards.push_back(card);
  return inv;
}

BOOST_AUTO_TEST_CASE(dri_nodes_that_appear_later_reach_the_published_inventory) {
  Fixture f(OneCard({}));
  BOOST_TEST(f.state.Current()->inventory.cards.at(0).dri_nodes.empty());
  {
    std::lock_guard<std::mutex> lock(f.backend.mu);
    f.backend.inventory = OneCard({"/dev/dri/card1", "/dev/dri/renderD129"});
  }
  f.Step(seconds(30));
  BOOST_TEST(f.state.Current()->inventory.cards.at(0).dri_nodes.size() == 2u);
}

// Hysteresis on the clock: a bad reading at a pulse is re-read
// kConfirmDelay later, and only the second bad reading changes the health
// the state publishes and the listener hears, once.
BOOST_AUTO_TEST_CASE(a_bad_reading_is_confirmed_a_second_later_and_reported_once) {
  Fixture f(OneCard({"/dev/dri/card1", "/dev/dri/renderD129"}));
  {
    std::lock_guard<std::mutex> lock(f.backend.mu);
    f.backend.health = {{"0000:09:00.0", Health::kUnhealthy, "ECC errors"}};
  }
  f.Step(seconds(30));  // the pulse: one disagreeing reading
  BOOST_TEST((f.state.Current()->inventory.cards.at(0).health == Health::kHealthy));
  {
    std::lock_guard<std::mutex> lock(f.mu);
    BOOST_TEST(f.changes.empty());
  }
  f.Step(NodeWatcher::kConfirmDelay);  // the confirming re-read
  BOOST_TEST((f.state.Current()->inventory.cards.at(0).health == Health::kUnhealthy));
  f.Step(seconds(30));
  std::lock_guard<std::mutex> lock(f.mu);
  BOOST_TEST(f.changes == std::vector<std::string>{"0000:09:00.0 Unhealthy: ECC errors"},
             boost::test_tools::per_element());
}

void SetLook(Fixture& f, NodeInventory inventory, std::vector<CardHealthReport> health) {
  std::lock_guard<std::mutex> lock(f.backend.mu);
  f.backend.inventory = std::move(inventory);
  f.backend.health = std::move(health);
}

Health CardHealth(Fixture& f) { return f.state.Current()->inventory.cards.at(0).health; }

// Issue 23: a card whose state one look could not read is unknown, not
// gone. Its Unhealthy verdict stays; when it is readable again, one healthy
// reading does not readmit it (a flapping card would otherwise come back
// whole at every failed query).
BOOST_AUTO_TEST_CASE(a_card_unknown_for_one_look_returns_through_hysteresis) {
  const NodeInventory card = OneCard({"/dev/dri/card1", "/dev/dri/renderD129"});
  Fixture f(card);
  SetLook(f, card, {{"0000:09:00.0", Health::kUnhealthy, "ECC errors"}});
  f.Step(seconds(30));
  f.Step(NodeWatcher::kConfirmDelay);
  BOOST_REQUIRE((CardHealth(f) == Health::kUnhealthy));

  NodeInventory unknown;
  UnknownCard u;
  u.last_known = card.cards.at(0);
  u.reason = UnknownReason::kQueryFailed;
  unknown.unknown_cards.push_back(u);
  SetLook(f, unknown, {});
  f.Step(seconds(30));
  BOOST_TEST(f.state.Current()->inventory.cards.empty());
  BOOST_TEST(f.state.Current()->inventory.unknown_cards.size() == 1u);

  SetLook(f, card, {{"0000:09:00.0", Health::kHealthy, ""}});  // Discover: Healthy too
  f.Step(seconds(30));
  BOOST_TEST((CardHealth(f) == Health::kUnhealthy), "readmitted at its first reading");
  f.Step(NodeWatcher::kConfirmDelay);
  BOOST_TEST((CardHealth(f) == Health::kHealthy));
}

// Issue 23: state turning unknown reaches the snapshot (a new generation)
// even when no device list changes: here a card whose identity was never
// read, next to a readable one.
BOOST_AUTO_TEST_CASE(state_turning_unknown_is_published_without_a_device_list_change) {
  NodeInventory inv = OneCard({"/dev/dri/card1", "/dev/dri/renderD129"});
  Fixture f(inv);
  const uint64_t before = f.state.Current()->generation;
  UnknownCard u;
  u.last_known.index = 1;
  u.reason = UnknownReason::kQueryFailed;
  u.detail = "hydmi: query failed";
  inv.unknown_cards.push_back(u);
  SetLook(f, inv, {});
  f.Step(seconds(30));
  BOOST_TEST(f.state.Current()->generation == before + 1);
  BOOST_TEST(f.state.Current()->inventory.unknown_cards.size() == 1u);
  inv.unknown_cards.clear();
  SetLook(f, inv, {});
  f.Step(seconds(30));
  BOOST_TEST(f.state.Current()->generation == before + 2);
  BOOST_TEST(f.state.Current()->inventory.unknown_cards.empty());
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// hy-smi wrote vdev0.conf non-atomically: the first look found it empty, so
// the CDI spec left vdev0 out; the device list did not change when the file
// was complete, yet Allocate would now name hygon.com/hcu=vdev0.
BOOST_AUTO_TEST_CASE(a_cdi_device_left_out_for_an_unready_conf_is_added_when_it_is_ready) {
  char tmpl[] = "/tmp/nw_cdi_XXXXXX";
  BOOST_REQUIRE(::mkdtemp(tmpl) != nullptr);
  const std::string root = tmpl;
  BOOST_REQUIRE(std::filesystem::create_directories(root + "/etc/vdev"));
  std::ofstream(root + "/etc/vdev/vdev0.conf").close();  // empty
  NodeInventory inv = OneCard({"/dev/dri/card1", "/dev/dri/renderD129"});
  Vhcu v;
  v.id = 0;
  v.card = 0;
  v.card_bdf = "0000:09:00.0";
  v.compute_units = 4;
  v.memory_mib = 4096;
  v.conf_path = "/etc/vdev/vdev0.conf";
  inv.vhcus.push_back(v);
  {
    Fixture f(inv, root + "/cdi", root);
    const std::string spec = root + "/cdi/hygon.com-hcu.json";
    BOOST_TEST(ReadAll(spec).find("\"vdev0\"") == std::string::npos);
    std::ofstream(root + "/etc/vdev/vdev0.conf") << "vdev_id: 0\ncu_count: 4\n";
    f.Step(seconds(30));
    BOOST_TEST(ReadAll(spec).find("\"vdev0\"") != std::string::npos);
  }
  std::filesystem::remove_all(root);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp
