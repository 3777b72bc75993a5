// A plan as torchtitan's current configuration system runs it (torchtitan b5bcd76, after its
// February 2026 move from TOML job files to Python configurations): a Python module with one
// function returning a Trainer.Config, selected with `--module` and `--config`.
#pragma once

#include <string>

#include "engines/launch_config.h"
#include "ir/training.h"
#include "ir/transformer.h"

namespace paraplan::engines {

/// The torchtitan commit whose configuration fields the recipe writes.
inline constexpr const char* kTorchtitanRecipeCommit = "b5bcd76";

/// The plan as a bash script run from a torchtitan checkout: it writes paraplan_recipe.py (a
/// function `paraplan_plan` that starts from the flavor's own configuration function in
/// torchtitan's config registry and sets the model's attention kernel, the data to torchtitan's
/// in-repository C4 sample, the batch in tokens, the precision, every parallel degree, the
/// pipeline's model parts, activation checkpointing and compilation), then launches
/// `torchrun -m torchtitan.train --module paraplan_recipe --config paraplan_plan` over whole
/// machines. `hopper_or_newer`: FlexAttention's flash backend (Hopper, Blackwell), else its
/// Triton kernel. FieldError("export") for what the engine's rules refuse, a model torchtitan
/// has no configuration function for, or what b5bcd76 cannot express (checkpointing of some
/// layers only, float8 all-gathers).
std::string torchtitan_recipe(const TransformerConfig& model, const TrainingConfig& config,
                              int devices_per_node = 0, bool hopper_or_newer = true);

/// `--from torchtitan-recipe`'s format name (LaunchConfig::format).
inline constexpr const char* kTorchtitanRecipe = "torchtitan-recipe";

/// A torchtitan b5bcd76 configuration read into the TorchtitanChoices complete_torchtitan
/// resolves: the launch script `torchtitan_recipe` writes (or any that runs `-m
/// torchtitan.train --module M --config F`, M a module its here-document writes or one of
/// torchtitan's models), a Python file (`source` FILE.py or FILE.py:FUNCTION; the function named,
/// else paraplan_plan, else its only one), or, with `text` empty, one of torchtitan's own
/// configuration functions as `source` MODULE:FUNCTION (llama3:llama3_70b). A function may start
/// from torchtitan's (`config = llama3_8b()`) or another of the file's. Every value that changes
/// time or memory is read or refused by name; the rest is listed as ignored. Error(kUsage) at
/// SOURCE (FUNCTION): KEY, or SOURCE:LINE for what it cannot parse or follow.
LaunchConfig read_torchtitan_recipe(const std::string& text, const std::string& source);

/// The knobs paraplan searches, as the recipe spells them, for the diff of `--from`.
std::vector<std::pair<std::string, std::string>> torchtitan_recipe_searched_options(
    const TrainingConfig& training);

}  // namespace paraplan::engines
