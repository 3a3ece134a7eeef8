#include <algorithm>
#include <map>
#include <set>

#include "hcudp/preferred.h"

namespace hcudp {
namespace {

constexpr uint64_t kExhaustiveLimit = 50000;

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

// Pair costs between the involved devices, by position.
class CostMatrix {
 public:
  CostMatrix(const NodeInventory& inventory, const std::vector<int>& cards) : n_(cards.size()) {
    cost_.resize(n_ * n_, 0);
    for (size_t i = 0; i < n_; ++i) {
      for (size_t j = i + 1; j < n_; ++j) {
        uint64_t c = CardPairCost(inventory, cards[i], cards[j]);
        cost_[i * n_ + j] = cost_[j * n_ + i] = c;
      }
    }
  }
  uint64_t operator()(size_t i, size_t j) const { return cost_[i * n_ + j]; }
  // Cost added by putting `x` next to every member of `set`.
  uint64_t Added(size_t x, const std::vector<size_t>& set) const {
    uint64_t sum = 0;
    for (size_t s : set) sum += (*this)(x, s);
    return sum;
  }
  uint64_t Total(const std::vector<size_t>& set) const {
    uint64_t sum = 0;
    for (size_t i = 0; i < set.size(); ++i) {
      for (size_t j = i + 1; j < set.size(); ++j) sum += (*this)(set[i], set[j]);
    }
    return sum;
  }

 private:
  size_t n_;
  std::vector<uint64_t> cost_;
};

// Positions [0, must) are fixed; choose `k` of [must, n).
std::vector<size_t> Exhaustive(const CostMatrix& cost, size_t must, size_t n, size_t k) {
  std::vector<size_t> base;
  for (size_t i = 0; i < must; ++i) base.push_back(i);
  std::vector<size_t> pick(k);
  for (size_t i = 0; i < k; ++i) pick[i] = must + i;
  std::vector<size_t> best;
  uint64_t best_cost = UINT64_MAX;
  while (true) {
    std::vector<size_t> set = base;
    set.insert(set.end(), pick.begin(), pick.end());
    uint64_t c = cost.Total(set);
    if (c < best_cost) {
      best_cost = c;
      best = set;
    }
    // Next combination in lexicographic order.
    size_t i = k;
    while (i > 0 && pick[i - 1] == n - k + (i - 1)) --i;
    if (i == 0) break;
    ++pick[i - 1];
    for (size_t j = i; j < k; ++j) pick[j] = pick[j - 1] + 1;
  }
  return best;
}

std::vector<size_t> GrowGreedy(const CostMatrix& cost, std::vector<size_t> set, size_t n,
                               size_t size) {
  std::vector<bool> in(n, false);
  for (size_t s : set) in[s] = true;
  while (set.size() < size) {
    size_t best = n;
    uint64_t best_cost = UINT64_MAX;
    for (size_t x = 0; x < n; ++x) {
      if (in[x]) continue;
      uint64_t c = cost.Added(x, set);
      if (c < best_cost) {
        best_cost = c;
        best = x;
      }
    }
    if (best == n) break;
    in[best] = true;
    set.push_back(best);
  }
  return set;
}

// Swap a free member for an outsider while that lowers the total.
void Improve(const CostMatrix& cost, std::vector<size_t>& set, size_t must, size_t n) {
  for (int round = 0; round < 100; ++round) {
    bool improved = false;
    std::vector<bool> in(n, false);
    for (size_t s : set) in[s] = true;
    for (size_t m = 0; m < set.size() && !improved; ++m) {
      if (set[m] < must) continue;
      std::vector<size_t> rest = set;
      rest.erase(rest.begin() + static_cast<std::ptrdiff_t>(m));
      uint64_t current = cost.Added(set[m], rest);
      for (size_t x = must; x < n; ++x) {
        if (in[x]) continue;
        if (cost.Added(x, rest) < current) {
          set[m] = x;
          improved = true;
          break;
        }
      }
    }
    if (!improved) return;
  }
}

}  // namespace

uint64_t CardPairCost(const NodeInventory& inventory, int a, int b) {
  if (a == b) return 0;
  LinkType type = LinkType::kPcie;
  uint64_t weight = 40;
  uint64_t hops = 2;
  const Link* link = inventory.FindLink(a, b);
  if (link == nullptr) link = inventory.FindLink(b, a);
  if (link != nullptr) {
    type = link->type;
    weight = static_cast<uint64_t>(std::max(0, link->weight));
    hops = static_cast<uint64_t>(std::max(0, link->hops));
  }
  uint64_t link_class = (type == LinkType::kHsl || type == LinkType::kHyswitch) ? 0 : 1;
  const Card* ca = inventory.FindCard(a);
  const Card* cb = inventory.FindCard(b);
  uint64_t numa = (ca != nullptr && cb != nullptr && ca->numa_node == cb->numa_node) ? 0 : 1;
  return link_class * 1000000000000ull + std::min<uint64_t>(weight, 1000000) * 100000ull +
         std::min<uint64_t>(hops, 1000) * 100ull + numa;
}

std::vector<std::string> PreferredAllocation(const NodeInventory& inventory,
                                             const Resource& resource,
                                             const PreferredRequest& request) {
  std::map<std::string, int> card_of;
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

  // Positions: must_include first, then the other candidates, each sorted.
  std::vector<std::string> ids(must.begin(), must.end());
  for (const auto& id : available) {
    if (!must.count(id)) ids.push_back(id);
  }
  std::vector<int> cards;
  cards.reserve(ids.size());
  for (const auto& id : ids) cards.push_back(card_of[id]);
  const CostMatrix cost(inventory, cards);
  const size_t n = ids.size();
  const size_t k = size - must.size();

  std::vector<size_t> chosen;
  if (Choose(n - must.size(), k, kExhaustiveLimit) <= kExhaustiveLimit) {
    chosen = Exhaustive(cost, must.size(), n, k);
  } else {
    std::vector<size_t> base;
    for (size_t i = 0; i < must.size(); ++i) base.push_back(i);
    if (!base.empty()) {
      chosen = GrowGreedy(cost, base, n, size);
    } else {
      uint64_t best_cost = UINT64_MAX;
      for (size_t seed = 0; seed < n; ++seed) {
        auto set = GrowGreedy(cost, {seed}, n, size);
        uint64_t c = cost.Total(set);
        if (c < best_cost) {
          best_cost = c;
          chosen = set;
        }
      }
    }
    Improve(cost, chosen, must.size(), n);
  }
  std::vector<std::string> out;
  out.reserve(chosen.size());
  for (size_t i : chosen) out.push_back(ids[i]);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace hcudp
