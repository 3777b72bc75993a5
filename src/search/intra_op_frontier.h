// The time–memory–devices frontier of the intra-operator planner (TensorOpt's question on PaSE's
// networks): every assignment of configurations that no other beats in all of (the network's
// objective, memory per device, devices used), exactly, by variable elimination over Pareto sets
// - each table entry holds the non-dominated (time, memory) pairs of the eliminated variables
// instead of one minimum, with back-pointers to rebuild each point's assignment.
#pragma once

#include <cstdint>
#include <vector>

#include "cost/intra_op_network.h"

namespace paraplan {

struct IntraOpFrontierOptions {
  /// 0: the exact frontier. ε > 0: every set keeps a point only if it is more than the fraction ε
  /// leaner than the faster point kept before it (TensorOpt's coarser memory granularity): sets
  /// stay small (about ln(most ÷ least memory) ÷ ε points), the points are still real shardings
  /// with their exact figures, and every sharding of the exact frontier has one at most as slow
  /// within a factor (1 − ε)^-depth of its memory (depth: elimination levels that pruned it);
  /// the fastest and the leanest sharding are exact under any step.
  double memory_step = 0;
  /// Refuse (Error kLimit) when one elimination's tables would hold more points than this at
  /// once (about 40 bytes each).
  std::int64_t max_points = std::int64_t{1} << 25;
  /// 0: none; else Error(kLimit) once the search has run this long.
  double time_limit_s = 0;
};

struct IntraOpFrontierPoint {
  double objective = 0;     ///< the network's objective of `choice`
  double memory_bytes = 0;  ///< Σ over variables of the configuration's memory
  int devices = 0;          ///< max over variables of the configuration's devices
  std::vector<int> choice;  ///< configuration index per variable
};

struct IntraOpFrontierResult {
  /// Non-dominated in (objective, memory, devices); fastest first, then leaner, then fewer
  /// devices.
  std::vector<IntraOpFrontierPoint> points;
  std::int64_t stored_points = 0;  ///< points held in every table of every solve
  std::int64_t largest_set = 0;    ///< the most points one table entry held
  int solves = 0;                  ///< eliminations run (one per device bound)
};

/// Exact frontier: for every device bound D (each distinct device count of a configuration), the
/// (objective, memory) Pareto set of the assignments whose configurations all use at most D
/// devices; then the points no other dominates in the three objectives. Ties between assignments
/// of equal objectives: a deterministic one (the elimination's smallest provenance).
/// Error(kInput) if `resources` does not match the network; Error(kLimit) beyond max_points.
IntraOpFrontierResult intra_op_frontier(const IntraOpNetwork& net,
                                        const IntraOpResources& resources,
                                        const IntraOpFrontierOptions& options = {});

/// Exhaustive twin for tests: every assignment (small networks only), exact.
IntraOpFrontierResult brute_force_intra_op_frontier(const IntraOpNetwork& net,
                                                    const IntraOpResources& resources,
                                                    const IntraOpFrontierOptions& options = {});

}  // namespace paraplan
