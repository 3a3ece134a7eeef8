#include <algorithm>
#include <set>
#include <unordered_map>

#include "hcudp/preferred.h"

namespace hcudp {
namespace {

constexpr uint64_t kExhaustiveLimit = 50000;
// Steps (one pair-cost lookup and add each) a search may take: a few ms.
constexpr uint64_t kWorkBudget = 4'000'000;
// Candidates × size above this cannot get even one greedy pass in budget.
constexpr uint64_t kMaxProblem = 16'000'000;

constexpr uint64_t kClassUnit = 1000000000000ull;

uint64_t PairCost(LinkType type, int weight, int hops, bool same_numa) {
  uint64_t link_class = (type == LinkType::kHsl || type == LinkType::kHyswitch) ? 0 : 1;
  return link_class * kClassUnit +
         std::min<uint64_t>(static_cast<uint64_t>(std::max(0, weight)), 1000000) * 100000ull +
         std::min<uint64_t>(static_cast<uint64_t>(std::max(0, hops)), 1000) * 100ull +
         (same_numa ? 0 : 1);
}

// C(n, k), saturating just above `cap`.
uint64_t Choose(size_t n, size_t k, uint64_t cap) {
  if (k > n) return 0;
  k = std::min(k, n - k);
  uint64_t r = 1;
  for (size_t i = 1; i <= k; ++i) {
    r = r * (n - k + i) / i;
    if (r > cap) return cap + 1;
  }
  return r;
}

// Pair costs between the candidate devices, by position. Built in
// O(cards² + links): each distinct card gets a dense number, and the card
// pair table is filled from the link list once.
class CostMatrix {
 public:
  CostMatrix(const NodeInventory& inventory, const std::vector<int>& cards) : slot_(cards.size()) {
    // Card index -> dense number, in card order. Indices are small
    // non-negative numbers on any real node; anything else is skipped by
    // the range check and costs like an unknown card.
    std::vector<int> sorted(cards.begin(), cards.end());
    std::sort(sorted.begin(), sorted.end());
    sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
    c_ = sorted.size();
    const int lo = sorted.empty() ? 0 : sorted.front();
    const int hi = sorted.empty() ? -1 : sorted.back();
    const bool dense_range = !sorted.empty() && static_cast<int64_t>(hi) - lo < (1 << 22);
    std::vector<size_t> by_index(dense_range ? static_cast<size_t>(hi - lo + 1) : 0, c_);
    for (size_t d = 0; d < sorted.size() && dense_range; ++d) by_index[sorted[d] - lo] = d;
    auto dense = [&](int card) -> size_t {
      if (dense_range) {
        return card < lo || card > hi ? c_ : by_index[static_cast<size_t>(card - lo)];
      }
      auto it = std::lower_bound(sorted.begin(), sorted.end(), card);
      return it != sorted.end() && *it == card ? static_cast<size_t>(it - sorted.begin()) : c_;
    };
    for (size_t i = 0; i < cards.size(); ++i) slot_[i] = dense(cards[i]);

    std::vector<int> numa(c_, -1);
    std::vector<bool> known(c_, false);
    for (const Card& card : inventory.cards) {
      size_t d = dense(card.index);
      if (d == c_ || known[d]) continue;  // the first card of an index wins
      known[d] = true;
      numa[d] = card.numa_node;
    }
    auto same_numa = [&](size_t a, size_t b) { return known[a] && known[b] && numa[a] == numa[b]; };
    // One pass over the links. For each card pair, the first link from the
    // lower card to the higher wins; else the first reverse one. `from`
    // says which kind set a pair: 0 none, 1 reverse, 2 forward.
    card_cost_.assign(c_ * c_, 0);
    std::vector<uint8_t> from(c_ * c_, 0);
    for (const Link& l : inventory.links) {
      const size_t s = dense(l.src);
      const size_t d = dense(l.dst);
      if (s == c_ || d == c_ || s == d) continue;
      const uint8_t kind = s < d ? 2 : 1;
      const size_t lo = std::min(s, d);
      const size_t hi = std::max(s, d);
      if (from[lo * c_ + hi] >= kind) continue;
      from[lo * c_ + hi] = from[hi * c_ + lo] = kind;
      card_cost_[lo * c_ + hi] = card_cost_[hi * c_ + lo] =
          PairCost(l.type, l.weight, l.hops, same_numa(lo, hi));
    }
    // Pairs without a link: PCIe, weight 40, 2 hops.
    const uint64_t pcie[2] = {PairCost(LinkType::kPcie, 40, 2, false),
                              PairCost(LinkType::kPcie, 40, 2, true)};
    for (size_t a = 0; a < c_; ++a) {
      for (size_t b = 0; b < c_; ++b) {
        if (a != b && from[a * c_ + b] == 0) card_cost_[a * c_ + b] = pcie[same_numa(a, b)];
      }
    }
  }

  uint64_t operator()(size_t i, size_t j) const { return card_cost_[slot_[i] * c_ + slot_[j]]; }
  // The costs of position i's card against every card, by dense number
  // (the matrix is symmetric): index it with slot(j).
  const uint64_t* Row(size_t i) const { return &card_cost_[slot_[i] * c_]; }
  size_t slot(size_t j) const { return slot_[j]; }
  uint64_t Total(const std::vector<size_t>& set) const {
    uint64_t sum = 0;
    for (size_t i = 0; i < set.size(); ++i) {
      for (size_t j = i + 1; j < set.size(); ++j) sum += (*this)(set[i], set[j]);
    }
    return sum;
  }

 private:
  std::vector<size_t> slot_;         // position -> dense card number
  size_t c_ = 0;                     // distinct cards
  std::vector<uint64_t> card_cost_;  // c_ × c_, 0 on the diagonal
};

// Counts steps against kWorkBudget and polls the caller's cancel check.
class Work {
 public:
  explicit Work(const std::function<bool()>& cancelled) : cancelled_(cancelled) {}
  // False once cancelled; polled every ~64k steps.
  bool Spend(uint64_t steps) {
    spent_ += steps;
    if (spent_ - last_poll_ >= 65536) {
      last_poll_ = spent_;
      if (cancelled_ && cancelled_()) stopped_ = true;
    }
    return !stopped_;
  }
  bool Cancelled() {
    if (!stopped_ && cancelled_ && cancelled_()) stopped_ = true;
    return stopped_;
  }
  uint64_t left() const { return spent_ >= kWorkBudget ? 0 : kWorkBudget - spent_; }

 private:
  const std::function<bool()>& cancelled_;
  uint64_t spent_ = 0;
  uint64_t last_poll_ = 0;
  bool stopped_ = false;
};

// Positions [0, must) are fixed; choose `k` of [must, n). Empty if cancelled.
std::vector<size_t> Exhaustive(const CostMatrix& cost, size_t must, size_t n, size_t k,
                               Work& work) {
  // What each free candidate adds next to the fixed ones, and their own total.
  std::vector<uint64_t> to_must(n, 0);
  for (size_t x = must; x < n; ++x) {
    for (size_t m = 0; m < must; ++m) to_must[x] += cost(x, m);
  }
  std::vector<size_t> base;
  for (size_t i = 0; i < must; ++i) base.push_back(i);
  const uint64_t base_cost = cost.Total(base);
  std::vector<size_t> pick(k);
  for (size_t i = 0; i < k; ++i) pick[i] = must + i;
  std::vector<size_t> best;
  uint64_t best_cost = UINT64_MAX;
  while (true) {
    uint64_t c = base_cost;
    for (size_t a = 0; a < k; ++a) {
      c += to_must[pick[a]];
      for (size_t b = a + 1; b < k; ++b) c += cost(pick[a], pick[b]);
    }
    if (c < best_cost) {
      best_cost = c;
      best = base;
      best.insert(best.end(), pick.begin(), pick.end());
    }
    if (!work.Spend(1 + k * k)) return {};
    // Next combination in lexicographic order.
    size_t i = k;
    while (i > 0 && pick[i - 1] == n - k + (i - 1)) --i;
    if (i == 0) break;
    ++pick[i - 1];
    for (size_t j = i; j < k; ++j) pick[j] = pick[j - 1] + 1;
  }
  return best;
}

// A set of positions with, for every position x, the cost x adds next to
// the whole set (`added[x]`, 0 for x itself), kept up to date in O(n) per
// change.
struct Growing {
  std::vector<size_t> set;
  std::vector<bool> in;
  std::vector<uint64_t> added;
  uint64_t total = 0;

  Growing(size_t n) : in(n, false), added(n, 0) {}
  void Add(const CostMatrix& cost, size_t x) {
    total += added[x];
    set.push_back(x);
    in[x] = true;
    const uint64_t* row = cost.Row(x);
    for (size_t y = 0; y < added.size(); ++y) added[y] += row[cost.slot(y)];
  }
};

// Grows `g` to `size` members, each time by the position that adds least
// (the first such in order).
void GrowGreedy(const CostMatrix& cost, Growing& g, size_t size, Work& work) {
  const size_t n = g.in.size();
  while (g.set.size() < size) {
    size_t best = n;
    uint64_t best_cost = UINT64_MAX;
    for (size_t x = 0; x < n; ++x) {
      if (!g.in[x] && g.added[x] < best_cost) {
        best_cost = g.added[x];
        best = x;
      }
    }
    if (best == n) break;
    g.Add(cost, best);
    work.Spend(2 * n);
  }
}

// Swap a free member for an outsider while that lowers the total.
void Improve(const CostMatrix& cost, Growing& g, size_t must, Work& work) {
  const size_t n = g.in.size();
  for (int round = 0; round < 100; ++round) {
    bool improved = false;
    for (size_t m = 0; m < g.set.size() && !improved; ++m) {
      const size_t old = g.set[m];
      if (old < must) continue;
      // Without `old`, x would add added[x] - cost(x, old).
      const uint64_t current = g.added[old];
      if (!work.Spend(n) || work.left() == 0) return;
      const uint64_t* old_row = cost.Row(old);
      for (size_t x = must; x < n; ++x) {
        if (g.in[x]) continue;
        if (g.added[x] - old_row[cost.slot(x)] < current) {
          g.set[m] = x;
          g.in[old] = false;
          g.in[x] = true;
          const uint64_t* in_row = cost.Row(x);
          const uint64_t* out_row = cost.Row(old);
          for (size_t y = 0; y < n; ++y) {
            g.added[y] += in_row[cost.slot(y)] - out_row[cost.slot(y)];
          }
          work.Spend(n);
          improved = true;
          break;
        }
      }
    }
    if (!improved) return;
  }
}

}  // namespace

// The search's own table for two cards, so that both judge a pair alike.
uint64_t CardPairCost(const NodeInventory& inventory, int a, int b) {
  return CostMatrix(inventory, {a, b})(0, 1);
}

std::vector<std::string> PreferredAllocation(const NodeInventory& inventory,
                                             const Resource& resource,
                                             const PreferredRequest& request) {
  return PreferredAllocation(inventory, resource, request, nullptr);
}

std::vector<std::string> PreferredAllocation(const NodeInventory& inventory,
                                             const Resource& resource,
                                             const PreferredRequest& request,
                                             const std::function<bool()>& cancelled) {
  std::unordered_map<std::string, int> card_of;
  card_of.reserve(resource.devices.size());
  for (const auto& d : resource.devices) card_of[d.id] = d.card;

  std::set<std::string> available(request.available.begin(), request.available.end());
  std::set<std::string> must(request.must_include.begin(), request.must_include.end());
  if (request.size <= 0 || static_cast<size_t>(request.size) > available.size() ||
      must.size() > static_cast<size_t>(request.size)) {
    return {};
  }
  for (const auto& id : available) {
    if (!card_of.count(id)) return {};
  }
  for (const auto& id : must) {
    if (!available.count(id)) return {};
  }
  const size_t size = static_cast<size_t>(request.size);
  if (size == available.size()) return {available.begin(), available.end()};
  if (static_cast<uint64_t>(available.size()) * size > kMaxProblem) return {};

  // Positions: must_include first, then the other candidates, each sorted.
  std::vector<std::string> ids(must.begin(), must.end());
  for (const auto& id : available) {
    if (!must.count(id)) ids.push_back(id);
  }
  std::vector<int> cards;
  cards.reserve(ids.size());
  for (const auto& id : ids) cards.push_back(card_of[id]);
  Work work(cancelled);
  if (work.Cancelled()) return {};
  const CostMatrix cost(inventory, cards);
  const size_t n = ids.size();
  const size_t k = size - must.size();

  std::vector<size_t> chosen;
  const uint64_t combinations = Choose(n - must.size(), k, kExhaustiveLimit);
  if (combinations <= kExhaustiveLimit && combinations * (1 + k * k) <= kWorkBudget) {
    chosen = Exhaustive(cost, must.size(), n, k, work);
    if (chosen.empty()) return {};
  } else {
    Growing best(n);
    if (!must.empty()) {
      for (size_t i = 0; i < must.size(); ++i) best.Add(cost, i);
      GrowGreedy(cost, best, size, work);
    } else {
      // Grow from every seed if the budget allows, else from evenly spaced
      // ones (deterministic either way).
      const uint64_t per_seed = 2 * static_cast<uint64_t>(n) * size;
      const size_t seeds = static_cast<size_t>(
          std::clamp<uint64_t>(kWorkBudget / 2 / std::max<uint64_t>(per_seed, 1), 1, n));
      bool have = false;
      for (size_t s = 0; s < seeds; ++s) {
        if (work.Cancelled()) return {};
        const size_t seed = s * n / seeds;
        Growing g(n);
        g.Add(cost, seed);
        GrowGreedy(cost, g, size, work);
        if (!have || g.total < best.total) {
          best = std::move(g);
          have = true;
        }
      }
    }
    Improve(cost, best, must.size(), work);
    if (work.Cancelled()) return {};
    chosen = std::move(best.set);
  }
  std::vector<std::string> out;
  out.reserve(chosen.size());
  for (size_t i : chosen) out.push_back(ids[i]);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace hcudp
