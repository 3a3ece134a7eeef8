// Issue 29 item 8: the chart's alerts in a real Prometheus (Debian's
// `prometheus`), scraping the real hcu-dp-daemon on a simulated node.
//
// The rules are the shipped file's (charts/.../alerts/), with every `for:`
// shortened to 1s so that the test takes seconds, not minutes: the same
// expressions, labels and annotations. The scrape job adds the `node` label
// as the chart's ServiceMonitor does (there from the pod's node name).
// Scrape and evaluation every second, everything on 127.0.0.1 at free ports.
//
// A card turned Unhealthy in the SimNode file fires HCUDeviceUnhealthy,
// seen through Prometheus' own /api/v1/alerts, naming the node and linking
// its runbook; the card healthy again clears it.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <rapidjson/document.h>
#include <sys/socket.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <boost/test/unit_test.hpp>
#include <chrono>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "integration/daemon_harness.h"
#include "ops_metrics/scrape.h"

namespace hcudp::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr char kRules[] = "charts/hcu-device-plugin/alerts/hcu-device-plugin.rules.yaml";
constexpr char kNode[] = "sim-node-1";

// A port on 127.0.0.1 nobody listens on now.
int FreePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  BOOST_REQUIRE(fd >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  BOOST_REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  socklen_t len = sizeof addr;
  BOOST_REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
  ::close(fd);
  return ntohs(addr.sin_port);
}

// The shipped rules with every `for:` set to 1s; nothing else changed.
std::string ShortRules() {
  YAML::Node rules = YAML::LoadFile(std::string(HCUDP_SOURCE_DIR) + "/" + kRules);
  int alerts = 0;
  for (YAML::Node group : rules["groups"]) {
    for (YAML::Node rule : group["rules"]) {
      if (!rule["alert"]) continue;
      ++alerts;
      BOOST_TEST(rule["for"].IsDefined(), rule["alert"].as<std::string>() << " has no for:");
      rule["for"] = "1s";
    }
  }
  BOOST_REQUIRE(alerts > 0);
  YAML::Emitter out;
  out << rules;
  return out.c_str();
}

void WriteText(const std::string& path, const std::string& text) {
  std::ofstream f(path);
  f << text;
  BOOST_REQUIRE(f.good());
}

// A Prometheus scraping 127.0.0.1:`target` with the short rules loaded.
class Prometheus {
 public:
  Prometheus(const TempDir& dir, int target) : port_(FreePort()) {
    WriteText(dir.Join("rules.yaml"), ShortRules());
    WriteText(dir.Join("prometheus.yml"),
              "global:\n"
              "  scrape_interval: 1s\n"
              "  scrape_timeout: 1s\n"
              "  evaluation_interval: 1s\n"
              "rule_files: [rules.yaml]\n"
              "scrape_configs:\n"
              "  - job_name: hcu-device-plugin\n"
              "    static_configs:\n"
              "      - targets: ['127.0.0.1:" +
                  std::to_string(target) +
                  "']\n"
                  "        labels:\n"
                  "          node: " +
                  kNode + "\n");
    const std::string started = process_.Start(
        {"/usr/bin/prometheus", "--config.file=" + dir.Join("prometheus.yml"),
         "--storage.tsdb.path=" + dir.Join("data"),
         "--web.listen-address=127.0.0.1:" + std::to_string(port_), "--log.level=warn"},
        dir.Join("prometheus.log"));
    BOOST_REQUIRE_MESSAGE(started.empty(), started);
    BOOST_REQUIRE_MESSAGE(PollUntil(
                              [&] {
                                auto got = HttpGet(port_, "/-/ready", milliseconds(1000));
                                return got.ok() && got->status == 200;
                              },
                              seconds(30)),
                          "prometheus did not become ready: " << process_.Log());
  }
  ~Prometheus() { process_.Stop(seconds(5)); }

  // The alerts Prometheus holds now: (alertname, state, labels, annotations)
  // as JSON objects of /api/v1/alerts.
  rapidjson::Document Alerts() {
    auto got = HttpGet(port_, "/api/v1/alerts", milliseconds(2000));
    rapidjson::Document doc;
    if (!got.ok() || got->status != 200) return doc;
    doc.Parse(got->body.c_str());
    return doc;
  }

  // The state of `alert` for our node ("pending", "firing"), "" when absent.
  std::string StateOf(const std::string& alert, std::string* summary = nullptr,
                      std::string* runbook = nullptr) {
    rapidjson::Document doc = Alerts();
    if (!doc.IsObject() || !doc.HasMember("data")) return "?";
    for (const auto& a : doc["data"]["alerts"].GetArray()) {
      const auto& labels = a["labels"];
      if (labels["alertname"].GetString() != alert) continue;
      if (!labels.HasMember("node") || std::string(labels["node"].GetString()) != kNode) continue;
      const auto& notes = a["annotations"];
      if (summary && notes.HasMember("summary")) *summary = notes["summary"].GetString();
      if (runbook && notes.HasMember("runbook_url")) *runbook = notes["runbook_url"].GetString();
      return a["state"].GetString();
    }
    return "";
  }

  std::string Log() const { return process_.Log(); }

 private:
  int port_;
  DaemonProcess process_;
};

BOOST_AUTO_TEST_SUITE(prometheus_alerts)

BOOST_AUTO_TEST_CASE(an_unhealthy_card_fires_its_alert_and_recovery_clears_it,
                     *boost::unit_test::timeout(180)) {
  DaemonHarness h("demo/nodes/k100ai-8.yaml", {"--metrics-address=127.0.0.1:0", "--pulse=1"});
  h.Start();
  h.RequireRegistered("hygon.com/hcu");
  BOOST_REQUIRE(h.daemon().WaitForLog("metrics on", kRegisterTimeout));
  const int port = LoggedMetricsPort(h.daemon().Log());
  TempDir dir;
  Prometheus prom(dir, port);

  // Healthy: scraped, and no alert for the node after several evaluations.
  BOOST_REQUIRE_MESSAGE(PollUntil([&] { return prom.Alerts().IsObject(); }, seconds(10)),
                        prom.Log());
  std::this_thread::sleep_for(seconds(4));
  BOOST_TEST(prom.StateOf("HCUDeviceUnhealthy").empty());
  BOOST_TEST(prom.StateOf("HCUPluginNotRegistered").empty());

  h.SetCardHealth(3, "Unhealthy");
  std::string summary;
  std::string runbook;
  BOOST_TEST_REQUIRE(
      PollUntil([&] { return prom.StateOf("HCUDeviceUnhealthy") == "firing"; }, seconds(60)),
      "HCUDeviceUnhealthy did not fire: " << prom.StateOf("HCUDeviceUnhealthy") << "\n"
                                          << prom.Log());
  prom.StateOf("HCUDeviceUnhealthy", &summary, &runbook);
  BOOST_TEST(summary == std::string("Unhealthy HCU devices on ") + kNode);
  BOOST_TEST(runbook == "doc/metrics.md#hcudeviceunhealthy");

  h.SetCardHealth(3, "Healthy");
  BOOST_TEST(PollUntil([&] { return prom.StateOf("HCUDeviceUnhealthy").empty(); }, seconds(60)),
             "HCUDeviceUnhealthy did not clear: " << prom.StateOf("HCUDeviceUnhealthy"));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp::testing
