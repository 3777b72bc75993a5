// The placer: which device runs each stage replica's tensor-parallel ranks, minimising the
// placement cost model's slowest stage (cost/placement.h) on the cluster's real links.
//
// 1. Start from rank order (stages on consecutive devices) and improve it by local search:
//    move a slot to a free device or swap two slots' devices, first improvement in a fixed
//    order, comparing (slowest stage, sum over stages) so that plateaus of the maximum are left
//    by lowering the other stages; until no move improves or the evaluation budget is spent.
// 2. Branch and bound: slots in order, devices in order (one per class of free twins: devices
//    on the same switches by equal links whose routes mirror each other), a partial placement
//    pruned when its cost (which only grows as slots are placed) reaches the incumbent's. When it
//    finishes within its node budget the result is optimal (`exact`); otherwise the result reports
//    its gap to the cost model's lower bound.
#pragma once

#include <vector>

#include "cost/placement.h"

namespace paraplan {

struct PlacementOptions {
  long long node_limit = 200000;       ///< branch and bound nodes (0: skip it)
  long long evaluation_limit = 20000;  ///< local search cost evaluations
};

struct PlacementResult {
  std::vector<int> device_of_slot;
  double cost_s = 0;             ///< per micro-batch, the slowest stage
  double rank_order_cost_s = 0;  ///< the same for rank order
  double lower_bound_s = 0;      ///< the cost when exact; else the cost model's bound
  bool exact = false;            ///< branch and bound finished: no placement is better
  long long nodes = 0, evaluations = 0;
};

PlacementResult place(const PlacementCostModel& cost, const PlacementOptions& options = {});

/// The brute-force twin: every injective map of slots to devices (tests; up to 8 devices).
PlacementResult place_brute_force(const PlacementCostModel& cost);

}  // namespace paraplan
