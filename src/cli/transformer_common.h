// Shared by `evaluate` and the transformer path of `plan`: loading a transformer and a cluster
// preset, knob names, and the JSON of a priced configuration.
#pragma once

#include <string>

#include "cost/analytic.h"
#include "io/json_fields.h"

namespace paraplan::cli {

/// A built-in name or a config.json; Error(kUsage) listing the built-ins otherwise.
TransformerConfig load_transformer(const std::string& name);
/// A preset for `devices` GPUs; Error(kUsage) listing the presets otherwise.
Cluster load_cluster_preset(const std::string& name, int devices);
Recompute parse_recompute(const std::string& text);
const char* recompute_name(Recompute r);
/// The configuration for a training engine ("megatron" or "deepspeed"); Error(kUsage) otherwise.
std::string engine_export(const std::string& engine, const TransformerConfig& model,
                          const TrainingConfig& config);
/// iteration_time_s, tokens_per_s, tflops_per_device, mfu, fits, memory{...}, config{...}.
io::Json priced_json(const TrainingConfig& t, const AnalyticResult& r, int devices);

}  // namespace paraplan::cli
