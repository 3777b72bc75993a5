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

}  // namespace paraplan
