// Megatron-LM's pretrain_gpt.py arguments (option names of megatron/training/arguments.py): a
// shell line (a torchrun or python launcher before the script, environment assignments, `\`
// continuations, quotes, comments) or one argument per line, read into a LaunchConfig.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "engines/launch_config.h"

namespace paraplan::engines {

/// Every option that changes time or memory is read (or refused, naming it: fp16, unexpanded
/// shell variables, values that do not parse); options that do not (data, logging, checkpoints,
/// learning-rate schedule) are ignored; an unknown option is refused with the closest known one.
/// Errors are Error(kUsage) placed at "SOURCE:LINE".
LaunchConfig read_megatron_args(const std::string& text, const std::string& source);

/// Megatron-DeepSpeed's pretrain_gpt.py arguments (its spellings: --num-key-value-heads,
/// --normalization rmsnorm, ...; the deepspeed launcher's --num_gpus and --num_nodes) read as
/// Megatron-LM's; the options DeepSpeed adds (--deepspeed_config, --zero-stage,
/// --checkpoint-activations, ...) into `deepspeed_options` (name → value, empty for a switch).
LaunchConfig read_megatron_deepspeed_args(const std::string& text, const std::string& source,
                                          std::map<std::string, std::string>& deepspeed_options);

/// The options paraplan searches, as Megatron-LM spells them, in a fixed order: (option, value),
/// the value empty for a switch. For the diff between a launch and a plan.
std::vector<std::pair<std::string, std::string>> megatron_searched_options(
    const TransformerConfig& model, const TrainingConfig& training);

}  // namespace paraplan::engines
