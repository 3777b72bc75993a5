// DAPPLE's own candidate plans (HPGO 0.9.1's orchestrate(), docs/specs/dapple.md §3.1 and §5),
// regenerated so that paraplan's DAPPLE-model search can score every one of them: pseudo data
// parallelism on i·⌊N/i⌋ GPUs, the straight 2-stage pipeline of N/2 replicas, the straight
// N-stage pipeline with one GPU per stage (DAPPLE's occupancy-keyed stage DP), and every 2-stage
// bipartition whose stages take their GPUs by the allocator's three strategies (FreshFirst,
// AppendFirst, ScatterFirst: groups that take GPUs from every machine).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "cost/dapple_cost.h"

namespace paraplan {

/// DAPPLE's `next_cards(occupied, g)`: the GPU sets (ascending, distinct, in a fixed order:
/// FreshFirst, AppendFirst, ScatterFirst, duplicates dropped) its three strategies give; empty
/// when fewer than g GPUs are free. `machine_ends` as DappleSettings.
std::vector<std::vector<int>> dapple_next_cards(const std::vector<int>& machine_ends,
                                                const std::vector<bool>& occupied, int g);
/// `next_cards_with_replica(occupied, g, rp)`: the unions of rp successive next_cards(·, g)
/// calls, each on the occupancy the previous left, over every strategy sequence (distinct sets,
/// ascending order of the sorted sets).
std::vector<std::vector<int>> dapple_next_cards_with_replica(const std::vector<int>& machine_ends,
                                                             const std::vector<bool>& occupied,
                                                             int g, int rp);

struct DappleCandidate {
  std::string family;  ///< "data parallel i=K", "straight 2", "straight N", "bipartition"
  DappleLayout layout;
};

/// Every candidate DAPPLE's planner scores for this profile and machine layout (§5.3 (a)–(d)):
/// its stage DPs choose their cuts with 2·a in the bottleneck as DAPPLE does, the bipartitions
/// with 1·a. The straight N-stage pipeline needs at least N states (DAPPLE panics without) and
/// is generated for at most `max_straight_states` states (its DP is quadratic in them).
void for_each_dapple_candidate(const DappleCostModel& cost,
                               const std::function<void(const DappleCandidate&)>& visit,
                               int max_straight_states = 400);

}  // namespace paraplan
