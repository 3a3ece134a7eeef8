#include "fleet_figures.h"

#include <algorithm>
#include <numeric>
#include <set>

namespace hcudp::bench {
namespace {

// The log's requests in `w` from one of `nodes`, per node.
std::map<std::string, std::vector<const FakeRequest*>> ByNode(const std::vector<FakeRequest>& log,
                                                              const std::vector<std::string>& nodes,
                                                              Window w) {
  std::map<std::string, std::vector<const FakeRequest*>> out;
  for (const std::string& n : nodes) out[n];
  for (const FakeRequest& r : log) {
    auto it = out.find(r.user);
    if (it != out.end() && w.Holds(r.t)) it->second.push_back(&r);
  }
  return out;
}

}  // namespace

Spread SpreadOf(std::vector<double> v) {
  Spread s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  s.min = v.front();
  s.max = v.back();
  s.mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  const size_t n = v.size();
  s.median = n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  return s;
}

std::map<std::string, Spread> RatesPerMinute(const std::vector<FakeRequest>& log,
                                             const std::vector<std::string>& nodes, Window w) {
  const auto by_node = ByNode(log, nodes, w);
  std::set<std::string> kinds = {"total"};
  for (const auto& [node, reqs] : by_node) {
    for (const FakeRequest* r : reqs) kinds.insert(r->verb + " " + r->resource);
  }
  const double minutes = w.seconds() / 60.0;
  std::map<std::string, Spread> out;
  for (const std::string& kind : kinds) {
    std::vector<double> per_node;
    for (const auto& [node, reqs] : by_node) {
      const auto n =
          kind == "total" ? reqs.size() : std::count_if(reqs.begin(), reqs.end(), [&](auto* r) {
            return r->verb + " " + r->resource == kind;
          });
      per_node.push_back(minutes > 0 ? static_cast<double>(n) / minutes : 0);
    }
    out[kind] = SpreadOf(per_node);
  }
  return out;
}

Spread CountsPerNode(const std::vector<FakeRequest>& log, const std::vector<std::string>& nodes,
                     Window w, const std::string& verb) {
  std::vector<double> per_node;
  for (const auto& [node, reqs] : ByNode(log, nodes, w)) {
    per_node.push_back(static_cast<double>(std::count_if(
        reqs.begin(), reqs.end(), [&](auto* r) { return verb.empty() || r->verb == verb; })));
  }
  return SpreadOf(per_node);
}

int NodesWith(const std::vector<FakeRequest>& log, const std::vector<std::string>& nodes, Window w,
              const std::string& verb) {
  int n = 0;
  for (const auto& [node, reqs] : ByNode(log, nodes, w)) {
    n += std::any_of(reqs.begin(), reqs.end(), [&](auto* r) { return r->verb == verb; }) ? 1 : 0;
  }
  return n;
}

FirstRequests FirstRequestsIn(const std::vector<FakeRequest>& log,
                              const std::vector<std::string>& nodes, Window w) {
  FirstRequests f;
  std::vector<double> firsts;
  for (const auto& [node, reqs] : ByNode(log, nodes, w)) {
    if (reqs.empty()) {
      ++f.silent;
      continue;
    }
    double first = reqs.front()->t;
    for (const FakeRequest* r : reqs) first = std::min(first, r->t);
    firsts.push_back(first - w.from);
  }
  f.nodes = static_cast<int>(firsts.size());
  if (firsts.empty()) return f;
  const Spread s = SpreadOf(firsts);
  f.first = s.min;
  f.last = s.max;
  f.median = s.median;
  return f;
}

std::vector<double> Intervals(const std::vector<FakeRequest>& log, const std::string& node,
                              Window w) {
  std::vector<double> times;
  for (const FakeRequest& r : log) {
    if (r.user == node && w.Holds(r.t)) times.push_back(r.t);
  }
  std::sort(times.begin(), times.end());
  std::vector<double> out;
  for (size_t i = 1; i < times.size(); ++i) out.push_back(times[i] - times[i - 1]);
  return out;
}

int AnsweredOtherThan(const std::vector<FakeRequest>& log, Window w, int status) {
  return static_cast<int>(std::count_if(log.begin(), log.end(), [&](const FakeRequest& r) {
    return w.Holds(r.t) && !r.user.empty() && r.status != status;
  }));
}

}  // namespace hcudp::bench
