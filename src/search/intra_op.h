// The intra-operator planner: an exact minimum of a min-sum pairwise cost network (one variable
// per layer, its candidate configurations), by variable elimination with back-pointers.
#pragma once

#include <cstdint>
#include <vector>

#include "cost/intra_op_network.h"
#include "ir/progress.h"

namespace paraplan {

struct IntraOpOptions {
  /// Elimination order: the cheaper (estimated work) of min-degree and min-weight, or one of them
  /// (tests and the benchmark cross-check the optimum under two independent orders).
  enum class Order { kBest, kMinDegree, kMinWeight };
  Order order = Order::kBest;
  /// Refuse (Error kLimit) an elimination whose table would exceed this many entries.
  std::int64_t max_table_entries = std::int64_t{1} << 28;
  /// An elimination whose last dependent's tables involve only it and the eliminated layer sums
  /// them once and visits the layer's configurations in two sorted orders (Fagin's threshold
  /// algorithm) when at least this many prefixes (entries ÷ that dependent's classes) share
  /// the sums; otherwise in one order, bounded by per-class floors. Both are exact; the choice
  /// only moves time (tests use 1 and a huge value to cover both).
  std::int64_t threshold_min_prefixes = 16;
  /// Told how many layers are eliminated; may be null.
  ProgressSink* progress = nullptr;
};

struct IntraOpResult {
  std::vector<int> choice;   ///< configuration index per variable
  double objective = 0;      ///< the network's minimum (re-evaluated from `choice`)
  double table_minimum = 0;  ///< the minimum as the elimination tables summed it (= objective
                             ///< up to rounding; a consistency check)
  // Structure of the solve, for reports and benchmarks.
  std::vector<int> order;          ///< elimination order
  int max_dependent = 0;           ///< max |D(i)| of the order (its induced width)
  double work = 0;                 ///< Σ over steps of table entries × candidate groups
  std::int64_t largest_table = 0;  ///< entries of the largest intermediate table
  int reused_steps = 0;     ///< eliminations whose table an identical earlier one had computed
  int threshold_steps = 0;  ///< eliminations that visited v's groups in two sorted orders
  int mirrored_steps = 0;   ///< eliminations whose table, symmetric in two layers, was half filled
};

/// Greedy elimination order of PaSE: minimum degree in the elimination graph, ties to the
/// smallest index.
std::vector<int> min_degree_order(const IntraOpNetwork& net);
/// Greedy order minimising the table about to be built (Π of domain sizes of the vertex and its
/// neighbours), ties to the smallest index.
std::vector<int> min_weight_order(const IntraOpNetwork& net);

/// Size of an elimination order in PaSE's terms: tables before reduction have
/// Π_{u ∈ D(i) ∪ {v_i}} K_u rows (full configuration counts, no classes).
struct EliminationStats {
  double largest_table = 0;
  double total_rows = 0;  ///< Σ over steps
  int max_dependent = 0;
};
EliminationStats elimination_stats(const IntraOpNetwork& net, const std::vector<int>& order);

/// Exact minimum. Deterministic: among optimal configurations of an eliminated variable (given
/// its neighbours) the smallest index wins. Multi-threaded (oneTBB) on large tables.
IntraOpResult solve_intra_op(const IntraOpNetwork& net, const IntraOpOptions& options = {});

/// Exhaustive twin for tests: every assignment (small networks only). Ties: lexicographically
/// smallest choice.
IntraOpResult brute_force_intra_op(const IntraOpNetwork& net);

}  // namespace paraplan
