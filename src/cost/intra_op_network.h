// What an intra-operator cost model gives the intra-operator planner: one variable per layer
// (its candidate configurations), a cost per configuration, and a cost per pair of configurations
// of layers joined by tensor flows. The objective is the sum of all of them (a min-sum pairwise
// cost network).
#pragma once

#include <memory>
#include <vector>

namespace paraplan {

/// Pairwise costs between layers u and v. Configurations that look the same to the pair (same
/// tensor projections) share a class, so the table is classes(u) × classes(v), not K_u × K_v.
struct PairFactor {
  int u = 0;
  int v = 0;
  std::vector<int> u_class;  ///< configuration of u → class
  std::vector<int> v_class;  ///< configuration of v → class
  int u_classes = 0;
  int v_classes = 0;
  /// Row-major u_classes × v_classes; pairs with equal tables may share one.
  std::shared_ptr<const std::vector<double>> cost;

  double at(int cu, int cv) const { return (*cost)[u_class[cu] * v_classes + v_class[cv]]; }
};

struct IntraOpNetwork {
  std::vector<std::vector<double>> unary;  ///< per variable, per configuration
  std::vector<PairFactor> pairs;           ///< at most one per pair of variables

  int size() const { return static_cast<int>(unary.size()); }
  /// The objective of one assignment (one configuration index per variable).
  double evaluate(const std::vector<int>& choice) const {
    double total = 0;
    for (int v = 0; v < size(); ++v) total += unary[v][choice[v]];
    for (const auto& p : pairs) total += p.at(choice[p.u], choice[p.v]);
    return total;
  }
};

/// What the frontier adds to the network, per configuration c of each variable v: the memory
/// per device it takes, memory_bytes[v][c] (summed over variables), and the devices it uses,
/// devices[v][c] (the most over variables).
struct IntraOpResources {
  std::vector<std::vector<double>> memory_bytes;
  std::vector<std::vector<int>> devices;
};

}  // namespace paraplan
