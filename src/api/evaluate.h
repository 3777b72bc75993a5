// The evaluate job (one transformer training configuration priced by the analytic model) and
// the export job (a configuration written for the training engine that runs it).
#pragma once

#include <string>

#include "cost/analytic.h"
#include "ir/calibration.h"
#include "ir/cluster.h"
#include "ir/training.h"
#include "ir/transformer.h"

namespace paraplan::api {

struct EvaluateRequest {
  TransformerConfig model;
  Cluster cluster;
  Calibration calibration;
  TrainingConfig config;
};

/// RuleViolation for a configuration that breaks a knob rule.
AnalyticResult evaluate(const EvaluateRequest& request);

/// The configuration for a training engine: "megatron" (Megatron-LM's arguments) or "deepspeed"
/// (a DeepSpeed JSON config); FieldError("export") for another engine.
std::string export_plan(const std::string& engine, const TransformerConfig& model,
                        const TrainingConfig& config);

}  // namespace paraplan::api
