// Exact multiple-choice knapsack: pick one option per item to minimise total cost under a
// capacity. Piper solves this per stage with a greedy that is provably suboptimal; we solve it
// exactly: a 0-1 Pareto-frontier programme with fractional bounds when every item has at most
// two useful options (Piper's vanilla / recomputation pairs), a general frontier programme
// otherwise.
#pragma once

#include <limits>
#include <span>
#include <vector>

namespace paraplan {

struct KnapsackOption {
  double weight = 0;  ///< e.g. memory bytes
  double cost = 0;    ///< e.g. time
};

struct KnapsackResult {
  /// The minimum cost when `exact`; otherwise a lower bound that is >= the cutoff (+inf when
  /// nothing fits at all).
  double cost = std::numeric_limits<double>::infinity();
  bool exact = true;
  std::vector<int> choice;  ///< per item, the option index (only when exact and finite)
};

/// items[i] lists item i's options (at least one each). Minimises Σ cost subject to
/// Σ weight <= capacity. Solutions costing `cutoff` or more are not needed: the solver may then
/// stop early and answer with a lower bound (exact = false). Deterministic.
KnapsackResult solve_knapsack(std::span<const std::vector<KnapsackOption>> items, double capacity,
                              double cutoff = std::numeric_limits<double>::infinity());

/// A 0-1 covering knapsack: each item saves `weight` (> 0) for `cost` (>= 0); the cheapest set
/// whose savings reach a need. Piper's per-stage choice in this form: every layer on its fastest
/// option, then some moved to their leaner one until the stage fits.
struct CoverItem {
  double weight = 0;
  double cost = 0;
};

/// Buffers reused between calls, so that a solve allocates nothing once they have grown.
struct CoverScratch {
  std::vector<CoverItem> items;
  std::vector<double> prefix_weight, prefix_cost;
  struct State {
    double weight, cost;
  };
  std::vector<State> states, next, taken;
};

struct CoverResult {
  /// The minimum cost when `exact`; otherwise a lower bound that is >= the cutoff; +inf when
  /// all items together do not reach the need (exact).
  double cost = std::numeric_limits<double>::infinity();
  bool exact = true;
};

/// The cheapest subset of `scratch.items` whose weights sum to at least `need`. Costs at or above
/// `cutoff` are not needed. Reorders scratch.items. Deterministic.
CoverResult min_cost_cover(CoverScratch& scratch, double need,
                           double cutoff = std::numeric_limits<double>::infinity());

}  // namespace paraplan
