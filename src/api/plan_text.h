// Every planner's answer in words, as the CLI prints it without --json: the plan's stages, layers
// or knobs with their predicted figures, and what the plan is up against. One writer per result,
// beside the JSON documents (results_json), so every front end can hand users the same text.
#pragma once

#include <string>

#include "api/plan.h"
#include "api/plan_mixed.h"
#include "api/simulate.h"

namespace paraplan::api {

/// A pipeline plan as a table: one row per stage (layers, d, t, options, time, memory, devices)
/// and a summary; `unit` names the objective's unit.
std::string plan_table(const Plan& plan, const Model& model, const std::string& unit);

/// Piper's plan: its table, the coarsening, where each stage runs and what the placement gains.
std::string pipeline_words(const PipelinePlanRequest& request, const PipelinePlanResult& result);
/// DAPPLE's plan: its table and data parallelism's speedup.
std::string dapple_words(const DapplePlanRequest& request, const DapplePlanResult& result);
/// The intra-op plan: one row per layer with its split and costs.
std::string intra_op_words(const IntraOpPlanRequest& request, const IntraOpPlanResult& result);
/// The transformer planner's answer: the best plan with its figures, the runners-up and the
/// Megatron-LM arguments that run it; `showcase`: the built-in example, ending with how to plan
/// one's own model.
std::string transformer_words(const TransformerPlanRequest& request,
                              const TransformerPlanResult& result, bool showcase);
/// One configuration priced (evaluate's answer): knobs, stack, time, throughput, MFU, the
/// iteration's parts, the layer split and memory per device against the device's.
std::string evaluate_words(const TransformerConfig& model, const std::string& cluster_name,
                           const DeviceType& device, const TrainingConfig& t,
                           const AnalyticResult& r);
/// On several device types: the answer against each type alone and the type-blind plan.
std::string mixed_transformer_words(const MixedTransformerPlanRequest& request,
                                    const MixedTransformerPlanResult& result);
/// A replayed iteration: its time against the plan's own figure, the bubble, each device's busy
/// time and peak memory.
std::string simulation_words(const SimulateResult& result);
/// The knobs of a training configuration in one line ("tensor 8 × context 1 × ...").
std::string plan_in_words(const TrainingConfig& t);
/// 78405 → "78,405".
std::string grouped(double value);

}  // namespace paraplan::api
