// Megatron-Bridge, NVIDIA's current Megatron-Core training library (NeMo 2's successor for LLM
// pretraining): its launcher scripts/training/run_recipe.py runs a recipe (a Python function
// returning a ConfigContainer) with `section.field=value` overrides of that container (Hydra's
// syntax, applied in struct mode: a field that does not exist is an error). paraplan writes and
// reads the vanilla GPT recipe, which builds no model of its own (GPTModelProvider at Megatron-LM
// pretrain_gpt.py's defaults), with the model and the plan given field by field.
// Field names and types: data/megatron-bridge/fields-067f987.tsv (tools/megatron_bridge).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "engines/launch_config.h"

namespace paraplan::engines {

/// The Megatron-Bridge commit the export and the reader follow.
inline constexpr const char* kMegatronBridgeCommit = "067f987";
/// The recipe written and read: Megatron-LM's pretrain_gpt.py defaults, no model of its own.
inline constexpr const char* kMegatronBridgeRecipe = "vanilla_gpt_pretrain_1gpu_h100_bf16_config";

/// The plan as a bash script that runs it with Megatron-Bridge: torchrun over whole machines
/// (every node runs the script; NODE_RANK, MASTER_ADDR and MASTER_PORT as the scheduler sets
/// them), run_recipe.py with the vanilla GPT recipe, --dataset mock, and one override per line:
/// the model (model.*; the vocabulary as tokenizer.vocab_size of a NullTokenizer, padded as
/// Megatron-LM pads it), the parallel sizes, the batch (train.*), recomputation, the distributed
/// optimizer and the overlaps (ddp.* and optimizer.*, which Bridge keeps in step), the precision
/// as one of Bridge's mixed-precision recipes. FieldError("export") for what the recipe cannot
/// build as priced (latent attention, ALiBi, soft-capping, ...) or what Bridge does not run as
/// priced (ir/engine_rules.h: ZeRO 2-3, bf16 gradient reduction, FP8 without FP8 parameters).
std::string megatron_bridge_launch(const TransformerConfig& model, const TrainingConfig& config,
                                   int devices_per_node = 0);

/// A run_recipe.py launch of the vanilla GPT recipe (as megatron_bridge_launch writes it, or a
/// user's): its overrides and convenience options (-tp, -gb, ...) over the recipe's values. Every
/// override that changes time or memory is read; those that do not (learning rates,
/// checkpointing, logging, data paths) are listed as ignored; any other is refused, all at once,
/// naming each. Another recipe is refused (its model and defaults are Python code): plan its
/// model with --model. Errors are Error(kUsage) placed at "SOURCE:LINE".
LaunchConfig read_megatron_bridge_launch(const std::string& text, const std::string& source);

/// How the reader takes a field ("section.field") of a launch or of a recipe: read (it prices
/// it), priced at its default only (refused otherwise, naming why), ignored (it changes neither
/// time nor memory: the learning rate, logs, data paths, kernel choices for the same work) or
/// unknown (refused).
enum class BridgeFieldUse { kRead, kAtDefault, kIgnored, kUnknown };
BridgeFieldUse megatron_bridge_field_use(const std::string& key);

/// The overrides paraplan searches, as a Bridge launch spells them, with their values, in a fixed
/// order. For the diff between a launch and a plan.
std::vector<std::pair<std::string, std::string>> megatron_bridge_searched_options(
    const TransformerConfig& model, const TrainingConfig& training);

}  // namespace paraplan::engines
