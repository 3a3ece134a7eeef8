// Card health from RSMI event notification, on --backend=host with the
// stand-in librocm_smi64 (test/stub_vendor): the health source changes its
// verdict, the test raises an RSMI event, and the change must reach
// ListAndWatch although --pulse=0 leaves nothing else to look
// (issue 15 item 4, DESIGN.md §10). Without event support the daemon says so
// and the poll carries on. Run with HCUDP_TEST_BACKEND=host (CMake sets it).
#include <boost/test/unit_test.hpp>
#include <cstdio>
#include <thread>

#include "daemon_bounds/bounds_util.h"
#include "integration/daemon_harness.h"

namespace hcudp::testing {
namespace {

using SteadyClock = std::chrono::steady_clock;

const char kHcu[] = "hygon.com/hcu";
constexpr int kRsmiEvtGpuPreReset = 3;
constexpr int kRsmiEvtGpuPostReset = 4;

std::string HealthOf(const std::vector<v1beta1::Device>& devices, const std::string& id) {
  for (const auto& d : devices) {
    if (d.id() == id) return d.health();
  }
  return "<absent>";
}

// Waits (deadline `timeout`) until device `id` of hygon.com/hcu reports `health`.
bool WaitHealth(DaemonHarness& h, const std::string& id, const std::string& health,
                milliseconds timeout) {
  return h.kubelet()
      .WaitForDevices(
          kHcu, [&](const std::vector<v1beta1::Device>& d) { return HealthOf(d, id) == health; },
          timeout)
      .has_value();
}

BOOST_AUTO_TEST_SUITE(card_events)

// Waits until the stand-in library holds the daemon's event subscription at
// `gate` (the library creates <gate>.entered when the call reaches it).
void RequireHeldAtGate(const std::string& gate) {
  const auto deadline = SteadyClock::now() + kRegisterTimeout;
  while (!PathExists(gate + ".entered")) {
    BOOST_REQUIRE_MESSAGE(SteadyClock::now() < deadline, "the daemon never subscribed to events");
    std::this_thread::sleep_for(milliseconds(10));
  }
}

// A host-backend daemon (--pulse=0) started on k100ai-8 whose event
// subscription of the first look the stand-in library holds at `gate` until
// that file is removed.
struct DaemonHeldAtEventInit {
  DaemonHeldAtEventInit() {
    WriteFile(gate, "");
    WriteFile(control, "rsmi_event_init_gate=" + gate + "\n");
    h.Start();
    RequireHeldAtGate(gate);
  }
  TempDir dir;
  const std::string control = dir.Join("control");
  const std::string gate = dir.Join("gate");
  DaemonHarness h{"demo/nodes/k100ai-8.yaml", {"--pulse=0"}, {"HCUDP_STUB_CONTROL=" + control}};
};

BOOST_AUTO_TEST_CASE(an_rsmi_event_brings_a_health_change_to_list_and_watch_without_a_pulse) {
  BOOST_REQUIRE_MESSAGE(UsingHostBackend(), "run with HCUDP_TEST_BACKEND=host");
  TempDir dir;
  const std::string control = dir.Join("control");
  WriteFile(control, "");
  DaemonHarness h("demo/nodes/k100ai-8.yaml", {"--pulse=0"}, {"HCUDP_STUB_CONTROL=" + control});
  h.Start();
  auto first = h.RequireRegistered(kHcu);
  const std::string card2 = K100Bdfs()[2];
  BOOST_REQUIRE_EQUAL(HealthOf(first.devices, card2), "Healthy");
  BOOST_REQUIRE(h.daemon().WaitForLog("card health events: on", kRegisterTimeout));

  // hy-smi now says Error for card 2; the driver reports a reset starting.
  WriteFile(control, "hysmi_word=2:Error\nrsmi_event=1:2:" + std::to_string(kRsmiEvtGpuPreReset) +
                         ":reset requested\n");
  const auto raised = SteadyClock::now();
  BOOST_TEST(WaitHealth(h, card2, "Unhealthy", kHealthTimeout));
  const auto took = std::chrono::duration_cast<milliseconds>(SteadyClock::now() - raised);
  BOOST_TEST_MESSAGE("event to Unhealthy in ListAndWatch: " << took.count() << " ms");
  BOOST_TEST(h.daemon().WaitForLog("GPU_PRE_RESET", milliseconds(1000)));
  // Only card 2.
  auto now = h.kubelet().Snapshot(kHcu);
  BOOST_REQUIRE(now.has_value());
  for (size_t i = 0; i < K100Bdfs().size(); ++i) {
    if (i != 2) BOOST_TEST(HealthOf(now->devices, K100Bdfs()[i]) == "Healthy", K100Bdfs()[i]);
  }

  // The reset ends: hy-smi is happy again, and the post-reset event says so.
  WriteFile(control, "rsmi_event=2:2:" + std::to_string(kRsmiEvtGpuPostReset) + "\n");
  BOOST_TEST(WaitHealth(h, card2, "Healthy", kHealthTimeout));

  // The event thread stops within the shutdown bound (DESIGN.md §3: 5 s).
  const auto stop_start = SteadyClock::now();
  ExitStatus exit = h.daemon().Stop(seconds(5));
  BOOST_TEST(exit.exited);
  BOOST_TEST(exit.code == 0);
  BOOST_TEST((SteadyClock::now() - stop_start < seconds(2)));
}

// A card that fails while the daemon subscribes to card events must not be
// missed. The driver queues an event only on the event files open when it
// happens (the stub drops an event raised before its card is open), and
// with --pulse=0 nothing else looks: the daemon subscribes before its first
// look. Before, it looked first and subscribed after, and card 2, failing in
// between, stayed Healthy for good.
BOOST_AUTO_TEST_CASE(a_card_failing_while_the_daemon_subscribes_is_not_missed) {
  BOOST_REQUIRE(UsingHostBackend());
  DaemonHeldAtEventInit held;
  const std::string& control = held.control;
  const std::string& gate = held.gate;
  DaemonHarness& h = held.h;
  // Card 2 fails before its event file is open.
  WriteFile(control, "rsmi_event_init_gate=" + gate + "\nhysmi_word=2:Error\nrsmi_event=1:2:" +
                         std::to_string(kRsmiEvtGpuPreReset) + ":reset requested\n");
  BOOST_REQUIRE_EQUAL(std::remove(gate.c_str()), 0);
  h.RequireRegistered(kHcu);
  BOOST_REQUIRE(h.daemon().WaitForLog("card health events: on", kRegisterTimeout));
  BOOST_TEST(WaitHealth(h, K100Bdfs()[2], "Unhealthy", kHealthTimeout));
}

// A vendor call that blocks during start-up (here the event subscription of
// the first look; on a node, the library waiting for the driver, minutes by
// design) must not hold up SIGTERM: the DaemonSet's pod is deleted while the
// driver is not live, and the daemon exits 0 within 5 s, not when the call
// returns (the gate holds it 10 s).
BOOST_AUTO_TEST_CASE(sigterm_while_a_vendor_call_blocks_at_start_up_exits_within_five_seconds) {
  BOOST_REQUIRE(UsingHostBackend());
  DaemonHeldAtEventInit held;
  const std::string& gate = held.gate;
  DaemonHarness& h = held.h;
  CheckSigtermExit(h.daemon(), "a vendor call blocking at start-up");
  BOOST_TEST(h.PluginSockets().empty(), "sockets left behind");
  std::remove(gate.c_str());
}

// SIGTERM while a look at the node waits on the vendor library (hymgr
// unreachable: every DMI query answers 32 and is retried with backoff,
// seconds per call and many calls per look): the daemon still exits 0
// within 5 s.
BOOST_AUTO_TEST_CASE(sigterm_while_a_look_waits_on_an_unreachable_hymgr_exits_within_five_seconds) {
  BOOST_REQUIRE(UsingHostBackend());
  TempDir dir;
  const std::string control = dir.Join("control");
  WriteFile(control, "");
  DaemonHarness h("demo/nodes/k100ai-8.yaml", {"--pulse=1", "--log-level=1"},
                  {"HCUDP_STUB_CONTROL=" + control});
  h.Start();
  h.RequireRegistered(kHcu);
  WriteFile(control, "dmi_fail_count=-1\ndmi_fail_code=32\n");
  BOOST_REQUIRE_MESSAGE(h.daemon().WaitForLog("retrying in 800 ms", kRegisterTimeout),
                        "no look met the unreachable hymgr:\n"
                            << h.daemon().Log());
  CheckSigtermExit(h.daemon(), "a look waiting on an unreachable hymgr");
  BOOST_TEST(h.PluginSockets().empty(), "sockets left behind");
}

BOOST_AUTO_TEST_CASE(without_event_support_the_daemon_says_so_and_the_poll_carries_health) {
  BOOST_REQUIRE(UsingHostBackend());
  TempDir dir;
  const std::string control = dir.Join("control");
  WriteFile(control, "rsmi_events=unsupported\n");
  DaemonHarness h("demo/nodes/k100ai-8.yaml", {"--pulse=1"}, {"HCUDP_STUB_CONTROL=" + control});
  h.Start();
  h.RequireRegistered(kHcu);
  BOOST_TEST(h.daemon().WaitForLog("card health events: off", kRegisterTimeout));
  WriteFile(control, "rsmi_events=unsupported\nhysmi_word=1:Error\n");
  BOOST_TEST(WaitHealth(h, K100Bdfs()[1], "Unhealthy", kHealthTimeout));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp::testing
