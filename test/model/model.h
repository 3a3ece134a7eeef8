// A seeded, replayable, randomized state-machine test of the node's
// invariants (issue 28, DESIGN §8): random operations on a simulated node,
// and after every step the invariants I1..I5 (README.md in this folder).
//
// An operation is a letter and up to three small numbers ("P1.3.0"), each
// number read modulo what it picks from at the time it runs, so any
// sub-list of a failing run is again a valid run: that is what shrinking
// and HCUDP_MODEL_OPS replay rely on.
#ifndef HCUDP_TEST_MODEL_MODEL_H_
#define HCUDP_TEST_MODEL_MODEL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "hcudp/status.h"

namespace hcudp::model {

enum class NodeKind { kMixed, kMig };
std::string NodeKindName(NodeKind kind);

struct Op {
  char kind = 'K';
  int a = 0, b = 0, c = 0;
  std::string Text() const;
};
std::string OpsText(const std::vector<Op>& ops);
StatusOr<std::vector<Op>> ParseOps(const std::string& text);

// `steps` random operations from `seed`, for `node`, none of the kinds
// listed in `without` (e.g. "MG": no card missed or removed).
std::vector<Op> GenerateOps(uint64_t seed, NodeKind node, int steps,
                            const std::string& without = "");

// The outcome of one run.
struct RunResult {
  bool failed = false;
  int step = -1;          // the operation after which an invariant failed
  std::string invariant;  // "I1".."I5" (or "setup")
  std::string message;
  int prepared = 0;       // claims prepared with success
  int failed_prepares = 0;
  int hami_pods = 0;      // HAMi pods that got a vHCU
};

// Runs `ops` on a fresh node of `kind` (its own temp host root), checking
// the invariants after every step, and drains at the end (I4).
// `as_daemon_today`: the slices are recomputed only on a node change, as
// hcu-dp-daemon/dra_mode.cc does (model_sut.h); else also after Recover,
// Prepare and Unprepare, as issue 28 specifies DraAgent.
// `slices`: the node publishes DRA slices and they are judged (false: a
// HAMi node, whose offer is judged through Node::Offers only).
RunResult RunOps(NodeKind kind, const std::vector<Op>& ops, bool as_daemon_today = false,
                 bool slices = true);

// The shortest sub-list of `ops` found that still fails with the same
// invariant (drop halves, then quarters, ... then single operations).
std::vector<Op> Shrink(NodeKind kind, std::vector<Op> ops, const std::string& invariant,
                       bool as_daemon_today = false, bool slices = true);

}  // namespace hcudp::model

#endif  // HCUDP_TEST_MODEL_MODEL_H_
