// Every job's result as the JSON documents `--json` prints and `-o` writes (docs/cli.md and
// docs/formats.md give the keys): one writer per result, so every front end (the CLI, the
// Python module) hands users the same documents.
#pragma once

#include <string>

#include "api/frontier.h"
#include "api/plan.h"
#include "api/plan_mixed.h"
#include "api/simulate.h"
#include "io/json_fields.h"

namespace paraplan::api {

/// iteration_time_s, tokens_per_s, tflops_per_device, mfu, fits, memory{...}, breakdown{...},
/// stages[], config{...} (with devices and the stage split priced).
io::Json priced_json(const TrainingConfig& t, const AnalyticResult& r, int devices);
/// evaluate's document: priced_json with the model, the cluster, and the device's memory, the
/// headroom kept free and the peak's share of the device under "memory".
io::Json evaluate_json(const TrainingConfig& t, const AnalyticResult& r, const std::string& model,
                       const std::string& cluster_name, const DeviceType& device);

/// The transformer planner's answer: the best plan's priced_json with model, cluster, planner
/// and cost model, the simulated time where replayed, top[] and the search's figures.
io::Json transformer_plan_json(const TransformerPlanRequest& request,
                               const TransformerPlanResult& result);
/// The same as a plan file `simulate` replays (api/plan_file.h: model, cluster and calibration
/// embedded).
io::Json transformer_plan_file(const TransformerPlanRequest& request,
                               const TransformerPlanResult& result);

/// One mixed pipeline: iteration_time_s, tokens_per_s, tflops_per_device, mfu, fits,
/// breakdown{...}, config{... segments[]}, stages[] (device type, widths, layers, devices).
io::Json mixed_priced_json(const Cluster& cluster, const MixedConfig& config,
                           const MixedResult& result);
/// The transformer planner's answer on a cluster of several device types: the answer ("mixed" or
/// "alone") and its iteration_time_s, the best mixed pipeline and the top, the best plan on each
/// type alone, the type-blind plan priced on the real devices, and the search's figures.
io::Json mixed_transformer_plan_json(const MixedTransformerPlanRequest& request,
                                     const MixedTransformerPlanResult& result);
/// The answer as a plan file `simulate` replays (api/plan_file.h): a mixed transformer plan or,
/// when one device type alone is faster, a transformer plan on its devices.
io::Json mixed_transformer_plan_file(const MixedTransformerPlanRequest& request,
                                     const MixedTransformerPlanResult& result);

/// The pipeline plan under Piper's cost model (paraplan-plan) with its settings and, when
/// nothing fits, the smallest memory that does.
io::Json pipeline_plan_json(const PipelinePlanRequest& request, const PipelinePlanResult& result);
/// The DAPPLE plan (paraplan-plan) with its batch, machines, speedup and states.
io::Json dapple_plan_json(const DapplePlanRequest& request, const DapplePlanResult& result);
/// The intra-op plan (paraplan-plan with layer_splits) with its settings and the elimination's
/// structure.
io::Json intra_op_plan_json(const IntraOpPlanRequest& request, const IntraOpPlanResult& result);

/// The plan files of the layer-model planners (api/plan_file.h): the answer with what the
/// replay needs (a feasible pipeline plan: its model, settings and, when placed, its cluster).
io::Json pipeline_plan_file(const PipelinePlanRequest& request, const PipelinePlanResult& result);
io::Json dapple_plan_file(const DapplePlanRequest& request, const DapplePlanResult& result);
io::Json intra_op_plan_file(const IntraOpPlanRequest& request, const IntraOpPlanResult& result);

/// The knob table (ir/knobs.h) as a document: per knob its keyword, flag, plan-file key, type,
/// unit, range, choices, default, whether plan searches it, its stacks and engine spellings.
io::Json knob_table_json();

/// One replayed iteration, with the keys of its kind of plan.
io::Json simulation_json(const SimulateResult& result);

/// The pipeline planner's frontier: points with objective, peak_memory_bytes, devices_used and
/// their stages.
io::Json pipeline_frontier_json(const PipelineFrontierRequest& request,
                                const PipelineFrontierPlan& result);
/// The intra-op frontier: points with step_time_s, peak_memory_bytes (and its breakdown),
/// devices_used, PaSE's objective and each layer's split.
io::Json intra_op_frontier_json(const IntraOpFrontierRequest& request,
                                const IntraOpFrontierPlan& result);
/// The transformer frontier: points with priced_json and the three objectives.
io::Json transformer_frontier_json(const TransformerFrontierRequest& request,
                                   const std::string& cluster_name,
                                   const LlmFrontierResult& result);

}  // namespace paraplan::api
