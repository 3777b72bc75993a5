// Plans as the training engines take them: Megatron-LM command-line arguments and a DeepSpeed
// JSON configuration, with the engines' documented option names.
#pragma once

#include <string>

#include "io/json_fields.h"
#include "ir/training.h"
#include "ir/transformer.h"

namespace paraplan::io {

/// Arguments for Megatron-LM's pretrain_gpt.py (model shape, parallel sizes, batch, recompute,
/// sequence parallel, distributed optimizer), one `--flag value` per line ending in " \\".
std::string megatron_arguments(const TransformerConfig& model, const TrainingConfig& config);
/// A DeepSpeed configuration (batch sizes, gradient accumulation, ZeRO stage, BF16, activation
/// checkpointing). Parallel sizes are Megatron-DeepSpeed command-line arguments, not config keys.
Json deepspeed_config(const TrainingConfig& config);

}  // namespace paraplan::io
