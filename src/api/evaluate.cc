// The evaluate and export jobs.
#include "api/evaluate.h"

#include <fmt/format.h>

#include "engines/engine_export.h"
#include "engines/megatron_bridge.h"
#include "engines/torchtitan_config.h"
#include "engines/torchtitan_recipe.h"
#include "ir/error.h"
#include "zoo/llm_models.h"

namespace paraplan::api {

AnalyticResult evaluate(const EvaluateRequest& request) {
  const AnalyticCostModel cost(request.model, request.cluster, request.calibration);
  return cost.evaluate(request.config);
}

namespace {

// torchtitan names models by flavor: a config.json of a built-in's shape is that built-in.
TransformerConfig torchtitan_named(const TransformerConfig& model) {
  TransformerConfig named = model;
  for (const char* builtin : {"llama3-8b", "llama3-70b", "llama3-405b"})
    if (const auto b = zoo::llm_model(builtin);
        b && b->num_layers == model.num_layers && b->hidden_size == model.hidden_size &&
        b->num_attention_heads == model.num_attention_heads &&
        b->num_kv_heads == model.num_kv_heads && b->ffn_hidden_size == model.ffn_hidden_size &&
        b->vocab_size == model.vocab_size && b->tied_embeddings == model.tied_embeddings)
      named.name = builtin;
  return named;
}

}  // namespace

void keep_to_torchtitan_recipe(LlmSearchSettings& settings) {
  if (!settings.recompute_layers) settings.recompute_layers = 0;
  if (!settings.stack_choices.fp8_param_gather) settings.stack_choices.fp8_param_gather = false;
}

int devices_per_node(const Cluster& cluster) {
  return cluster.machine_sizes.empty() ? 0 : cluster.machine_sizes.front();
}

Engine export_engine(const std::string& name) {
  if (name == engines::kTorchtitanRecipe) return Engine::kTorchtitan;  // torchtitan's newer format
  if (const auto e = engine_from_name(name)) return *e;
  throw FieldError("export",
                   fmt::format(" must be megatron, nemo, deepspeed, torchtitan, torchtitan-recipe "
                               "or bridge (got \"{}\")",
                               name));
}

std::string export_plan(const std::string& name, const TransformerConfig& model,
                        const TrainingConfig& config, int devices_per_node,
                        const std::string& device) {
  // Each engine's writer refuses what its engine does not run (ir/engine_rules.h).
  if (name == engines::kTorchtitanRecipe)
    return engines::torchtitan_recipe(torchtitan_named(model), config, devices_per_node,
                                      device.find("A100") == std::string::npos);
  switch (export_engine(name)) {
    case Engine::kMegatronLm:
      return engines::megatron_arguments(model, config, devices_per_node);
    case Engine::kNemo:
      return engines::nemo_recipe(model, config, devices_per_node,
                                  zoo::hugging_face_id(model.name));
    case Engine::kTorchtitan:
      return engines::torchtitan_config(torchtitan_named(model), config);
    case Engine::kMegatronDeepSpeed:
      return engines::megatron_deepspeed_launch(model, config, devices_per_node);
    case Engine::kMegatronBridge:
      return engines::megatron_bridge_launch(model, config, devices_per_node);
  }
  return "";
}

}  // namespace paraplan::api
