// The fleet benchmark's figures (issue 24), computed from the fake API
// server's request log: what each node (a user of its own token) asked for
// in a window of time, by verb and resource, and how the fleet's first
// requests after an outage are spread. Pure functions, tested on their own
// (fleet_figures_test.cc).
#ifndef HCUDP_TEST_BENCH_FLEET_FIGURES_H_
#define HCUDP_TEST_BENCH_FLEET_FIGURES_H_

#include <map>
#include <string>
#include <vector>

#include "fake_apiserver/fake_apiserver_process.h"

namespace hcudp::bench {

using hcudp::testing::FakeRequest;

// A window of the server's clock, [from, to).
struct Window {
  double from = 0;
  double to = 0;
  double seconds() const { return to - from; }
  bool Holds(double t) const { return t >= from && t < to; }
};

// How a figure is spread over the nodes (every node counts, a silent one as 0).
struct Spread {
  double mean = 0;
  double median = 0;
  double min = 0;
  double max = 0;
};
Spread SpreadOf(std::vector<double> per_node);

// Requests per node per minute in `w`, by "verb resource" ("patch nodes",
// "watch pods"), plus "total"; one Spread each over `nodes`.
std::map<std::string, Spread> RatesPerMinute(const std::vector<FakeRequest>& log,
                                             const std::vector<std::string>& nodes, Window w);

// Requests per node in `w` (whatever their verb), over `nodes`; with `verb`
// only those of that verb ("list", "watch").
Spread CountsPerNode(const std::vector<FakeRequest>& log, const std::vector<std::string>& nodes,
                     Window w, const std::string& verb = "");

// Nodes with at least one request of `verb` in `w`.
int NodesWith(const std::vector<FakeRequest>& log, const std::vector<std::string>& nodes, Window w,
              const std::string& verb);

// Each node's first request in `w`, as seconds after w.from.
struct FirstRequests {
  int nodes = 0;     // nodes that made one
  int silent = 0;    // nodes that made none in the window
  double first = 0;  // the earliest, after w.from
  double last = 0;   // the latest
  double median = 0;
  double spread() const { return last - first; }
};
FirstRequests FirstRequestsIn(const std::vector<FakeRequest>& log,
                              const std::vector<std::string>& nodes, Window w);

// Seconds between one node's consecutive requests in `w`.
std::vector<double> Intervals(const std::vector<FakeRequest>& log, const std::string& node,
                              Window w);

// Requests of the fleet's nodes (any user but the test's own) in `w` whose status
// is not `status`.
int AnsweredOtherThan(const std::vector<FakeRequest>& log, Window w, int status);

}  // namespace hcudp::bench

#endif  // HCUDP_TEST_BENCH_FLEET_FIGURES_H_
