// One iteration of a pipeline planner's plan (Piper's cost model) as a simulator program: every
// data-parallel replica of every stage is a device (its t tensor-parallel devices act as one),
// micro-batch j runs on replica j mod d of each stage, each replica runs its micro-batches
// 1F1B with at most Piper's in-flight count y, pays its stage's edge traffic after each pass and
// the data-parallel all-reduce once at the end. Forward is one third of Piper's per-micro-batch
// compute (its profiles give forward + backward together), backward two thirds.
#pragma once

#include "ir/model.h"
#include "ir/plan.h"
#include "sim/simulator.h"

namespace paraplan::sim {

/// `plan` as evaluated by the Piper cost model (stage times filled), with N micro-batches.
Program pipeline_program(const Model& model, const Plan& plan, int microbatches);

struct PipelineSimulation {
  Result result;
  double makespan_s = 0;
  double bound_s = 0;      ///< N × the plan's objective: Piper's throughput, no fill or drain
  double difference = 0;   ///< makespan / bound − 1 (≥ 0: the bound has no bubble)
};
PipelineSimulation simulate_pipeline_plan(const Model& model, const Plan& plan, int microbatches);

}  // namespace paraplan::sim
