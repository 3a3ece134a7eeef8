// The DRA DaemonSet's liveness and startup probes, run as kubelet runs them:
// the exec command read from manifests/hcu-device-plugin-dra.yaml, with the
// built hcuctl, in the container's environment (KUBELET_PLUGINS_DIR and
// KUBELET_REGISTRY_DIR, as the chart sets them for a moved kubelet), against
// the REAL hcu-dp-daemon --strategy=dra with metrics off. It passes while the
// driver serves, fails within its timeout while the daemon is frozen
// (SIGSTOP: the hang a liveness probe exists for), passes again after
// SIGCONT, and fails once the daemon is gone.
#include <signal.h>
#include <yaml-cpp/yaml.h>

#include <boost/test/unit_test.hpp>
#include <chrono>
#include <string>
#include <vector>

#include "dra_daemon/dra_daemon_node.h"
#include "testing/testutil.h"

namespace hcudp::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// The exec command of `probe` of the DRA DaemonSet's container, and its
// timeoutSeconds.
struct ProbeSpec {
  std::vector<std::string> command;
  int timeout_seconds = 1;
};

ProbeSpec ManifestProbe(const std::string& probe) {
  ProbeSpec out;
  for (const YAML::Node& doc :
       YAML::LoadAllFromFile(SourcePath("manifests/hcu-device-plugin-dra.yaml"))) {
    if (!doc["kind"] || doc["kind"].as<std::string>() != "DaemonSet") continue;
    const YAML::Node p = doc["spec"]["template"]["spec"]["containers"][0][probe];
    BOOST_REQUIRE_MESSAGE(p && p["exec"] && p["exec"]["command"], "no exec " << probe);
    for (const YAML::Node& a : p["exec"]["command"]) out.command.push_back(a.as<std::string>());
    if (p["timeoutSeconds"]) out.timeout_seconds = p["timeoutSeconds"].as<int>();
  }
  BOOST_REQUIRE_MESSAGE(!out.command.empty() && out.command[0] == "hcuctl",
                        probe << " is not an hcuctl command");
  return out;
}

struct ProbeRun {
  RunResult result;
  milliseconds took{0};
};

ProbeRun RunProbe(DraDaemonNode& n, const ProbeSpec& p) {
  std::vector<std::string> argv = p.command;
  argv[0] = BinaryPath("hcuctl/hcuctl");
  const auto start = std::chrono::steady_clock::now();
  ProbeRun run{Run(argv, {"KUBELET_PLUGINS_DIR=" + n.plugins_dir(),
                          "KUBELET_REGISTRY_DIR=" + n.registry_dir()}),
               milliseconds(0)};
  run.took = std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - start);
  return run;
}

BOOST_AUTO_TEST_SUITE(deploy_dra_probe)

BOOST_AUTO_TEST_CASE(liveness_probe_follows_the_real_daemon, *boost::unit_test::timeout(90)) {
  const ProbeSpec liveness = ManifestProbe("livenessProbe");
  const ProbeSpec startup = ManifestProbe("startupProbe");
  BOOST_TEST((startup.command == liveness.command));

  DraDaemonNode n("demo/nodes/k100ai-8.yaml", {"--pulse=0"});
  // Before the daemon serves: the startup probe fails (and does not hang).
  ProbeRun before = RunProbe(n, startup);
  BOOST_TEST(before.result.exit_code == 1, before.result.out << before.result.err);

  n.Start();  // registered with the fake kubelet
  ProbeRun ok = RunProbe(n, liveness);
  BOOST_TEST(ok.result.exit_code == 0, ok.result.out << ok.result.err);
  BOOST_TEST(ok.result.out.find("v1 NodePrepareResources answered") != std::string::npos,
             ok.result.out);
  BOOST_TEST(ok.result.out.find("GetInfo: dra.hygon.com at " + n.plugins_dir() +
                                "/dra.hygon.com/dra.sock") != std::string::npos,
             ok.result.out);
  BOOST_TEST(ok.took.count() < liveness.timeout_seconds * 1000);

  // Frozen: every call times out, and the probe ends within its timeout.
  BOOST_REQUIRE(n.h().daemon().Signal(SIGSTOP));
  ProbeRun frozen = RunProbe(n, liveness);
  BOOST_REQUIRE(n.h().daemon().Signal(SIGCONT));
  BOOST_TEST(frozen.result.exit_code == 1, frozen.result.out << frozen.result.err);
  BOOST_TEST(frozen.took.count() < liveness.timeout_seconds * 1000,
             "the probe took " << frozen.took.count() << " ms");
  ProbeRun again = RunProbe(n, liveness);
  BOOST_TEST(again.result.exit_code == 0, again.result.out << again.result.err);

  // Gone: the sockets no longer answer.
  n.StopDaemon();
  ProbeRun gone = RunProbe(n, liveness);
  BOOST_TEST(gone.result.exit_code == 1, gone.result.out << gone.result.err);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp::testing
