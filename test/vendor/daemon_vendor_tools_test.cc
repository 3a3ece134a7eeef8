// hcu-dp-daemon --backend=host and the vendor runtime: how often hy-smi
// runs, that a hung one never holds up a shutdown, and that DMI lost for
// the life of the process ends the daemon (exit 1) after a bounded wait.
#include <signal.h>

#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <filesystem>
#include <functional>
#include <sstream>
#include <thread>

#include "fake_kubelet/daemon_process.h"
#include "stub_node.h"
#include "testing/testutil.h"

namespace hcudp::testing {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using std::chrono::seconds;
using SteadyClock = std::chrono::steady_clock;

bool WaitFor(const std::function<bool()>& done, milliseconds timeout) {
  const auto deadline = SteadyClock::now() + timeout;
  while (SteadyClock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(milliseconds(20));
  }
  return done();
}

size_t Lines(const std::string& path) {
  if (!PathExists(path)) return 0;
  const std::string text = ReadFile(path);
  return static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
}

// A daemon on a stand-in node, its hy-smi runs counted in a file.
class HostDaemon {
 public:
  explicit HostDaemon(const std::string& pulse)
      : node_(SourcePath("demo/nodes/k100ai-8.yaml")), runs_(dir_.Join("hy-smi-runs")) {
    fs::create_directories(dir_.Join("plugins"));
    node_.Control("hysmi_count=" + runs_ + "\n");
    const std::string err = daemon_.Start(
        {BinaryPath("hcu-dp-daemon/hcu-dp-daemon"), "--backend=host", "--strategy=hcu",
         "--hyhal-path=" + StubNode::StubHyhal(), "--host-root=" + node_.host_root(),
         "--device-plugin-path=" + dir_.Join("plugins") + "/", "--pulse=" + pulse},
        dir_.Join("daemon.log"));
    BOOST_REQUIRE_MESSAGE(err.empty(), err);
    BOOST_REQUIRE_MESSAGE(WaitFor([&] { return !Sockets().empty(); }, seconds(15)),
                          "no plugin socket; log:\n"
                              << daemon_.Log());
  }
  ~HostDaemon() { daemon_.Stop(seconds(5)); }

  std::vector<std::string> Sockets() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir_.Join("plugins"))) {
      if (e.path().filename().string().rfind("hygon.com_", 0) == 0) out.push_back(e.path());
    }
    return out;
  }
  size_t Runs() const { return Lines(runs_); }
  StubNode& node() { return node_; }
  DaemonProcess& daemon() { return daemon_; }
  const std::string& runs_file() const { return runs_; }
  const std::string& host_root() const { return node_.host_root(); }
  std::string Hcuctl(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {BinaryPath("hcuctl/hcuctl"),
                                     "--device-plugin-path=" + dir_.Join("plugins") + "/"};
    argv.insert(argv.end(), args.begin(), args.end());
    RunResult r = Run(argv);
    BOOST_CHECK_MESSAGE(r.exit_code == 0, r.out + r.err);
    return r.out;
  }

 private:
  TempDir dir_;
  StubNode node_;
  std::string runs_;
  DaemonProcess daemon_;
};

BOOST_AUTO_TEST_SUITE(DaemonAndVendorTools)

// Issue 10.7: one hy-smi run per look at the node (start-up here), none on
// the Allocate path.
BOOST_AUTO_TEST_CASE(HySmiRunsOncePerLookAndNeverForAnAllocate) {
  HostDaemon d("0");
  BOOST_CHECK_EQUAL(d.Runs(), 1u);
  for (int i = 0; i < 5; ++i) {
    d.Hcuctl({"allocate", "--resource=hygon.com/hcu", "--ids=0000:09:00.0"});
  }
  BOOST_CHECK_EQUAL(d.Runs(), 1u);
}

// Issue 10.2: a hung hy-smi that even ignores SIGTERM does not hold up the
// daemon's SIGTERM (exit 0 within 5 s); the tool is killed.
BOOST_AUTO_TEST_CASE(SigtermEndsTheDaemonWithin5sWhileHySmiHangs) {
  HostDaemon d("1");
  const size_t before = d.Runs();
  d.node().Control("hysmi_count=" + d.runs_file() + "\nhysmi=hang\n");
  // The next pulse starts the hung hy-smi (it logs its run first).
  BOOST_REQUIRE(WaitFor([&] { return d.Runs() > before; }, seconds(5)));
  const auto start = SteadyClock::now();
  BOOST_REQUIRE(d.daemon().Signal(SIGTERM));
  std::optional<ExitStatus> st = d.daemon().WaitForExit(seconds(5));
  BOOST_REQUIRE_MESSAGE(st.has_value(), "still running 5 s after SIGTERM; log:\n"
                                            << d.daemon().Log());
  BOOST_CHECK_MESSAGE(st->exited && st->code == 0, d.daemon().Log());
  BOOST_TEST_MESSAGE(
      "exited " << std::chrono::duration_cast<milliseconds>(SteadyClock::now() - start).count()
                << " ms after SIGTERM");
}

// Issue 11.4: libhydmi answers 13 (NOT_INITIALIZED) for the rest of the
// process once it lost hymgr. With --pulse=0 a node event makes the look
// that meets it; the daemon keeps serving its last good state for the
// restart grace, then leaves like on SIGTERM (sockets removed) with exit 1
// and one ERROR line naming the cause and the fix.
BOOST_AUTO_TEST_CASE(DmiLostForGoodEndsTheDaemonWithExitOneAfterTheGrace) {
  HostDaemon d("0");
  d.node().Control("dmi_fail_count=-1\ndmi_fail_code=13\n");
  // A node event (a file in the watched vdev directory) makes a look.
  WriteFile(d.host_root() + "/etc/vdev/poke", "x");
  BOOST_REQUIRE_MESSAGE(
      WaitFor([&] { return d.daemon().Log().find("only a restart recovers") != std::string::npos; },
              seconds(10)),
      "the look never met DMI's 13; log:\n"
          << d.daemon().Log());
  const auto seen = SteadyClock::now();
  // Meanwhile the last good state is served.
  BOOST_CHECK(d.daemon().Running());
  BOOST_CHECK_EQUAL(d.Sockets().size(), 1u);
  d.Hcuctl({"allocate", "--resource=hygon.com/hcu", "--ids=0000:09:00.0"});
  std::optional<ExitStatus> st = d.daemon().WaitForExit(seconds(20));
  const auto waited = std::chrono::duration_cast<milliseconds>(SteadyClock::now() - seen);
  BOOST_REQUIRE_MESSAGE(st.has_value(), "still running 20 s after DMI was lost; log:\n"
                                            << d.daemon().Log());
  BOOST_TEST_MESSAGE("exited " << waited.count() << " ms after the first 13");
  BOOST_CHECK_MESSAGE(st->exited && st->code == 1, d.daemon().Log());
  // Not at once: the grace (5 s, less the log's own latency) passed first.
  BOOST_CHECK_GE(waited.count(), 4000);
  BOOST_CHECK_MESSAGE(d.Sockets().empty(), "a plugin socket was left behind");
  const std::string log = d.daemon().Log();
  size_t exit_lines = 0;
  std::istringstream lines(log);
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty() && line[0] == 'E' && line.find("exiting") != std::string::npos &&
        line.find("is the hymgr service running? is /dev/mkfd present and mounted?") !=
            std::string::npos) {
      ++exit_lines;
    }
  }
  BOOST_CHECK_MESSAGE(exit_lines == 1, "want one ERROR line with the cause and fix; log:\n" << log);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp::testing
