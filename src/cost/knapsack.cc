// Exact multiple-choice knapsack by a frontier DP over items: states are (weight, cost) pairs,
// dominated states are dropped, and states that cannot fit or cannot beat the incumbent are pruned.
#include "cost/knapsack.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace paraplan {
namespace {

struct State {
  double weight;
  double cost;
  int parent;  ///< index into the previous layer's states
  int option;
};

}  // namespace

KnapsackResult solve_knapsack(const std::vector<std::vector<KnapsackOption>>& items,
                              double capacity) {
  const int n = static_cast<int>(items.size());
  // Suffix minima of weight and cost: what the remaining items need at least.
  std::vector<double> rest_min_weight(n + 1, 0.0), rest_min_cost(n + 1, 0.0);
  for (int i = n - 1; i >= 0; --i) {
    double w = items[i][0].weight, c = items[i][0].cost;
    for (const auto& o : items[i]) w = std::min(w, o.weight), c = std::min(c, o.cost);
    rest_min_weight[i] = rest_min_weight[i + 1] + w;
    rest_min_cost[i] = rest_min_cost[i + 1] + c;
  }
  KnapsackResult result;
  if (rest_min_weight[0] > capacity) return result;

  // Incumbent: the cheapest option per item if it fits; otherwise a greedy repair gives a bound.
  double incumbent = std::numeric_limits<double>::infinity();
  {
    std::vector<int> pick(n);
    double weight = 0, cost = 0;
    for (int i = 0; i < n; ++i) {
      int best = 0;
      for (int o = 1; o < static_cast<int>(items[i].size()); ++o) {
        const auto& a = items[i][o];
        const auto& b = items[i][best];
        if (a.cost < b.cost || (a.cost == b.cost && a.weight < b.weight)) best = o;
      }
      pick[i] = best;
      weight += items[i][best].weight;
      cost += items[i][best].cost;
    }
    if (weight <= capacity) {
      result.cost = cost;
      result.choice = pick;
      return result;
    }
    // Greedy repair: repeatedly take the swap with the least cost per weight saved.
    while (weight > capacity) {
      int bi = -1, bo = -1;
      double best_ratio = std::numeric_limits<double>::infinity();
      for (int i = 0; i < n; ++i) {
        const auto& cur = items[i][pick[i]];
        for (int o = 0; o < static_cast<int>(items[i].size()); ++o) {
          double saving = cur.weight - items[i][o].weight;
          if (saving <= 0) continue;
          double ratio = (items[i][o].cost - cur.cost) / saving;
          if (ratio < best_ratio) best_ratio = ratio, bi = i, bo = o;
        }
      }
      if (bi < 0) break;
      weight += items[bi][bo].weight - items[bi][pick[bi]].weight;
      cost += items[bi][bo].cost - items[bi][pick[bi]].cost;
      pick[bi] = bo;
    }
    if (weight <= capacity) incumbent = cost;
  }

  // Frontier DP. layers[i] holds the non-dominated states after deciding items 0..i-1.
  std::vector<std::vector<State>> layers(n + 1);
  layers[0].push_back({0.0, 0.0, -1, -1});
  // Slack so that rounding differences between the greedy's sum and the DP's sums never prune
  // the optimum.
  const double bound = incumbent + 1e-9 * std::abs(incumbent);
  std::vector<State> next;
  for (int i = 0; i < n; ++i) {
    next.clear();
    const auto& cur = layers[i];
    for (int s = 0; s < static_cast<int>(cur.size()); ++s) {
      for (int o = 0; o < static_cast<int>(items[i].size()); ++o) {
        double w = cur[s].weight + items[i][o].weight;
        double c = cur[s].cost + items[i][o].cost;
        if (w + rest_min_weight[i + 1] > capacity) continue;
        if (c + rest_min_cost[i + 1] > bound) continue;
        next.push_back({w, c, s, o});
      }
    }
    // Keep the Pareto frontier: ascending weight with strictly decreasing cost. The stable sort
    // keeps the earliest-generated state on exact ties, which makes the choice deterministic.
    std::stable_sort(next.begin(), next.end(), [](const State& a, const State& b) {
      return a.weight < b.weight || (a.weight == b.weight && a.cost < b.cost);
    });
    auto& keep = layers[i + 1];
    for (const auto& st : next)
      if (keep.empty() || st.cost < keep.back().cost) keep.push_back(st);
    if (keep.empty()) return result;
  }
  const auto& last = layers[n];
  int best = 0;
  for (int s = 1; s < static_cast<int>(last.size()); ++s)
    if (last[s].cost < last[best].cost) best = s;
  result.cost = last[best].cost;
  result.choice.assign(n, 0);
  for (int i = n, s = best; i > 0; --i) {
    result.choice[i - 1] = layers[i][s].option;
    s = layers[i][s].parent;
  }
  return result;
}

}  // namespace paraplan
