// DaemonProcess starts, signals and reaps a child and captures its output.
#include "fake_kubelet/daemon_process.h"

#include <signal.h>

#include <boost/test/unit_test.hpp>

#include "testing/testutil.h"

namespace hcudp::testing {
namespace {

using std::chrono::seconds;

// Waits (up to 5 s) until the child has printed "ready": its trap is installed then, so a
// signal sent afterwards meets the handler and not the shell's default.
bool WaitUntilReady(const DaemonProcess& p) { return p.WaitForLog("ready", seconds(5)); }

BOOST_AUTO_TEST_SUITE(daemon_process)

BOOST_AUTO_TEST_CASE(reports_the_exit_code_and_captures_output) {
  TempDir dir;
  DaemonProcess p;
  BOOST_REQUIRE_EQUAL(p.Start({"/bin/sh", "-c", "echo out; echo \"err $GREETING\" >&2; exit 3"},
                              dir.Join("log"), {"GREETING=hi"}),
                      "");
  auto st = p.WaitForExit(seconds(5));
  BOOST_REQUIRE(st.has_value());
  BOOST_TEST(st->exited);
  BOOST_TEST(st->code == 3);
  BOOST_TEST(p.Log() == "out\nerr hi\n");
}

BOOST_AUTO_TEST_CASE(unset_env_hides_inherited_variables) {
  TempDir dir;
  setenv("HCUDP_DAEMON_PROCESS_TEST", "leaked", 1);
  DaemonProcess p;
  BOOST_REQUIRE_EQUAL(p.Start({"/bin/sh", "-c", "echo \"[$HCUDP_DAEMON_PROCESS_TEST]\""},
                              dir.Join("log"), {}, {"HCUDP_DAEMON_PROCESS_TEST"}),
                      "");
  BOOST_REQUIRE(p.WaitForExit(seconds(5)).has_value());
  BOOST_TEST(p.Log() == "[]\n");
  unsetenv("HCUDP_DAEMON_PROCESS_TEST");
}

BOOST_AUTO_TEST_CASE(stop_sends_sigterm_first) {
  TempDir dir;
  DaemonProcess p;
  BOOST_REQUIRE_EQUAL(
      p.Start({"/bin/sh", "-c", "trap 'exit 0' TERM; echo ready; while :; do sleep 0.01; done"},
              dir.Join("log")),
      "");
  BOOST_REQUIRE(WaitUntilReady(p));
  ExitStatus st = p.Stop(seconds(5));
  BOOST_TEST(st.exited);
  BOOST_TEST(st.code == 0);
  BOOST_TEST(!p.Running());
}

BOOST_AUTO_TEST_CASE(stop_kills_a_child_that_ignores_sigterm) {
  TempDir dir;
  DaemonProcess p;
  BOOST_REQUIRE_EQUAL(
      p.Start({"/bin/sh", "-c", "trap '' TERM; echo ready; while :; do sleep 0.01; done"},
              dir.Join("log")),
      "");
  BOOST_REQUIRE(WaitUntilReady(p));
  ExitStatus st = p.Stop(std::chrono::milliseconds(200));
  BOOST_TEST(!st.exited);
  BOOST_TEST(st.signal == SIGKILL);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp::testing
