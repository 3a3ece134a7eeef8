// The DRA install with Events and node labels on (the chart's strategy=dra
// with events=true, the default, and nodeLabels.mode=node) grants what the
// REAL daemon then calls, and nothing more than DESIGN.md sections 9 and 10
// say: every request hcu-dp-daemon --strategy=dra --events=true
// --node-labels=node makes to the fake API server while it starts, labels
// its Node, reports a card going unhealthy, healthy and unhealthy again (an
// Event series: create, then patch) and prepares a claim, mapped to the
// permission the authorizer checks, must be in manifests/rbac-verbs-dra.txt
// plus manifests/rbac-verbs-node-labels.txt (deploy_check.py holds the chart
// to the same two files). Only the daemon's requests are judged: the log is
// emptied after each request the test (or the fake kubelet) makes itself.
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "dra_daemon/dra_daemon_node.h"
#include "dra_prepare/prepare_fixture.h"
#include "rbac_permissions.h"

namespace hcudp::testing {
namespace {

using std::chrono::seconds;

constexpr char kNodePath[] = "/api/v1/nodes/node-a";
constexpr char kEventsPath[] = "/apis/events.k8s.io/v1/namespaces/default/events";

BOOST_AUTO_TEST_SUITE(deploy_dra_ops_rbac)

BOOST_AUTO_TEST_CASE(events_and_node_labels_of_the_dra_daemon_are_granted,
                     *boost::unit_test::timeout(90)) {
  DraDaemonNode n("demo/nodes/k100ai-8.yaml", {"--pulse=0", "--events=true", "--node-labels=node"});
  std::vector<FakeRequest> log;
  auto collect = [&] {
    for (const FakeRequest& r : n.api().Requests()) log.push_back(r);
    n.api().ClearRequests();
  };
  auto wait_for = [&](const std::string& what, const std::function<bool()>& done) {
    BOOST_REQUIRE_MESSAGE(PollUntil(done, std::chrono::milliseconds(10000)),
                          "the daemon never " << what << "\n"
                                              << n.h().daemon().Log());
  };
  // The daemon's requests logged since the last collect: method, path.
  auto count = [&](const std::string& method, const std::string& path) {
    return CountRequests(n.api().Requests(), method, path);
  };

  // First run: the fake kubelet's own wipe of the node's slices (kubelet's
  // permission, not ours) happens before the daemon starts; drop it with the
  // rest of this run, which only labels the node.
  n.Start();
  wait_for("labelled its Node", [&] { return count("PATCH", kNodePath) >= 1; });
  n.StopDaemon();
  // Someone changed one of our labels while the daemon was down: the next
  // run must patch it back.
  n.api().MustRequest("PATCH", kNodePath, R"({"metadata":{"labels":{"hygon.com/hcu.count":"99"}}})",
                      "application/merge-patch+json");
  n.api().ClearRequests();

  // Second run: everything from here on is the daemon's.
  n.StartDaemon();
  n.RequireRegistrations(2);
  wait_for("patched its Node's labels back", [&] { return count("PATCH", kNodePath) >= 1; });
  n.h().SetCardHealth(1, "Unhealthy");
  wait_for("created the HCUUnhealthy event", [&] { return count("POST", kEventsPath) >= 1; });
  n.h().SetCardHealth(1, "Healthy");
  wait_for("created the HCUHealthy event", [&] { return count("POST", kEventsPath) >= 2; });
  n.h().SetCardHealth(1, "Unhealthy");
  wait_for("turned the repeated HCUUnhealthy into a series (PATCH)", [&] {
    for (const FakeRequest& r : n.api().Requests()) {
      if (r.method == "PATCH" && r.path.rfind(std::string(kEventsPath) + "/", 0) == 0) return true;
    }
    return false;
  });
  collect();

  // A claim the scheduler allocated (the test's writes are dropped), then
  // prepared and unprepared by kubelet: the daemon GETs it.
  AllocatedClaim claim = n.CreateAllocatedClaim("c1", ExactRequest("hcu"));
  n.api().ClearRequests();
  n.MustPrepare(claim);
  n.MustUnprepare(claim);
  collect();
  n.StopDaemon();
  collect();

  std::set<Permission> granted = GrantsOf("manifests/rbac-verbs-dra.txt");
  const std::set<Permission> labels = GrantsOf("manifests/rbac-verbs-node-labels.txt");
  granted.insert(labels.begin(), labels.end());
  std::set<Permission> used;
  for (const FakeRequest& r : log) used.insert(PermissionOf(r));
  for (const Permission& p : used) {
    BOOST_TEST(granted.count(p) == 1u, "the DRA daemon with events and node labels needs "
                                           << p.first << " " << p.second
                                           << ", which the DRA install does not grant");
  }
  // What this run is known to need was exercised (an empty log passes the
  // loop above).
  for (const Permission& p : std::set<Permission>{{"events.events.k8s.io", "create"},
                                                  {"events.events.k8s.io", "patch"},
                                                  {"nodes", "get"},
                                                  {"nodes", "patch"},
                                                  {"resourceclaims.resource.k8s.io", "get"},
                                                  {"resourceslices.resource.k8s.io", "list"},
                                                  {"resourceslices.resource.k8s.io", "watch"}}) {
    BOOST_TEST(used.count(p) == 1u, "not exercised: " << p.first << " " << p.second);
  }
  // Node labels need more than the DRA RBAC alone: the chart's
  // nodeLabels.mode=node grant is what covers it.
  BOOST_TEST(GrantsOf("manifests/rbac-verbs-dra.txt").count({"nodes", "patch"}) == 0u);
  BOOST_TEST_MESSAGE(log.size() << " requests of the daemon, " << used.size()
                                << " distinct permissions");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp::testing
