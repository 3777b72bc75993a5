// Parmesan's first phase for graphs too large for the exact pipeline search: coarsen the layer
// graph to k super-nodes (contiguous segments of a topological order, so the quotient graph stays
// acyclic), solve the coarse graph exactly, then uncoarsen (each stage's per-layer options chosen
// by the exact knapsack on its real layers) and refine (move layers across stage boundaries while
// the bottleneck, then the sum of stage times, falls). Under Piper's cost model.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "cost/piper_cost.h"
#include "ir/model.h"
#include "ir/plan.h"
#include "search/pipeline.h"
#include "search/pipeline_iteration.h"

namespace paraplan {

struct CoarseModel {
  Model model;                            ///< one layer per super-node
  std::vector<std::vector<int>> members;  ///< per super-node: its layers, ascending
};

/// At most `nodes` super-nodes (the model itself if it has no more layers): a topological order
/// (smallest index first) cut into segments of balanced compute (each layer's fastest option at
/// its smallest degree), each cut placed where the fewest bytes cross within a quarter segment
/// of the balanced point. A super-node has the degrees all its layers have, each with two
/// options: every layer's fastest, and every layer's leanest (smallest memory per micro-batch in
/// flight), each with its layers' tensor-parallel sync bytes on the edges that leave the
/// segment; edges between segments are summed. A coarse stage therefore prices as the same
/// layers with those options, and the uncoarsened plan (exact options per stage) is no worse.
CoarseModel coarsen(const Model& model, int nodes);

/// The iteration objective on a coarsened graph: `replay(model, plan)` is an evaluated plan's
/// iteration time (seconds) on `model` (the coarse graph or the original).
struct CoarseIterationOptions {
  std::function<double(const Model&, const Plan&)> replay;
  IterationSearchOptions search;  ///< stage count and widths, work limit
};

struct CoarsePlanResult {
  Plan plan;                         ///< on the original model, scored by its Piper cost model
  double coarse_objective = 0;       ///< the coarse graph's optimum
  double uncoarsened_objective = 0;  ///< before refinement
  int super_nodes = 0;
  int moves = 0;  ///< layers moved by refinement
  /// Under the iteration objective: the plan's replay on the original model and the
  /// steady-state coarse optimum's (uncoarsened), the coarse search's work. Never proven
  /// optimal: the coarse graph restricts where stages may be cut.
  struct Iteration {
    double iteration_s = 0, steady_state_plan_iteration_s = 0;
    std::uint64_t stage_prices = 0, plans_replayed = 0;
  };
  std::optional<Iteration> iteration;
};

/// Error(kInfeasible)-free: plan.feasible is false when the coarse graph has no plan. With
/// `iteration`: the coarse graph is searched for the least iteration (search_pipeline_iteration,
/// seeded by its steady-state optimum); both plans are uncoarsened, refined and replayed on the
/// original model, and the faster kept (ties: the steady-state one; with a stage count or widths
/// asked for, the searched one, infeasible when none fits them).
CoarsePlanResult plan_coarsened(const Model& model, const PiperSettings& settings, int nodes,
                                const PipelineSearchOptions& options = {},
                                const CoarseIterationOptions* iteration = nullptr);

}  // namespace paraplan
