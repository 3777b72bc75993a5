// The exact pipeline planner: contiguous stages of a DAG (pairs of ideals), each with its
// tensor-parallel degree t, data-parallel degree d and per-layer options, minimising the
// bottleneck stage cost of a PipelineCostModel under its device and memory limits.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

#include "cost/pipeline_cost.h"
#include "ir/model.h"
#include "ir/plan.h"
#include "ir/progress.h"

namespace paraplan {

struct PipelineSearchOptions {
  std::size_t max_ideals = 2'000'000;
  /// Upper bound on the (I, J) stage candidates; beyond it the search refuses (kLimit).
  std::uint64_t max_stage_pairs = 100'000'000;
  /// From this largest Σd on, the optimum is bracketed by passes that only ask whether a plan is
  /// within a bound and the bracket narrowed before the one exact pass (long table rows make
  /// wide bands dear); below it, exact passes over growing bands. Both are exact and give the
  /// same plan; the choice only moves time (tests use 0 and a huge value to cover both).
  int narrow_bands_from = 256;
  /// Lattices of up to this many ideals keep what each stage costs (shapes that can hold it,
  /// lower bounds, y ranges, costs asked for) across passes; larger ones price stages afresh in
  /// every pass. Only time and memory depend on it (tests use 0 to cover both).
  int keep_stage_figures_up_to = 1024;
  /// Told how many layer sets (ideals) of each bound pass are solved; may be null.
  ProgressSink* progress = nullptr;
  /// Past it the search stops with Error(kLimit) naming the time limit (checked between the
  /// lattice's levels); none: no limit.
  std::optional<std::chrono::steady_clock::time_point> deadline;
};

struct PipelineSearchStats {
  int ideals = 0;
  std::uint64_t stage_pairs = 0;  ///< (I, J) pairs visited
};

struct PipelineSearchResult {
  Plan plan;  ///< plan.feasible is false when no plan fits
  PipelineSearchStats stats;
};

/// What Error(kLimit) says when the deadline passed (callers tell it from the work limits).
inline constexpr const char* kPastTheTimeLimit = "the exact search passed its time limit";

/// Exact: returns a plan whose objective is the minimum over all contiguous-stage plans that
/// satisfy the cost model's limits. Deterministic (same inputs, same plan), multi-threaded.
PipelineSearchResult search_pipeline(const Model& model, const PipelineCostModel& cost,
                                     const PipelineSearchOptions& options = {});

}  // namespace paraplan
