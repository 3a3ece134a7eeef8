// The fleet benchmark (issue 24): what a cluster of nodes costs the API
// server. N real hcu-dp-daemon processes, each on its own simulated node
// with its own token (fleet_nodes.h), against ONE fake API server with
// watches lasting 30-60 min and a bookmark a minute, as a real server. In
// each of the hami, dra and mixed modes, with Events on (the chart's
// default), it reports per node (fleet_figures.h):
//   1. requests per minute at steady state, by verb and resource;
//   2. open watches;
//   3. a clean watch end (every watch ended by the server): the LISTs
//      that follow (a relist) and the re-watches;
//   4. an outage (every watch cut, then 503 for everything): the requests
//      during it and in the time after it, and how long the fleet's first
//      requests after recovery are spread over (mixed mode, which has no
//      watch: a card recovers as the outage starts, so its Event meets it);
//   5. the median RSS of the daemons.
// The issue's targets are printed next to the figures; the test asserts
// only that the run is sane (they are the kube client's to meet).
//
// CI (ctest -L bench) runs a short version of the three modes at once
// (fleet_all_modes: 4 nodes of each against the one server, phases of
// seconds), which checks each mode's run is sane in the time of one.
// The figures of BENCHMARKS.md come from the full run of each mode alone,
// by hand:
//   HCUDP_BENCH_FLEET_FULL=1 build/release/test/bench/test_bench_fleet --run_test=fleet_hami
// (and fleet_dra, fleet_mixed).
// Knobs (seconds unless said): HCUDP_BENCH_FLEET_NODES (per mode), _WARMUP_S,
// _STEADY_S, _CLEAN_S, _OUTAGE_S, _AFTER_S; HCUDP_BENCH_DAEMON (another
// daemon binary, e.g. main's, to compare); HCUDP_BENCH_FLEET_RESTART=1 (the
// outage is a restart: the server comes back with a new watch cache, so a
// watch from before it gets 410 Gone and its client relists, as after a real
// kube-apiserver restart; without it every watch resumes, which only a
// server that kept running allows); HCUDP_BENCH_FLEET_PER_NODE=1
// prints each node's line; HCUDP_BENCH_FLEET_DUMP=<file> writes the log.
#include <rapidjson/document.h>

#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <set>
#include <thread>

#include "bench_util.h"
#include "fleet_figures.h"
#include "fleet_nodes.h"
#include "integration/daemon_harness.h"

namespace hcudp::bench {
namespace {

using hcudp::testing::FakeApiServer;
using hcudp::testing::FakeApiServerOptions;
using hcudp::testing::MonotonicSeconds;

struct Phases {
  int nodes;  // per mode
  double warmup_s, steady_s, clean_s, outage_s, after_s;
  bool restart;  // the outage ends as a restart (HCUDP_BENCH_FLEET_RESTART)
};

// `short_nodes`: nodes per mode of the short run.
Phases PhasesFromEnv(int short_nodes) {
  const bool full = EnvCount("HCUDP_BENCH_FLEET_FULL", 0, 0) != 0;
  Phases p;
  p.nodes = static_cast<int>(EnvCount("HCUDP_BENCH_FLEET_NODES", full ? 50 : short_nodes));
  p.warmup_s = EnvBound("HCUDP_BENCH_FLEET_WARMUP_S", full ? 60 : 3);
  p.steady_s = EnvBound("HCUDP_BENCH_FLEET_STEADY_S", full ? 300 : 8, 1);
  p.clean_s = EnvBound("HCUDP_BENCH_FLEET_CLEAN_S", full ? 30 : 4, 1);
  p.outage_s = EnvBound("HCUDP_BENCH_FLEET_OUTAGE_S", full ? 20 : 4, 1);
  p.after_s = EnvBound("HCUDP_BENCH_FLEET_AFTER_S", full ? 30 : 6, 1);
  p.restart = EnvCount("HCUDP_BENCH_FLEET_RESTART", 0, 0) != 0;
  return p;
}

std::string DaemonPath() {
  const char* env = std::getenv("HCUDP_BENCH_DAEMON");
  return env != nullptr && *env != '\0' ? env : hcudp::testing::DaemonBinary();
}

void SleepSeconds(double s) {
  if (s > 0) std::this_thread::sleep_for(std::chrono::duration<double>(s));
}

// How many of `names` the API server shows as set up by their daemon: HAMi's
// register annotation on the Node, a ResourceSlice of the node's (DRA).
int ReadyInApi(const FakeApiServer& api, FleetMode mode, const std::vector<std::string>& names) {
  rapidjson::Document d;
  const std::string body =
      api.MustRequest("GET", mode == FleetMode::kHami ? "/api/v1/nodes"
                                                      : "/apis/resource.k8s.io/v1/resourceslices");
  d.Parse(body.c_str());
  if (d.HasParseError() || !d.IsObject() || !d.HasMember("items")) return 0;
  std::set<std::string> ready;
  for (const auto& item : d["items"].GetArray()) {
    if (mode == FleetMode::kHami) {
      const auto& meta = item["metadata"];
      if (meta.HasMember("annotations") &&
          meta["annotations"].HasMember("hami.io/node-hcu-register")) {
        ready.insert(meta["name"].GetString());
      }
    } else if (item.HasMember("spec") && item["spec"].HasMember("nodeName")) {
      ready.insert(item["spec"]["nodeName"].GetString());
    }
  }
  return static_cast<int>(
      std::count_if(names.begin(), names.end(), [&](auto& n) { return ready.count(n) > 0; }));
}

// The nodes of one mode.
struct Group {
  FleetMode mode;
  std::vector<FleetNode*> nodes;
  std::vector<std::string> names;
};

int Ready(const FakeApiServer& api, const Group& g) {
  if (g.mode != FleetMode::kMixed) return ReadyInApi(api, g.mode, g.names);
  return static_cast<int>(std::count_if(g.nodes.begin(), g.nodes.end(),
                                        [](auto* n) { return n->Registrations() > 0; }));
}

int Ready(const FakeApiServer& api, const std::vector<Group>& groups) {
  int ready = 0;
  for (const Group& g : groups) ready += Ready(api, g);
  return ready;
}

struct Run {
  Phases p;
  Window steady, clean, outage, after;
  std::map<std::string, int> watches_steady, watches_end;
  FleetMemory memory;
  double ready_s = 0;
  int without_inotify = 0;  // daemons that fell back to --pulse (no inotify instance left)
};

std::string Verdict(bool met) { return met ? "met" : "NOT met"; }

double OpenWatchesOf(const std::map<std::string, int>& w, const std::vector<std::string>& names,
                     std::vector<double>* per_node) {
  double total = 0;
  for (const auto& n : names) {
    auto it = w.find(n);
    per_node->push_back(it == w.end() ? 0 : it->second);
    total += per_node->back();
  }
  return total;
}

// One node's retry intervals in the outage (the node whose count is nearest
// the median) and the fleet's first requests after it; returns the latter.
FirstRequests PrintRecovery(const Run& r, const std::vector<FakeRequest>& log,
                            const std::vector<std::string>& names, double median) {
  // The retry intervals of the node with the median count.
  std::string median_node = names.front();
  double best = 1e9;
  for (const auto& n : names) {
    const double off = std::abs(CountsPerNode(log, {n}, r.outage).mean - median);
    if (off < best) best = off, median_node = n;
  }
  std::printf("  %s retried at intervals (s):", median_node.c_str());
  for (double d : Intervals(log, median_node, r.outage)) std::printf(" %.1f", d);
  std::printf("\n");
  const FirstRequests first = FirstRequestsIn(log, names, r.after);
  if (first.nodes > 0) {
    std::printf(
        "first requests after recovery: %d nodes spread over %.2f s (first +%.2f s, "
        "median +%.2f s, last +%.2f s); %d nodes silent in the %.0f s\n",
        first.nodes, first.spread(), first.first, first.median, first.last, first.silent,
        r.after.seconds());
  } else {
    std::printf("first requests after recovery: none in %.0f s\n", r.after.seconds());
  }
  return first;
}

void PrintPerNode(const Run& r, const std::vector<FakeRequest>& log,
                  const std::vector<std::string>& names) {
  for (const auto& n : names) {
    std::printf("  %s: steady %.2f/min, outage %.0f, after %.0f, watches %d\n", n.c_str(),
                RatesPerMinute(log, {n}, r.steady).at("total").mean,
                CountsPerNode(log, {n}, r.outage).mean, CountsPerNode(log, {n}, r.after).mean,
                r.watches_steady.count(n) ? r.watches_steady.at(n) : 0);
  }
}

void Report(FleetMode mode, const Run& r, const std::vector<FakeRequest>& log,
            const std::vector<std::string>& names) {
  const char* m = ModeName(mode);
  const int n_nodes = static_cast<int>(names.size());
  std::printf("\n== fleet %s: %d nodes against one fake API server, ready in %.1f s ==\n", m,
              n_nodes, r.ready_s);
  std::printf("steady state (%.0f s), requests per node per minute: mean / median / max\n",
              r.steady.seconds());
  const auto rates = RatesPerMinute(log, names, r.steady);
  double non_watch = 0;
  for (const auto& [kind, s] : rates) {
    std::printf("  %-34s %6.2f / %6.2f / %6.2f\n", kind.c_str(), s.mean, s.median, s.max);
    if (kind != "total" && kind.rfind("watch ", 0) != 0) non_watch += s.mean;
  }
  std::vector<double> w_steady, w_end;
  OpenWatchesOf(r.watches_steady, names, &w_steady);
  OpenWatchesOf(r.watches_end, names, &w_end);
  const Spread ws = SpreadOf(w_steady), we = SpreadOf(w_end);
  std::printf(
      "open watches per node: end of steady state %.2f (min %.0f, max %.0f); "
      "%.0f s after the outage %.2f (min %.0f)\n",
      ws.mean, ws.min, ws.max, r.after.seconds(), we.mean, we.min);
  const Spread clean_all = CountsPerNode(log, names, r.clean);
  const Spread clean_lists = CountsPerNode(log, names, r.clean, "list");
  const int relisted = NodesWith(log, names, r.clean, "list");
  double steady_lists = 0;  // per node per minute
  for (const auto& [kind, s] : rates) steady_lists += kind.rfind("list ", 0) == 0 ? s.mean : 0;
  std::printf(
      "clean watch end (%.0f s after every watch ended): per node %.2f requests, "
      "%.2f LISTs (%d of %d nodes listed; the steady-state rate gives %.2f)\n",
      r.clean.seconds(), clean_all.mean, clean_lists.mean, relisted, n_nodes,
      steady_lists * r.clean.seconds() / 60);
  const Spread out = CountsPerNode(log, names, r.outage);
  const Spread aft = CountsPerNode(log, names, r.after);
  const Spread aft_lists = CountsPerNode(log, names, r.after, "list");
  std::printf(
      "outage (every watch cut, 503 for %.0f s%s): per node %.2f requests (median %.1f, "
      "max %.0f); in the %.0f s after: %.2f (max %.0f), %.2f LISTs (%d of %d nodes listed)\n",
      r.outage.seconds(), r.p.restart ? ", then a restarted server: old RVs 410" : "", out.mean,
      out.median, out.max, r.after.seconds(), aft.mean, aft.max, aft_lists.mean,
      NodesWith(log, names, r.after, "list"), n_nodes);
  const FirstRequests first = PrintRecovery(r, log, names, out.median);
  // The relists after the outage (a restart: every resume gets 410): when
  // each node's first LIST came, and whether it asked for
  // resourceVersion=0 (the API server's watch cache, not etcd).
  std::vector<FakeRequest> lists;
  for (const FakeRequest& q : log) {
    if (q.verb == "list" && r.after.Holds(q.t)) lists.push_back(q);
  }
  const FirstRequests relists = FirstRequestsIn(lists, names, r.after);
  int from_cache = 0;
  for (const FakeRequest& q : lists) {
    if (("&" + q.query + "&").find("&resourceVersion=0&") != std::string::npos) ++from_cache;
  }
  if (relists.nodes > 0) {
    std::printf(
        "relists after recovery: %d nodes spread over %.2f s (first +%.2f s, median +%.2f s, "
        "last +%.2f s); %d of %d LISTs at resourceVersion=0\n",
        relists.nodes, relists.spread(), relists.first, relists.median, relists.last, from_cache,
        static_cast<int>(lists.size()));
  } else {
    std::printf("relists after recovery: none in %.0f s\n", r.after.seconds());
  }
  if (r.without_inotify > 0) {
    std::printf(
        "note: %d daemons had no inotify instance (fs.inotify.max_user_instances): "
        "node changes at their --pulse\n",
        r.without_inotify);
  }
  std::printf("daemon memory: median VmRSS %.1f MiB, Private_Dirty %.1f MiB\n",
              r.memory.rss_kib / 1024, r.memory.private_dirty_kib / 1024);
  std::printf("targets (issue 24):\n");
  if (mode == FleetMode::kHami) {
    std::printf("  <= 2.5 requests/node/min at steady state: %.2f, %s\n", rates.at("total").mean,
                Verdict(rates.at("total").mean <= 2.5).c_str());
  } else {
    std::printf(
        "  none beyond watch renewals at steady state: %.2f other requests/node/min, "
        "%s\n",
        non_watch, Verdict(non_watch == 0).c_str());
  }
  std::printf("  <= 8 requests/node in the outage: max %.0f, %s\n", out.max,
              Verdict(out.max <= 8).c_str());
  std::printf("  first requests after recovery spread over >= 5 s: %.2f s, %s\n", first.spread(),
              first.nodes > 1 ? Verdict(first.spread() >= 5).c_str() : "n/a");
  std::printf("  no LIST after a clean watch end: %d nodes listed, %s\n", relisted,
              Verdict(relisted == 0).c_str());
  std::printf(
      "FLEET mode=%s nodes=%d steady_req_per_node_min=%.2f non_watch_per_node_min=%.2f "
      "open_watches=%.2f clean_lists=%.2f outage_req_mean=%.2f outage_req_max=%.0f "
      "after_req_mean=%.2f after_lists=%.2f restart=%d recovery_spread_s=%.2f "
      "relist_nodes=%d relist_spread_s=%.2f relists_rv0=%d/%d rss_mib=%.1f "
      "private_dirty_mib=%.1f\n",
      m, n_nodes, rates.at("total").mean, non_watch, ws.mean, clean_lists.mean, out.mean, out.max,
      aft.mean, aft_lists.mean, r.p.restart ? 1 : 0, first.spread(), relists.nodes,
      relists.spread(), from_cache, static_cast<int>(lists.size()), r.memory.rss_kib / 1024,
      r.memory.private_dirty_kib / 1024);
  if (EnvCount("HCUDP_BENCH_FLEET_PER_NODE", 0, 0) != 0) PrintPerNode(r, log, names);
  std::fflush(stdout);
}

// HCUDP_BENCH_FLEET_DUMP=<file>: every request of the run, one a line
// ("phase seconds-into-it node verb resource status"), to see what a
// figure is made of.
void DumpLog(const std::vector<FakeRequest>& log, const Run& r) {
  const char* path = std::getenv("HCUDP_BENCH_FLEET_DUMP");
  if (path == nullptr || *path == '\0') return;
  FILE* out = std::fopen(path, "w");
  if (out == nullptr) return;
  const std::pair<const char*, Window> phases[] = {
      {"steady", r.steady}, {"clean", r.clean}, {"outage", r.outage}, {"after", r.after}};
  for (const FakeRequest& q : log) {
    const char* phase = "start";
    double since = 0;
    for (const auto& [name, w] : phases) {
      if (w.Holds(q.t)) phase = name, since = q.t - w.from;
    }
    std::fprintf(out, "%-6s %8.2f %-10s %-6s %-24s %d\n", phase, since,
                 q.user.empty() ? "-" : q.user.c_str(), q.verb.c_str(), q.resource.c_str(),
                 q.status);
  }
  std::fclose(out);
}

// Runs the modes' nodes together, `short_nodes` of each unless the
// environment says otherwise; one report per mode.
void RunFleet(const std::vector<FleetMode>& modes, int short_nodes) {
  Run r;
  r.p = PhasesFromEnv(short_nodes);
  FakeApiServerOptions o;
  o.event_window = 100000;
  o.watch_timeout_s = 3600;  // a real server: --min-request-timeout=1800, x1..2
  o.watch_timeout_min_s = 1800;
  o.bookmark_interval_ms = 60000;  // about one a minute, as a real server
  FakeApiServer api(o);
  hcudp::testing::TempDir root;
  const std::string sim = hcudp::testing::SourcePath("demo/nodes/k100ai-8.yaml");
  std::vector<std::unique_ptr<FleetNode>> nodes;
  std::vector<std::string> names;
  std::vector<Group> groups;
  std::map<std::string, std::string> tokens;
  for (FleetMode mode : modes) {
    groups.push_back({mode, {}, {}});
    for (int i = 0; i < r.p.nodes; ++i) {
      const int index = static_cast<int>(nodes.size());
      nodes.push_back(std::make_unique<FleetNode>(root.path(), index, mode, api, sim));
      names.push_back(nodes.back()->name());
      groups.back().nodes.push_back(nodes.back().get());
      groups.back().names.push_back(names.back());
      tokens[nodes.back()->token()] = names.back();
      api.MustRequest("POST", "/api/v1/nodes", R"({"metadata":{"name":")" + names.back() + "\"}}");
    }
  }
  const int total = static_cast<int>(nodes.size());
  api.AddTokens(tokens);
  const std::string daemon = DaemonPath();
  const double t_start = MonotonicSeconds();
  for (auto& n : nodes) BOOST_REQUIRE_EQUAL(n->Start(daemon), "");
  const bool ready = hcudp::testing::PollUntil([&] { return Ready(api, groups) == total; },
                                               std::chrono::milliseconds(30000 + 1000 * total),
                                               std::chrono::milliseconds(500));
  BOOST_REQUIRE_MESSAGE(ready, "only " << Ready(api, groups) << " of " << total << " nodes ready; "
                                       << names.front() << "'s log:\n"
                                       << nodes.front()->Log());
  r.ready_s = MonotonicSeconds() - t_start;
  for (auto& n : nodes)
    r.without_inotify += n->Log().find("inotify unavailable") != std::string::npos;
  // A card fault on every node, so that each node's Events are seen to work
  // (a create per node) before the steady state, which has none. A node
  // whose daemon got no inotify instance (the host's
  // fs.inotify.max_user_instances, 128 by default, shared by every process
  // of the user: ~2 a daemon) sees it at its next --pulse, up to 30 s later.
  for (auto& n : nodes) n->FailFirstCard();
  const bool events = hcudp::testing::PollUntil(
      [&] {
        return NodesWith(api.RequestsSince(t_start), names, {t_start, MonotonicSeconds() + 1},
                         "create") == total;
      },
      std::chrono::milliseconds(60000), std::chrono::milliseconds(500));
  if (!events) {
    const auto log = api.RequestsSince(t_start);
    for (auto& n : nodes) {
      if (NodesWith(log, {n->name()}, {t_start, MonotonicSeconds() + 1}, "create") == 0) {
        std::fprintf(stderr, "%s created no Event; its log:\n%s\n", n->name().c_str(),
                     n->Log().c_str());
      }
    }
    DumpLog(log, r);
  }
  BOOST_REQUIRE_MESSAGE(events, "not every node created an Event within 60 s of its card fault");
  SleepSeconds(r.p.warmup_s);

  r.steady = {MonotonicSeconds(), 0};
  SleepSeconds(r.p.steady_s);
  r.steady.to = MonotonicSeconds();
  r.watches_steady = api.OpenWatches();
  std::vector<pid_t> pids;
  for (auto& n : nodes) pids.push_back(n->pid());
  r.memory = MedianMemory(pids);

  r.clean = {MonotonicSeconds(), 0};
  api.CloseWatches();
  SleepSeconds(r.p.clean_s);
  r.clean.to = MonotonicSeconds();

  r.outage.from = MonotonicSeconds();
  r.outage.to = api.StartOutage(r.p.outage_s, r.p.restart);
  // The mixed strategy has no watch: its Events are what meets the outage,
  // the card coming back as it starts (an HCUHealthy Event to deliver).
  for (const Group& g : groups) {
    if (g.mode != FleetMode::kMixed) continue;
    for (FleetNode* n : g.nodes) n->HealFirstCard();
  }
  r.after = {r.outage.to, r.outage.to + r.p.after_s};
  SleepSeconds(r.after.to - MonotonicSeconds());
  r.watches_end = api.OpenWatches();
  const std::vector<FakeRequest> log = api.Requests();
  for (const Group& g : groups) Report(g.mode, r, log, g.names);
  DumpLog(log, r);
  for (auto& n : nodes) n->Terminate();

  // Sanity, not the targets: every daemon lived through it, each node's
  // requests were told apart, the fake answered the outage with 503 only,
  // and in each mode some node noticed the outage.
  for (auto& n : nodes) {
    BOOST_TEST(n->Running(), n->name() << " exited:\n" << n->Log());
    BOOST_TEST(CountsPerNode(log, {n->name()}, {t_start, r.after.to}).mean > 0,
               n->name() << " made no request");
  }
  BOOST_TEST(AnsweredOtherThan(log, r.outage, 503) == 0);
  for (const Group& g : groups) {
    if (g.mode != FleetMode::kMixed) {
      for (const auto& n : g.names) {
        BOOST_TEST(r.watches_steady[n] >= 1, n << " had no open watch at steady state");
      }
    }
    BOOST_TEST(CountsPerNode(log, g.names, r.outage).max > 0,
               "no " << ModeName(g.mode) << " node noticed the outage");
  }
  BOOST_TEST(r.memory.rss_kib > 0);
}

}  // namespace

// Each mode alone: the figures (BENCHMARKS.md, with HCUDP_BENCH_FLEET_FULL=1).
BOOST_AUTO_TEST_CASE(fleet_hami, *boost::unit_test::timeout(3600)) {
  RunFleet({FleetMode::kHami}, 10);
}
BOOST_AUTO_TEST_CASE(fleet_dra, *boost::unit_test::timeout(3600)) {
  RunFleet({FleetMode::kDra}, 10);
}
BOOST_AUTO_TEST_CASE(fleet_mixed, *boost::unit_test::timeout(3600)) {
  RunFleet({FleetMode::kMixed}, 10);
}
// The three modes' nodes against the one server at once (CI's short run:
// each mode's sanity in the time of one run).
BOOST_AUTO_TEST_CASE(fleet_all_modes, *boost::unit_test::timeout(3600)) {
  RunFleet({FleetMode::kHami, FleetMode::kDra, FleetMode::kMixed}, 4);
}

}  // namespace hcudp::bench
