// The evaluate job (one transformer training configuration priced by the analytic model) and
// the export job (a configuration written for the training engine that runs it).
#pragma once

#include <string>

#include "cost/analytic.h"
#include "engines/torchtitan_recipe.h"
#include "ir/calibration.h"
#include "ir/cluster.h"
#include "ir/engine_rules.h"
#include "ir/training.h"
#include "ir/transformer.h"
#include "search/llm.h"

namespace paraplan::api {

struct EvaluateRequest {
  TransformerConfig model;
  Cluster cluster;
  Calibration calibration;
  TrainingConfig config;
};

/// RuleViolation for a configuration that breaks a knob rule.
AnalyticResult evaluate(const EvaluateRequest& request);

/// The configuration for a training engine: "megatron" (Megatron-LM's launch and arguments),
/// "nemo" (a NeMo recipe's YAML), "deepspeed" (Megatron-DeepSpeed's launch and its DeepSpeed
/// JSON), "torchtitan" (a job TOML for 238fa99), "torchtitan-recipe" (torchtitan b5bcd76's Python
/// configuration and its launch) or "bridge"; FieldError("export") for another engine or a plan
/// the engine cannot run. `devices_per_node`: the machines' size, for the launch line (0: none);
/// `device`: the device's name (torchtitan's attention kernel: FlexAttention's flash backend but
/// on A100).
std::string export_plan(const std::string& engine, const TransformerConfig& model,
                        const TrainingConfig& config, int devices_per_node = 0,
                        const std::string& device = "");

/// A search for a plan exported as a torchtitan recipe keeps to what torchtitan b5bcd76
/// expresses beyond the torchtitan engine's rules: whole-layer checkpointing (no per-layer
/// frequency) and no float8 all-gather, unless the user fixed them.
void keep_to_torchtitan_recipe(LlmSearchSettings& settings);

/// The engine `--export` names: megatron, nemo, deepspeed, torchtitan, torchtitan-recipe (the
/// torchtitan engine) or bridge; FieldError("export") otherwise.
Engine export_engine(const std::string& name);

/// Devices of the cluster's first machine (the size torchrun's --nproc_per_node takes).
int devices_per_node(const Cluster& cluster);

}  // namespace paraplan::api
