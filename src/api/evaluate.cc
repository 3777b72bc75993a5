// The evaluate and export jobs.
#include "api/evaluate.h"

#include <fmt/format.h>

#include "engines/engine_export.h"
#include "engines/torchtitan_config.h"
#include "ir/error.h"

namespace paraplan::api {

AnalyticResult evaluate(const EvaluateRequest& request) {
  const AnalyticCostModel cost(request.model, request.cluster, request.calibration);
  return cost.evaluate(request.config);
}

int devices_per_node(const Cluster& cluster) {
  return cluster.machine_sizes.empty() ? 0 : cluster.machine_sizes.front();
}

std::string export_plan(const std::string& engine, const TransformerConfig& model,
                        const TrainingConfig& config, int devices_per_node) {
  if (engine == "megatron") return engines::megatron_arguments(model, config, devices_per_node);
  if (engine == "nemo") return engines::nemo_recipe(model, config, devices_per_node);
  if (engine == "torchtitan") return engines::torchtitan_config(model, config);
  if (engine == "deepspeed")
    return engines::megatron_deepspeed_launch(model, config, devices_per_node);
  throw FieldError("export", fmt::format(" must be megatron, nemo, deepspeed or torchtitan (got "
                                         "\"{}\")",
                                         engine));
}

}  // namespace paraplan::api
