// The pipeline planner under the objective users measure: the time of one whole iteration under
// 1F1B — fill and drain, stage-boundary transfers, the data-parallel all-reduce as far as it is not
// hidden, the optimizer step — as a replay of the plan gives it (the caller's `IterationTime`, the
// simulator in api/). Piper's steady-state objective (the bottleneck stage's time per micro-batch)
// ignores all but the steady state; with few micro-batches it picks the wrong plan.
//
// Exact by branch and bound over contiguous-stage plans: every plan's iteration is at least N ×
// its bottleneck stage's cost (the replay runs each stage's N micro-batches one after another on
// its replicas, plus the rest), so once a plan of iteration T is known, only stages costing less
// than T / N can be part of a better one. Plans are built from the last stage to the first (so
// each stage's in-flight count, which the stages after it fix, is known when it is priced); the
// options of each stage are the cost model's fastest that fit (the replay is monotone in the
// stages' times). The plan of the steady-state search seeds the bound.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "cost/pipeline_cost.h"
#include "ir/model.h"
#include "ir/plan.h"

namespace paraplan {

/// Seconds of one iteration of an evaluated plan (PipelineCostModel::evaluate's output).
using IterationTime = std::function<double(const Plan&)>;

struct IterationSearchOptions {
  std::size_t max_ideals = 100'000;
  /// Exactly this many stages (the user's --pp); 0: any number.
  int stages = 0;
  /// Each stage's data-parallel width, first stage first (the user's --stage-dp); empty: searched.
  /// Non-empty: `stages` must be its size.
  std::vector<int> stage_widths;
  /// Work beyond which the search stops with the best plan found (then not proven optimal:
  /// IterationSearchResult::exact is false): stage prices, and 2N per stage of each plan
  /// replayed (about what its replay costs).
  std::uint64_t max_stage_prices = 100'000;
};

struct IterationSearchResult {
  Plan plan;  ///< evaluated by the cost model (plan.objective is still its own figure)
  double iteration_s = 0;
  double seed_iteration_s = 0;       ///< the seed's
  bool exact = true;                 ///< the search finished: no plan has a shorter iteration
  std::uint64_t stage_prices = 0;    ///< stage costs asked of the cost model
  std::uint64_t plans_replayed = 0;  ///< complete plans whose iteration was computed
};

/// The plan of least iteration time among every contiguous-stage plan the cost model allows
/// (its shapes, devices, Σd and memory; `options.stages` of them when given), `seed` giving the
/// first bound. `seed` must be the steady-state optimum (search_pipeline's plan): no plan's
/// bottleneck is below its objective, so when its iteration is N × that, nothing is searched.
/// A seed that is not feasible (or has another stage count than asked) gives no bound; the
/// result's plan is then infeasible when no plan fits. Ties keep the seed, then the first plan
/// found (ideals by size, shapes in the cost model's order). Deterministic.
IterationSearchResult search_pipeline_iteration(const Model& model, const PipelineCostModel& cost,
                                                int microbatches, const IterationTime& iteration,
                                                const Plan& seed,
                                                const IterationSearchOptions& options = {});

}  // namespace paraplan
