// A training job as the user already launches it (Megatron-LM's arguments, ...), read into
// paraplan's terms: the model when the launch says it, the training configuration, the world size
// when the launcher says it, and what was read and ignored, for --explain and for the diff.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/knobs.h"
#include "ir/training.h"
#include "ir/transformer.h"

namespace paraplan::engines {

/// What a torchtitan job leaves to be resolved once the model's layers and the world size are
/// known (complete_torchtitan): its data-parallel degrees, batch, stage split and AC frequency.
struct TorchtitanChoices {
  int dp_replicate = 1;
  int dp_shard = -1;                  ///< -1: the ranks left over
  std::string reshard = "default";    ///< fsdp_reshard_after_forward
  std::int64_t local_batch = 8;       ///< per data-parallel rank
  std::int64_t global_batch = -1;     ///< -1: local × data-parallel ranks
  std::int64_t pp_microbatch = 1;     ///< pipeline_parallel_microbatch_size
  int ac_every = 0;                   ///< selective AC of every N-th layer (0: not that mode)
  int stages_per_rank = 1;            ///< 1F1B: 1; Interleaved1F1B: 2 unless layers_per_stage
  int layers_per_stage = 0;           ///< pipeline_parallel_layers_per_stage (0: not given)
  int first_less = 1, last_less = 1;  ///< the embedding's and the output's weight in the split
  std::vector<int> parts;             ///< layers of each model part (module_fqns_per_model_part)
};

/// DeepSpeed's batch keys as a configuration gives them: 0 absent, kAuto "auto" (the Hugging
/// Face Trainer's); resolved against the data-parallel ranks as DeepSpeed resolves them.
struct DeepSpeedBatch {
  static constexpr std::int64_t kAuto = -1;
  std::int64_t train = 0;         ///< train_batch_size
  std::int64_t micro = 0;         ///< train_micro_batch_size_per_gpu
  std::int64_t accumulation = 0;  ///< gradient_accumulation_steps
};

/// Megatron-Core's uneven split without a layout, left to the model's layers (a Bridge recipe
/// builds its model from a Hugging Face config): the first and last stages' layers (-1: not
/// given), or the embedding and the loss counted as layers (engines/megatron_layout's
/// uneven_split); `key` is the setting that asked for it.
struct PendingSplit {
  int first = -1, last = -1;
  bool embedding = false, loss = false;
  std::string key;
};

struct LaunchConfig {
  std::string format;  ///< megatron | nemo | deepspeed | torchtitan
  std::string source;  ///< the file ("-": standard input)
  /// The model's shape, when the launch gives it (Megatron's --num-layers --hidden-size ...).
  std::optional<TransformerConfig> model;
  /// A built-in model the launch names instead (torchtitan's llama3 flavors); empty: none.
  std::string model_name;
  /// `model` is one the engine names (a torchtitan flavor): its name and vocabulary as they are.
  bool model_from_engine = false;
  /// A model the launch names that paraplan does not know (torchtitan's qwen3 0.6B); empty: none.
  std::string model_unknown;
  /// tp, pp, cp, ep, vpp, micro-batch, global batch (0: micro-batch × dp), sequence length,
  /// recomputation, ZeRO, overlaps, precision as the launch sets them (the engine's defaults
  /// otherwise); dp is 0 until the world size is known.
  TrainingConfig training;
  int world_size = 0;  ///< 0: the launch does not say (no torchrun line)
  /// Megatron's --num-layers-per-virtual-pipeline-stage (vpp = layers ÷ (pp × this)); 0: none.
  int layers_per_virtual_stage = 0;
  /// Megatron pads the vocabulary to a multiple of this × tp.
  int vocab_multiple = 1;
  /// The vocabulary the launch builds in place of its named model's, before padding (0: the
  /// model's): Megatron-Bridge's recipes size it by their tokenizer.
  std::int64_t vocab_size = 0;
  std::vector<std::string> environment;  ///< NAME=value words before the command
  int accumulation = 0;                  ///< DeepSpeed's gradient_accumulation_steps (0: not given)
  std::optional<TorchtitanChoices> torchtitan;    ///< a torchtitan job's (format torchtitan)
  std::optional<DeepSpeedBatch> deepspeed_batch;  ///< a DeepSpeed configuration's
  std::optional<PendingSplit> pending_split;      ///< completed with the model's layers
  /// Keys as written, in order: read (they change time or memory) and ignored (they do not).
  std::vector<std::string> read, ignored;
};

/// The engine's own spelling of a knob (ir/knobs.h's table): the option or key its launch sets.
inline std::string spelled(Knob knob, Engine engine) {
  return std::string(knob_spec(knob).spelled(engine));
}

}  // namespace paraplan::engines
