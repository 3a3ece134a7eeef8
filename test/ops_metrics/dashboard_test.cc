// Issue 25: the chart's Grafana dashboard and alert rules query only what
// /metrics exposes. The real hcu-dp-daemon runs on a SimNode in each
// strategy (mixed, mig, hami, dra) and is scraped over HTTP; every series
// name a dashboard query or an alert names must be one of the scraped
// families, and every label it matches or groups by must be one of that
// series' labels (or a target label Prometheus adds). Also in each
// strategy: the per-device health series exist (DRA included), and every
// series is an hcudp_ one.
#include <rapidjson/document.h>
#include <yaml-cpp/yaml.h>

#include <boost/test/unit_test.hpp>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "dra_daemon/dra_daemon_node.h"
#include "integration/hami_node.h"
#include "ops_metrics/scrape.h"

namespace hcudp::testing {
namespace {

// Labels Prometheus adds to every scraped series (the ServiceMonitor's, or
// a static job's), which the dashboard and alerts may select by.
const std::set<std::string> kTargetLabels = {"instance", "job",      "namespace", "pod",
                                             "service",  "endpoint", "container", "node"};

// Series name -> the label names it carries, over every scrape so far.
using Exposed = std::map<std::string, std::set<std::string>>;

void AddScrape(const Exposition& e, Exposed& out) {
  for (const auto& [key, value] : e.samples) {
    const size_t brace = key.find('{');
    std::set<std::string>& labels = out[key.substr(0, brace)];
    if (brace == std::string::npos) continue;
    static const std::regex kLabel(R"(([a-zA-Z_][a-zA-Z0-9_]*)=")");
    const std::string body = key.substr(brace);
    for (std::sregex_iterator it(body.begin(), body.end(), kLabel), end; it != end; ++it) {
      labels.insert((*it)[1]);
    }
  }
}

// The port of the daemon behind `h`, once /metrics answers 200 and `ready`
// holds for a scrape; returns that scrape.
Exposition ScrapeWhen(DaemonHarness& h, const std::function<bool(const Exposition&)>& ready) {
  BOOST_REQUIRE_MESSAGE(h.daemon().WaitForLog("metrics on", kRegisterTimeout), h.daemon().Log());
  const int port = LoggedMetricsPort(h.daemon().Log());
  Exposition last;
  BOOST_REQUIRE_MESSAGE(WaitUntil([&] {
                          auto got = HttpGet(port, "/metrics");
                          if (!got.ok() || got->status != 200) return false;
                          last = Scrape(port);
                          return ready(last);
                        }),
                        "never ready; last scrape: " << last.samples.size() << " series");
  return last;
}

bool Registered(const Exposition& e, const std::string& resource) {
  return e.Get("hcudp_resource_registered", {{"resource", resource}}) == 1.0;
}

// In every strategy: per-device health series for the resource, and only
// hcudp_ families.
void CheckScrape(const std::string& strategy, const Exposition& e, const std::string& resource) {
  BOOST_TEST_CONTEXT(strategy) {
    BOOST_TEST(e.Sum("hcudp_devices", {{"resource", resource}}) > 0);
    BOOST_TEST(e.Sum("hcudp_device_healthy", {{"resource", resource}}) > 0);
    for (const auto& [family, type] : e.types) {
      BOOST_TEST(family.rfind("hcudp_", 0) == 0u, family);
    }
  }
}

Exposed ScrapeEveryStrategy() {
  Exposed exposed;
  {
    DaemonHarness h("demo/nodes/z100l-mixed.yaml", {"--metrics-address=127.0.0.1:0", "--pulse=0"});
    h.Start();
    Exposition e =
        ScrapeWhen(h, [](const Exposition& x) { return Registered(x, "hygon.com/hcu"); });
    CheckScrape("mixed", e, "hygon.com/hcu");
    AddScrape(e, exposed);
  }
  {
    DaemonHarness h("demo/nodes/bw-mig.yaml",
                    {"--strategy=mig", "--metrics-address=127.0.0.1:0", "--pulse=0"});
    h.Start();
    Exposition e = ScrapeWhen(h, [](const Exposition& x) {
      return x.Count("hcudp_resource_registered") > 0 &&
             x.Sum("hcudp_resource_registered") ==
                 static_cast<double>(x.Count("hcudp_resource_registered"));
    });
    std::string resource;
    for (const auto& [key, value] : e.samples) {
      if (key.rfind("hcudp_resource_registered{", 0) == 0) {
        resource = key.substr(key.find('"') + 1, key.rfind('"') - key.find('"') - 1);
      }
    }
    CheckScrape("mig", e, resource);
    AddScrape(e, exposed);
  }
  {
    HamiNode n({"--metrics-address=127.0.0.1:0", "--pulse=0"});
    n.Start();
    Exposition e = ScrapeWhen(n.h(), [](const Exposition& x) { return Registered(x, kHamiCount); });
    CheckScrape("hami", e, kHamiCount);
    AddScrape(e, exposed);
  }
  {
    DraDaemonNode n(kProbeOrder, {"--metrics-address=127.0.0.1:0", "--pulse=0"});
    n.Start();
    Exposition e = ScrapeWhen(n.h(), [](const Exposition& x) {
      return Registered(x, kDraDriver) && x.Count("hcudp_device_healthy") > 0;
    });
    CheckScrape("dra", e, kDraDriver);
    AddScrape(e, exposed);
    n.StopDaemon();
  }
  return exposed;
}

// {where, PromQL} of every dashboard query.
std::vector<std::pair<std::string, std::string>> DashboardQueries() {
  std::ifstream in(SourcePath("charts/hcu-device-plugin/dashboards/hcu-device-plugin.json"));
  std::stringstream text;
  text << in.rdbuf();
  rapidjson::Document doc;
  doc.Parse(text.str().c_str());
  BOOST_REQUIRE_MESSAGE(!doc.HasParseError() && doc.IsObject(), "the dashboard is not JSON");
  std::vector<std::pair<std::string, std::string>> out;
  std::function<void(const rapidjson::Value&)> walk = [&](const rapidjson::Value& panels) {
    for (const auto& p : panels.GetArray()) {
      const std::string title = p.HasMember("title") ? p["title"].GetString() : "?";
      if (p.HasMember("targets")) {
        for (const auto& t : p["targets"].GetArray()) {
          if (t.HasMember("expr")) out.emplace_back("panel " + title, t["expr"].GetString());
        }
      }
      if (p.HasMember("panels")) walk(p["panels"]);
    }
  };
  walk(doc["panels"]);
  return out;
}

std::vector<std::pair<std::string, std::string>> AlertQueries() {
  YAML::Node rules =
      YAML::LoadFile(SourcePath("charts/hcu-device-plugin/alerts/hcu-device-plugin.rules.yaml"));
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& group : rules["groups"]) {
    for (const auto& rule : group["rules"]) {
      out.emplace_back("alert " + rule["alert"].as<std::string>(), rule["expr"].as<std::string>());
    }
  }
  return out;
}

// The series names of `expr`, and the label names it matches or groups by.
void CheckQuery(const std::string& where, const std::string& expr, const Exposed& exposed) {
  BOOST_TEST_CONTEXT(where << ": " << expr) {
    static const std::regex kName(R"(\bhcudp_[a-zA-Z0-9_]+)");
    std::set<std::string> names;
    for (std::sregex_iterator it(expr.begin(), expr.end(), kName), end; it != end; ++it) {
      names.insert(it->str());
    }
    BOOST_TEST(!names.empty());
    std::set<std::string> labels = kTargetLabels;
    for (const std::string& n : names) {
      auto found = exposed.find(n);
      const bool is_exposed = found != exposed.end();
      BOOST_TEST(is_exposed, n << " is not a series /metrics exposes");
      if (is_exposed) labels.insert(found->second.begin(), found->second.end());
    }
    // Matchers {a="..", b=~".."} and by (...) / without (...) lists.
    static const std::regex kMatcher(R"(([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*")");
    static const std::regex kGrouping(R"(\b(by|without)\s*\(([^)]*)\))");
    static const std::regex kWord(R"([a-zA-Z_][a-zA-Z0-9_]*)");
    std::set<std::string> used;
    for (std::sregex_iterator it(expr.begin(), expr.end(), kMatcher), end; it != end; ++it) {
      used.insert((*it)[1]);
    }
    for (std::sregex_iterator it(expr.begin(), expr.end(), kGrouping), end; it != end; ++it) {
      const std::string list = (*it)[2];
      for (std::sregex_iterator w(list.begin(), list.end(), kWord); w != end; ++w) {
        used.insert(w->str());
      }
    }
    for (const std::string& l : used) {
      BOOST_TEST(labels.count(l) == 1u,
                 "label " << l << " is on none of " << names.size() << " series it names");
    }
  }
}

BOOST_AUTO_TEST_SUITE(ops_metrics_dashboard)

BOOST_AUTO_TEST_CASE(every_query_names_what_the_daemon_exposes_in_some_strategy,
                     *boost::unit_test::timeout(180)) {
  const Exposed exposed = ScrapeEveryStrategy();
  auto queries = DashboardQueries();
  BOOST_TEST(queries.size() >= 10u);
  auto alerts = AlertQueries();
  BOOST_TEST(alerts.size() == 6u);
  queries.insert(queries.end(), alerts.begin(), alerts.end());
  for (const auto& [where, expr] : queries) CheckQuery(where, expr, exposed);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp::testing
