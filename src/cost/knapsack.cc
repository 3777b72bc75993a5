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

// Items whose Pareto options are at most two reduce to a 0-1 problem: every item starts on its
// lean (light) option and may be upgraded to its cheap (fast) one, gaining `value` in cost for
// `weight` more weight. Upgrades are considered in decreasing value density; states
// (weight used, value gained) keep the Pareto frontier, and each state is pruned by the
// fractional (Dantzig) bound of the remaining upgrades, found in O(log n) from prefix sums.
struct Upgrade {
  double value;
  double weight;
  int item;
};

struct BinaryState {
  double weight, value;
  int parent;
  bool take;
};

// Returns, per upgrade (in the given order), whether it is taken in an optimal solution.
// `floor_value`: only solutions gaining more than this matter.
std::vector<char> best_upgrades(const std::vector<Upgrade>& xs, double room, double floor_value,
                                double& best_value) {
  const int n = static_cast<int>(xs.size());
  std::vector<double> pw(n + 1, 0.0), pv(n + 1, 0.0);  // prefix sums
  for (int j = 0; j < n; ++j) pw[j + 1] = pw[j] + xs[j].weight, pv[j + 1] = pv[j] + xs[j].value;
  // Fractional best value of upgrades i..n-1 within room r, and the value of its integral
  // prefix (a feasible completion).
  auto bound = [&](int i, double r, double& feasible) {
    // Largest m with pw[m] - pw[i] <= r.
    int lo = i, hi = n;
    while (lo < hi) {
      int mid = (lo + hi + 1) / 2;
      if (pw[mid] - pw[i] <= r)
        lo = mid;
      else
        hi = mid - 1;
    }
    feasible = pv[lo] - pv[i];
    double v = feasible;
    if (lo < n) v += xs[lo].value * (r - (pw[lo] - pw[i])) / xs[lo].weight;
    return v;
  };
  double incumbent = 0;
  bound(0, room, incumbent);
  incumbent = std::max(incumbent, floor_value);
  // Differences of prefix sums lose the low bits of small values next to large ones: a state
  // is dropped only when its bound is below the incumbent by more than that error.
  const double error = 8.0 * (n + 2) * std::numeric_limits<double>::epsilon() * pv[n];
  std::vector<std::vector<BinaryState>> layers(n + 1);
  layers[0].push_back({0.0, 0.0, -1, false});
  std::vector<BinaryState> skip, take;
  for (int i = 0; i < n; ++i) {
    skip.clear();
    take.clear();
    const auto& cur = layers[i];
    for (int s = 0; s < static_cast<int>(cur.size()); ++s) {
      for (int t = 0; t < 2; ++t) {
        double w = cur[s].weight + (t ? xs[i].weight : 0.0);
        if (w > room) continue;
        double v = cur[s].value + (t ? xs[i].value : 0.0);
        double completion = 0;
        double ub = v + bound(i + 1, room - w, completion);
        incumbent = std::max(incumbent, v + completion);
        if (ub < incumbent * (1 - 1e-12) - error) continue;
        (t ? take : skip).push_back({w, v, s, t == 1});
      }
    }
    // Both lists ascend in weight (they come from an ascending frontier): merge, keeping states
    // whose value strictly rises with weight.
    auto& keep = layers[i + 1];
    std::size_t a = 0, b = 0;
    while (a < skip.size() || b < take.size()) {
      bool from_skip = b == take.size() ||
                       (a < skip.size() &&
                        (skip[a].weight < take[b].weight ||
                         (skip[a].weight == take[b].weight && skip[a].value >= take[b].value)));
      const BinaryState& st = from_skip ? skip[a++] : take[b++];
      if (keep.empty() || st.value > keep.back().value) keep.push_back(st);
    }
  }
  std::vector<char> chosen(n, 0);
  const auto& last = layers[n];
  best_value = -1;
  if (last.empty()) return chosen;
  int best = 0;
  for (int s = 1; s < static_cast<int>(last.size()); ++s)
    if (last[s].value > last[best].value) best = s;
  best_value = last[best].value;
  for (int i = n, s = best; i > 0; --i) {
    chosen[i - 1] = layers[i][s].take;
    s = layers[i][s].parent;
  }
  return chosen;
}

// Per item: the cheapest option (ties: lighter) and the lightest (ties: cheaper), their sums,
// and whether every option is dominated by one of the two (a binary choice per item).
struct Extremes {
  std::vector<int> cheap, lean;
  double cheap_weight = 0, cheap_cost = 0, lean_weight = 0, lean_cost = 0;
  bool binary = true;
};

Extremes extremes(std::span<const std::vector<KnapsackOption>> items) {
  const int n = static_cast<int>(items.size());
  Extremes ex;
  ex.cheap.resize(n);
  ex.lean.resize(n);
  for (int i = 0; i < n; ++i) {
    int c = 0, l = 0;
    const auto& opts = items[i];
    for (int o = 1; o < static_cast<int>(opts.size()); ++o) {
      if (opts[o].cost < opts[c].cost ||
          (opts[o].cost == opts[c].cost && opts[o].weight < opts[c].weight))
        c = o;
      if (opts[o].weight < opts[l].weight ||
          (opts[o].weight == opts[l].weight && opts[o].cost < opts[l].cost))
        l = o;
    }
    ex.cheap[i] = c;
    ex.lean[i] = l;
    ex.cheap_weight += opts[c].weight;
    ex.cheap_cost += opts[c].cost;
    ex.lean_weight += opts[l].weight;
    ex.lean_cost += opts[l].cost;
    for (const auto& x : opts) {
      bool dominated = (x.weight >= opts[c].weight && x.cost >= opts[c].cost) ||
                       (x.weight >= opts[l].weight && x.cost >= opts[l].cost);
      ex.binary = ex.binary && dominated;
    }
  }
  return ex;
}

// Binary items: everyone lean, then upgrade to the cheap option where room allows (an exact 0/1
// knapsack over the upgrades, stopped at its root bound when that cannot beat the cutoff).
KnapsackResult solve_binary(std::span<const std::vector<KnapsackOption>> items, const Extremes& ex,
                            double capacity, double cutoff) {
  const int n = static_cast<int>(items.size());
  KnapsackResult result;
  // Everyone ex.lean, then upgrade to the ex.cheap option where room allows.
  double room = capacity - ex.lean_weight;
  std::vector<Upgrade> xs;
  for (int i = 0; i < n; ++i) {
    double value = items[i][ex.lean[i]].cost - items[i][ex.cheap[i]].cost;
    double weight = items[i][ex.cheap[i]].weight - items[i][ex.lean[i]].weight;
    if (ex.cheap[i] != ex.lean[i] && value > 0 && weight > 0) xs.push_back({value, weight, i});
  }
  std::stable_sort(xs.begin(), xs.end(), [](const Upgrade& a, const Upgrade& b) {
    return a.value * b.weight > b.value * a.weight;
  });
  // Root fractional bound: if even it cannot get below the cutoff, stop here.
  double gain_bound = 0, w = 0;
  for (const auto& x : xs) {
    if (w + x.weight <= room) {
      w += x.weight;
      gain_bound += x.value;
    } else {
      gain_bound += x.value * (room - w) / x.weight;
      break;
    }
  }
  if (ex.lean_cost - gain_bound >= cutoff) {
    result.cost = ex.lean_cost - gain_bound;
    result.exact = false;
    return result;
  }
  double best_gain = 0;
  std::vector<char> take = best_upgrades(xs, room, ex.lean_cost - cutoff, best_gain);
  if (best_gain < 0 || ex.lean_cost - best_gain >= cutoff) {
    result.cost = cutoff;
    result.exact = false;
    return result;
  }
  result.choice = ex.lean;
  for (std::size_t j = 0; j < xs.size(); ++j)
    if (take[j]) result.choice[xs[j].item] = ex.cheap[xs[j].item];
  result.cost = 0;
  for (int i = 0; i < n; ++i) result.cost += items[i][result.choice[i]].cost;
  return result;
}

// An incumbent from a greedy repair of the all-cheap choice: the option saving weight at the
// lowest cost per byte, until it fits; infinity when it cannot.
double greedy_incumbent(std::span<const std::vector<KnapsackOption>> items, const Extremes& ex,
                        double capacity) {
  const int n = static_cast<int>(items.size());
  std::vector<int> pick = ex.cheap;
  double weight = ex.cheap_weight, cost = ex.cheap_cost;
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
  return weight <= capacity ? cost : std::numeric_limits<double>::infinity();
}

// The general case: a layer-by-layer Pareto frontier of (weight, cost), pruned by what the
// remaining items need at least and by the incumbent or cutoff.
KnapsackResult solve_general(std::span<const std::vector<KnapsackOption>> items, const Extremes& ex,
                             double capacity, double cutoff) {
  const int n = static_cast<int>(items.size());
  KnapsackResult result;
  // Suffix minima of weight and cost: what the remaining items need at least.
  std::vector<double> rest_min_weight(n + 1, 0.0), rest_min_cost(n + 1, 0.0);
  for (int i = n - 1; i >= 0; --i) {
    rest_min_weight[i] = rest_min_weight[i + 1] + items[i][ex.lean[i]].weight;
    rest_min_cost[i] = rest_min_cost[i + 1] + items[i][ex.cheap[i]].cost;
  }
  const double incumbent = greedy_incumbent(items, ex, capacity);
  // Slack so that rounding differences between sums never prune the optimum.
  double bound = std::min(incumbent, cutoff);
  bound += 1e-9 * std::abs(bound);
  std::vector<std::vector<State>> layers(n + 1);
  layers[0].push_back({0.0, 0.0, -1, -1});
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
    if (keep.empty()) {
      result.cost = cutoff;
      result.exact = false;
      return result;
    }
  }
  const auto& last = layers[n];
  int best = 0;
  for (int s = 1; s < static_cast<int>(last.size()); ++s)
    if (last[s].cost < last[best].cost) best = s;
  if (last[best].cost >= cutoff) {
    result.cost = cutoff;
    result.exact = false;
    return result;
  }
  result.cost = last[best].cost;
  result.choice.assign(n, 0);
  for (int i = n, s = best; i > 0; --i) {
    result.choice[i - 1] = layers[i][s].option;
    s = layers[i][s].parent;
  }
  return result;
}

}  // namespace

KnapsackResult solve_knapsack(std::span<const std::vector<KnapsackOption>> items, double capacity,
                              double cutoff) {
  const Extremes ex = extremes(items);
  KnapsackResult result;
  if (ex.cheap_weight <= capacity) {
    result.cost = ex.cheap_cost;
    result.choice = ex.cheap;
    return result;
  }
  if (ex.lean_weight > capacity) return result;  // nothing fits: +inf, exact
  return ex.binary ? solve_binary(items, ex, capacity, cutoff)
                   : solve_general(items, ex, capacity, cutoff);
}

}  // namespace paraplan

namespace paraplan {

// Items by cost per byte saved (ties: more bytes first), so that the fractional (Dantzig) bound
// of any suffix is its greedy prefix plus a fraction of the next item. States are the Pareto
// frontier of (bytes saved, cost) over the items seen, pruned by that bound against the best
// complete set (the greedy completion of any state is one).
CoverResult min_cost_cover(CoverScratch& scratch, double need, double cutoff) {
  auto& items = scratch.items;
  CoverResult result;
  // Free savings first: they are in every optimum.
  std::size_t n = 0;
  for (const CoverItem& x : items) {
    if (x.cost <= 0)
      need -= x.weight;
    else
      items[n++] = x;
  }
  items.resize(n);
  if (need <= 0) {
    result.cost = 0;
    return result;
  }
  std::sort(items.begin(), items.end(), [](const CoverItem& a, const CoverItem& b) {
    const double l = a.cost * b.weight, r = b.cost * a.weight;
    return l < r || (l == r && (a.weight > b.weight || (a.weight == b.weight && a.cost < b.cost)));
  });
  auto& pw = scratch.prefix_weight;
  auto& pc = scratch.prefix_cost;
  pw.assign(n + 1, 0.0);
  pc.assign(n + 1, 0.0);
  for (std::size_t j = 0; j < n; ++j) {
    pw[j + 1] = pw[j] + items[j].weight;
    pc[j + 1] = pc[j] + items[j].cost;
  }
  if (pw[n] < need) return result;  // +inf: even every item saves too little
  // Fractional cost of covering `e` with items i.., and the cost of the greedy prefix that
  // covers it (+inf if none does).
  auto bound = [&](std::size_t i, double e, double& complete) {
    // Smallest m > i with pw[m] - pw[i] >= e.
    std::size_t lo = i + 1, hi = n + 1;
    while (lo < hi) {
      std::size_t mid = (lo + hi) / 2;
      if (pw[mid] - pw[i] >= e)
        hi = mid;
      else
        lo = mid + 1;
    }
    if (lo > n) {
      complete = std::numeric_limits<double>::infinity();
      return complete;
    }
    complete = pc[lo] - pc[i];
    const CoverItem& last = items[lo - 1];
    const double before = pw[lo - 1] - pw[i];
    return pc[lo - 1] - pc[i] + last.cost * (e - before) / last.weight;
  };
  double incumbent = std::numeric_limits<double>::infinity();
  const double root = bound(0, need, incumbent);
  if (root >= cutoff) {
    result.cost = root;
    result.exact = false;
    return result;
  }
  // Differences of prefix sums lose the low bits of small costs next to large ones: a state is
  // dropped only when its bound exceeds the best by more than that error.
  const double error = 8.0 * (n + 2) * std::numeric_limits<double>::epsilon() * pc[n];
  auto hopeless = [&](double lower) {
    const double best = std::min(incumbent, cutoff);
    return lower >= best + 1e-12 * std::abs(best) + error;
  };
  auto& states = scratch.states;
  auto& next = scratch.next;
  auto& taken = scratch.taken;
  states.assign(1, {0.0, 0.0});  // by bytes saved, descending; cost strictly falling
  for (std::size_t j = 0; j < n && !states.empty(); ++j) {
    const CoverItem& x = items[j];
    taken.clear();
    for (const auto& st : states) {
      const double w = st.weight + x.weight, c = st.cost + x.cost;
      if (hopeless(c)) continue;
      if (w >= need) {
        incumbent = std::min(incumbent, c);
        continue;
      }
      double complete = 0;
      if (hopeless(c + bound(j + 1, need - w, complete))) continue;
      incumbent = std::min(incumbent, c + complete);
      taken.push_back({w, c});
    }
    // The states that skip item j must still reach the need from items j + 1 on.
    std::size_t kept = 0;
    for (const auto& st : states) {
      double complete = 0;
      if (hopeless(st.cost + bound(j + 1, need - st.weight, complete))) continue;
      incumbent = std::min(incumbent, st.cost + complete);
      states[kept++] = st;
    }
    states.resize(kept);
    // Merge both (bytes saved descending), keeping the Pareto frontier.
    next.clear();
    std::size_t a = 0, b = 0;
    while (a < taken.size() || b < states.size()) {
      const bool from_taken =
          b == states.size() ||
          (a < taken.size() &&
           (taken[a].weight > states[b].weight ||
            (taken[a].weight == states[b].weight && taken[a].cost <= states[b].cost)));
      const auto& st = from_taken ? taken[a++] : states[b++];
      if (next.empty() || st.cost < next.back().cost) next.push_back(st);
    }
    states.swap(next);
  }
  if (incumbent < cutoff) {
    result.cost = incumbent;
  } else {
    result.cost = cutoff;
    result.exact = false;
  }
  return result;
}

}  // namespace paraplan
