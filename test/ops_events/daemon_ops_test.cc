// The real hcu-dp-daemon with --events and --node-labels (--pulse=0, so
// every change arrives as a node-file event): a card fault injected in the
// SimNode file shows as an HCUUnhealthy Event in the fake API server and
// recovers as HCUHealthy; the Node gets our labels; the features.d file
// follows an inventory change; SIGTERM is not held up by a silent API server.
#include <rapidjson/document.h>

#include <boost/test/unit_test.hpp>
#include <chrono>
#include <csignal>
#include <thread>

#include "fake_apiserver/fake_apiserver_process.h"
#include "hcudp/kube_ops.h"
#include "integration/daemon_harness.h"

namespace hcudp::testing {
namespace {

using SteadyClock = std::chrono::steady_clock;

constexpr char kEvents[] = "/apis/events.k8s.io/v1/namespaces/default/events";
constexpr char kCard3[] = "0000:69:00.0";  // k100ai-8, index 3
constexpr milliseconds kDeadline{10000};

bool WaitFor(const std::function<bool()>& done, milliseconds timeout = kDeadline) {
  const auto deadline = SteadyClock::now() + timeout;
  while (!done()) {
    if (SteadyClock::now() >= deadline) return false;
    std::this_thread::sleep_for(milliseconds(20));
  }
  return true;
}

// "reason|type|note" of every stored event about `node`.
std::vector<std::string> EventsAbout(const FakeApiServer& api, const std::string& node) {
  rapidjson::Document d;
  const std::string body = api.MustRequest("GET", kEvents);
  d.Parse(body.c_str());
  std::vector<std::string> out;
  if (!d.IsObject() || !d.HasMember("items")) return out;
  for (const auto& e : d["items"].GetArray()) {
    if (std::string(e["regarding"]["name"].GetString()) != node) continue;
    out.push_back(std::string(e["reason"].GetString()) + "|" + e["type"].GetString() + "|" +
                  e["note"].GetString());
  }
  return out;
}

bool HasEvent(const FakeApiServer& api, const std::string& reason, const std::string& bdf) {
  for (const std::string& e : EventsAbout(api, "n1")) {
    if (e.rfind(reason + "|", 0) == 0 && e.find(bdf) != std::string::npos) return true;
  }
  return false;
}

std::map<std::string, std::string> NodeLabelsOf(const FakeApiServer& api) {
  rapidjson::Document d;
  const std::string body = api.MustRequest("GET", "/api/v1/nodes/n1");
  d.Parse(body.c_str());
  std::map<std::string, std::string> out;
  if (d.IsObject() && d["metadata"].HasMember("labels")) {
    for (const auto& m : d["metadata"]["labels"].GetObject()) {
      out[m.name.GetString()] = m.value.GetString();
    }
  }
  return out;
}

BOOST_AUTO_TEST_SUITE(daemon_ops)

BOOST_AUTO_TEST_CASE(card_fault_becomes_an_event_and_labels_reach_the_node) {
  FakeApiServer api;
  api.MustRequest("POST", "/api/v1/nodes", R"({"metadata":{"name":"n1","labels":{"zone":"a"}}})");
  DaemonHarness h("demo/nodes/k100ai-8.yaml",
                  {"--pulse=0", "--events=true", "--node-labels=node", "--node-name=n1",
                   "--kubeconfig=" + api.kubeconfig_path()});
  h.Start();
  h.RequireRegistered("hygon.com/hcu");
  BOOST_REQUIRE_MESSAGE(WaitFor([&] { return NodeLabelsOf(api).count("hygon.com/hcu.count"); }),
                        h.daemon().Log());
  auto labels = NodeLabelsOf(api);
  BOOST_TEST(labels.at("hygon.com/hcu.count") == "8");
  BOOST_TEST(labels.at("hygon.com/hcu.name") == "K100_AI");
  BOOST_TEST(labels.at("zone") == "a");

  const auto fault_at = SteadyClock::now();
  h.SetCardHealth(3, "Unhealthy");
  BOOST_REQUIRE_MESSAGE(WaitFor([&] { return HasEvent(api, "HCUUnhealthy", kCard3); }),
                        h.daemon().Log());
  BOOST_TEST_MESSAGE(
      "HCUUnhealthy stored "
      << std::chrono::duration_cast<milliseconds>(SteadyClock::now() - fault_at).count()
      << " ms after the fault");
  for (const std::string& e : EventsAbout(api, "n1")) {
    if (e.rfind("HCUUnhealthy|", 0) == 0) {
      BOOST_TEST(
          e.find("|Warning|card 0000:69:00.0 (index 3, K100_AI) is Unhealthy") != std::string::npos,
          e);
    }
  }
  h.SetCardHealth(3, "Healthy");
  BOOST_REQUIRE_MESSAGE(WaitFor([&] { return HasEvent(api, "HCUHealthy", kCard3); }),
                        h.daemon().Log());
  BOOST_TEST(EventsAbout(api, "n1").size() == 2u);

  // A silent API server: the next event's call (the first HCUUnhealthy
  // again, so a PATCH making it a series) never gets an answer, and SIGTERM
  // must still end the daemon within the 5 s bound.
  api.NeverAnswer("", "/events");
  api.ClearRequests();
  h.SetCardHealth(3, "Unhealthy");
  BOOST_REQUIRE(WaitFor([&] {
    for (const FakeRequest& r : api.Requests()) {
      if (r.method == "PATCH" && r.path.rfind(kEvents, 0) == 0) return true;
    }
    return false;
  }));
  const auto term_at = SteadyClock::now();
  BOOST_REQUIRE(h.daemon().Signal(SIGTERM));
  auto status = h.daemon().WaitForExit(milliseconds(5000));
  const auto took = std::chrono::duration_cast<milliseconds>(SteadyClock::now() - term_at).count();
  BOOST_TEST_MESSAGE("exit after SIGTERM with an event call in flight: " << took << " ms");
  BOOST_REQUIRE_MESSAGE(status.has_value(), "no exit 5 s after SIGTERM:\n" << h.daemon().Log());
  BOOST_TEST(status->exited);
  BOOST_TEST(status->code == 0, h.daemon().Log());
  api.ClearFaults();
}

// Events and labels never run on the Allocate path: with the API server
// accepting every request and answering none (an event POST and the label
// publisher's GET both hang in it), Allocates still answer at once.
BOOST_AUTO_TEST_CASE(allocate_answers_fast_while_the_api_server_hangs) {
  FakeApiServer api;
  api.MustRequest("POST", "/api/v1/nodes", R"({"metadata":{"name":"n1"}})");
  DaemonHarness h("demo/nodes/k100ai-8.yaml",
                  {"--pulse=0", "--events=true", "--node-labels=node", "--node-name=n1",
                   "--kubeconfig=" + api.kubeconfig_path()});
  h.Start();
  const ResourceSnapshot snapshot = h.RequireRegistered("hygon.com/hcu");
  BOOST_REQUIRE(!snapshot.devices.empty());
  const std::string device = snapshot.devices.front().id();
  BOOST_REQUIRE_MESSAGE(WaitFor([&] { return NodeLabelsOf(api).count("hygon.com/hcu.count"); }),
                        h.daemon().Log());

  api.NeverAnswer();
  api.ClearRequests();
  h.SetCardHealth(3, "Unhealthy");  // an HCUUnhealthy POST
  h.EditNode([](YAML::Node& node) { node["driverVersion"] = "6.3.28-V1.3.0"; });  // a label GET
  BOOST_REQUIRE_MESSAGE(WaitFor([&] {
                          const auto log = api.Requests();
                          return CountRequests(log, "POST", kEvents) >= 1 &&
                                 CountRequests(log, "GET", "/api/v1/nodes/n1") >= 1;
                        }),
                        h.daemon().Log());
  int64_t worst_us = 0;
  for (int i = 0; i < 50; ++i) {
    v1beta1::AllocateResponse response;
    const auto t0 = SteadyClock::now();
    grpc::Status st = h.kubelet().Allocate("hygon.com/hcu", {{device}}, &response);
    const int64_t us =
        std::chrono::duration_cast<std::chrono::microseconds>(SteadyClock::now() - t0).count();
    BOOST_REQUIRE_MESSAGE(st.ok(), st.error_message());
    worst_us = std::max(worst_us, us);
  }
  BOOST_TEST_MESSAGE("50 Allocates with the API server hanging: worst " << worst_us << " us");
  BOOST_TEST(worst_us < 500000);
  // Both calls were still hanging: nothing was answered meanwhile.
  const auto log = api.Requests();
  BOOST_TEST(CountRequests(log, "PATCH", "/api/v1/nodes/n1") == 0);
  api.ClearFaults();
}

BOOST_AUTO_TEST_CASE(nfd_file_follows_an_inventory_change) {
  TempDir dir;
  DaemonHarness h("demo/nodes/k100ai-8.yaml",
                  {"--pulse=0", "--node-labels=nfd", "--nfd-features-dir=" + dir.Join("fd")});
  h.Start();
  h.RequireRegistered("hygon.com/hcu");
  const std::string file = dir.Join("fd/hcu-device-plugin");
  BOOST_REQUIRE_MESSAGE(WaitFor([&] { return PathExists(file); }), h.daemon().Log());
  BOOST_TEST(ReadFile(file).find("\nhygon.com/hcu.count=8\n") != std::string::npos);

  // A card leaves the node: the file says 7 within a second.
  const auto change_at = SteadyClock::now();
  h.EditNode([](YAML::Node& node) {
    YAML::Node cards = node["cards"];
    YAML::Node kept(YAML::NodeType::Sequence);
    for (size_t i = 0; i + 1 < cards.size(); ++i) kept.push_back(cards[i]);
    node["cards"] = kept;
  });
  BOOST_REQUIRE_MESSAGE(WaitFor([&] {
                          return ReadFile(file).find("\nhygon.com/hcu.count=7\n") !=
                                 std::string::npos;
                        }),
                        h.daemon().Log());
  const auto ms = std::chrono::duration_cast<milliseconds>(SteadyClock::now() - change_at).count();
  BOOST_TEST_MESSAGE("label file rewritten " << ms << " ms after the inventory change");
  BOOST_TEST(ms < 1000);
  // No API server was configured or needed.
  BOOST_TEST(h.daemon().Log().find("events on") == std::string::npos);
}

// A driver upgrade with the same cards changes no resource (kubelet sees
// nothing new), but the driver-version label must follow it.
BOOST_AUTO_TEST_CASE(driver_upgrade_with_the_same_cards_republishes_the_labels) {
  TempDir dir;
  DaemonHarness h("demo/nodes/k100ai-8.yaml",
                  {"--pulse=0", "--node-labels=nfd", "--nfd-features-dir=" + dir.Join("fd")});
  h.Start();
  h.RequireRegistered("hygon.com/hcu");
  const std::string file = dir.Join("fd/hcu-device-plugin");
  BOOST_REQUIRE_MESSAGE(WaitFor([&] {
                          return PathExists(file) &&
                                 ReadFile(file).find(
                                     "\nhygon.com/hcu.driver-version=6.3.27-V1.2.5"
                                     "\n") != std::string::npos;
                        }),
                        h.daemon().Log());
  h.EditNode([](YAML::Node& node) { node["driverVersion"] = "6.3.28-V1.3.0"; });
  BOOST_REQUIRE_MESSAGE(WaitFor([&] {
                          return ReadFile(file).find(
                                     "\nhygon.com/hcu.driver-version=6.3.28-V1.3.0"
                                     "\n") != std::string::npos;
                        }),
                        ReadFile(file) << h.daemon().Log());
}

BOOST_AUTO_TEST_CASE(events_auto_without_credentials_stays_off) {
  DaemonHarness h("demo/nodes/k100ai-8.yaml",
                  {"--pulse=0", "--events=auto", "--kubeconfig=/nonexistent/kubeconfig"});
  h.Start();
  h.RequireRegistered("hygon.com/hcu");
  BOOST_TEST(h.daemon().WaitForLog("--events=auto: running without Kubernetes Events: ",
                                   milliseconds(5000)),
             h.daemon().Log());
}

// Credential files that do not work (a kubeconfig whose token file is
// missing): auto serves, with one warning naming the file; true is a
// one-line start-up error naming it.
BOOST_AUTO_TEST_CASE(events_auto_with_bad_credential_files_runs_without_them) {
  FakeApiServer api;
  TempDir dir;
  // The fake's kubeconfig with its inline token turned into a token file
  // that does not exist.
  std::string kubeconfig = ReadFile(api.kubeconfig_path());
  const size_t at = kubeconfig.find("token: ");
  BOOST_REQUIRE_MESSAGE(at != std::string::npos, kubeconfig);
  const std::string missing = dir.Join("no-such-token");
  kubeconfig.replace(at, kubeconfig.find('\n', at) - at, "tokenFile: " + missing);
  WriteFile(dir.Join("kubeconfig"), kubeconfig);

  DaemonHarness h("demo/nodes/k100ai-8.yaml", {"--pulse=0", "--events=auto", "--node-name=n1",
                                               "--kubeconfig=" + dir.Join("kubeconfig")});
  h.Start();
  h.RequireRegistered("hygon.com/hcu");
  BOOST_REQUIRE_MESSAGE(
      h.daemon().WaitForLog("--events=auto: running without Kubernetes Events", milliseconds(5000)),
      h.daemon().Log());
  const std::string log = h.daemon().Log();
  const size_t warning = log.find("--events=auto: running without Kubernetes Events");
  BOOST_TEST(log.find(missing, warning) != std::string::npos, log);
  BOOST_TEST(log.find("--events=auto", warning + 1) == std::string::npos, "one warning:\n" << log);
  BOOST_TEST(log.find("events on") == std::string::npos, log);

  RunResult r =
      Run({DaemonBinary(), "--backend=sim", "--sim-node=" + SourcePath("demo/nodes/k100ai-8.yaml"),
           "--host-root=" + dir.Join("root"), "--device-plugin-path=" + dir.Join("dp"),
           "--events=true", "--node-name=n1", "--kubeconfig=" + dir.Join("kubeconfig")});
  BOOST_TEST(r.exit_code == 2, r.err);
  BOOST_TEST(r.err.find("--events=true: ") != std::string::npos, r.err);
  BOOST_TEST(r.err.find(missing) != std::string::npos, r.err);
}

BOOST_AUTO_TEST_CASE(bad_flags_are_one_line_start_up_errors) {
  struct Case {
    std::vector<std::string> flags;
    std::string says;
  };
  const std::vector<Case> cases = {
      {{"--node-labels=label"}, "--node-labels: \"label\" is not one of off, nfd, node"},
      {{"--events=yes"}, "--events: \"yes\" is not one of auto, true, false"},
      {{"--node-labels=node"}, "--node-name: required with --node-labels=node"},
      {{"--events=true"}, "--node-name: required with --events=true"},
      {{"--events=true", "--node-name=n1", "--kubeconfig=/nonexistent/kubeconfig"},
       "--events=true: "},
      {{"--node-labels=node", "--node-name=n1", "--kubeconfig=/nonexistent/kubeconfig"},
       "--node-labels=node: "},
  };
  for (const Case& c : cases) {
    TempDir dir;
    std::vector<std::string> argv = {
        DaemonBinary(), "--backend=sim", "--sim-node=" + SourcePath("demo/nodes/k100ai-8.yaml"),
        "--host-root=" + dir.Join("root"), "--device-plugin-path=" + dir.Join("plugins")};
    argv.insert(argv.end(), c.flags.begin(), c.flags.end());
    RunResult r = Run(argv);
    BOOST_TEST(r.exit_code == 2, c.says << ": " << r.err);
    BOOST_TEST(r.err.find(c.says) != std::string::npos, r.err);
  }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp::testing
