// The time–memory frontier of the pipeline planner, exactly, by ε-constraints: for a device
// budget, the fastest plan under the memory limit, then the fastest strictly leaner than it, and
// so on until nothing fits (the last is the leanest plan there is). Over several budgets the
// points are filtered to those no other dominates in (objective, peak memory, devices used).
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "cost/pipeline_cost.h"
#include "ir/model.h"
#include "ir/progress.h"
#include "search/frontier.h"

namespace paraplan {

/// A cost model for at most `max_devices` devices and `memory_limit_bytes` per device.
using PipelineCostFactory =
    std::function<std::unique_ptr<PipelineCostModel>(int max_devices, double memory_limit_bytes)>;

struct PipelineFrontierPoint {
  Objectives objectives;  ///< time_s holds the cost model's objective
  Plan plan;
};

struct PipelineFrontierResult {
  std::vector<PipelineFrontierPoint> points;  ///< non-dominated, fastest first
  int solves = 0;                             ///< planner runs
  bool truncated = false;                     ///< a budget hit max_points_per_budget
};

/// Peak memory per device of a plan (its largest stage).
double plan_peak_memory(const Plan& plan);

struct PipelineFrontierOptions {
  /// Each next memory limit is the last point's peak × (1 − memory_step); 0: just below it (the
  /// exact frontier). With a step, a plan leaner than a point by less than the step can be missed.
  double memory_step = 0.01;
  int max_points_per_budget = 256;
  double time_limit_s = 0;  ///< 0: none; else stop (truncated) after this long
  ProgressSink* progress =
      nullptr;  ///< told of every planner run and the points so far; may be null
};

PipelineFrontierResult pipeline_frontier(const Model& model, const PipelineCostFactory& factory,
                                         const std::vector<int>& device_budgets,
                                         double memory_limit_bytes,
                                         const PipelineFrontierOptions& options = {});

}  // namespace paraplan
