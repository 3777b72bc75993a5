// A NeMo Megatron-Core GPT recipe (megatron_gpt_config.yaml's `trainer` and `model` sections) read
// into a LaunchConfig.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "engines/launch_config.h"

namespace paraplan::engines {

/// Every key of `trainer`, `model` and `model.optim` that changes time or memory is read (or
/// refused, naming it); keys that do not are ignored, as are the sections that never matter
/// (exp_manager, model.data, model.nsys_profile, ...); an unknown key in trainer, model or
/// model.optim is refused. `${.key}` and `${model.key}` interpolations are resolved. Errors are
/// Error(kUsage) placed at "SOURCE: section.key"; YAML syntax errors Error(kInput).
LaunchConfig read_nemo_recipe(const std::string& text, const std::string& source);

/// The keys paraplan searches, as the recipe spells them ("model.tensor_model_parallel_size"),
/// with their YAML values, in a fixed order. For the diff between a recipe and a plan.
std::vector<std::pair<std::string, std::string>> nemo_searched_options(
    const TransformerConfig& model, const TrainingConfig& training);

}  // namespace paraplan::engines
