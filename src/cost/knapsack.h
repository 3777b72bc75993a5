// Exact multiple-choice knapsack: pick one option per item to minimise total cost under a
// capacity. Piper solves this per stage with a greedy that is provably suboptimal; we solve it
// exactly (Pareto-frontier dynamic programme with bound pruning).
#pragma once

#include <limits>
#include <vector>

namespace paraplan {

struct KnapsackOption {
  double weight = 0;  ///< e.g. memory bytes
  double cost = 0;    ///< e.g. time
};

struct KnapsackResult {
  double cost = std::numeric_limits<double>::infinity();  ///< +inf when nothing fits
  std::vector<int> choice;  ///< per item, the option index (empty when infeasible)
};

/// items[i] lists item i's options (at least one each). Minimises Σ cost subject to
/// Σ weight <= capacity. Deterministic: the same items give the same choice.
KnapsackResult solve_knapsack(const std::vector<std::vector<KnapsackOption>>& items,
                              double capacity);

}  // namespace paraplan
