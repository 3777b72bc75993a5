// Pipeline search under DAPPLE's latency model: pipeline replicas rp, contiguous stages along
// paths of the antichain DAG, a GPU count per stage (a multiple of rp) and contiguous placement
// in machine order, and every candidate DAPPLE's own planner generates (pseudo data
// parallelism, its straight 2- and N-stage pipelines with its allocator's GPU order,
// bipartitions with FreshFirst / AppendFirst / ScatterFirst placements) and plain data
// parallelism, so its plan is never slower than either under the same model.
#pragma once

#include "cost/dapple_cost.h"
#include "ir/plan.h"

namespace paraplan {

struct DappleSearchResult {
  DappleLayout layout;
  Plan plan;
  double data_parallel_latency_s = 0;
  long long layouts_scored = 0;
};

/// Every one- and two-stage layout is scored; for up to `max_dp_states` states, a label
/// programme adds multi-stage layouts whose stages hold whole units of rp GPUs, for every rp
/// that leaves at most 16 units.
DappleSearchResult search_dapple(const DappleCostModel& cost, int max_dp_states = 400);

}  // namespace paraplan
