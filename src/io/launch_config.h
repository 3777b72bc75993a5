// A training job as the user already launches it (Megatron-LM's arguments, ...), read into
// paraplan's terms: the model when the launch says it, the training configuration, the world size
// when the launcher says it, and what was read and ignored, for --explain and for the diff.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/training.h"
#include "ir/transformer.h"

namespace paraplan::io {

struct LaunchConfig {
  std::string format;  ///< megatron | nemo | deepspeed
  std::string source;  ///< the file ("-": standard input)
  /// The model's shape, when the launch gives it (Megatron's --num-layers --hidden-size ...).
  std::optional<TransformerConfig> model;
  /// tp, pp, cp, ep, vpp, micro-batch, global batch (0: micro-batch × dp), sequence length,
  /// recomputation, ZeRO, overlaps, precision as the launch sets them (the engine's defaults
  /// otherwise); dp is 0 until the world size is known.
  TrainingConfig training;
  int world_size = 0;  ///< 0: the launch does not say (no torchrun line)
  /// Megatron's --num-layers-per-virtual-pipeline-stage (vpp = layers ÷ (pp × this)); 0: none.
  int layers_per_virtual_stage = 0;
  /// Megatron pads the vocabulary to a multiple of this × tp.
  int vocab_multiple = 1;
  std::vector<std::string> environment;  ///< NAME=value words before the command
  int accumulation = 0;                  ///< DeepSpeed's gradient_accumulation_steps (0: not given)
  /// Keys as written, in order: read (they change time or memory) and ignored (they do not).
  std::vector<std::string> read, ignored;
};

}  // namespace paraplan::io
