// Plans as the training engines take them: Megatron-LM command-line arguments and a DeepSpeed
// JSON configuration, with the engines' documented option names.
#pragma once

#include <string>
#include <vector>

#include "io/json_fields.h"
#include "ir/training.h"
#include "ir/transformer.h"

namespace paraplan::engines {

using io::Json;

/// Arguments for Megatron-LM's pretrain_gpt.py (model shape, parallel sizes, batch, recompute,
/// sequence parallel, distributed optimizer), one `--flag value` per line ending in " \\".
/// With `devices_per_node` > 0, first the launch: torchrun over whole machines, with
/// CUDA_DEVICE_MAX_CONNECTIONS=1 when tensor or context parallel (Megatron-LM asserts it).
/// FieldError("export") for a model Megatron-LM's GPT cannot build as priced, or ZeRO 2–3.
std::string megatron_arguments(const TransformerConfig& model, const TrainingConfig& config,
                               int devices_per_node = 0);
/// FieldError("export") naming the first feature of `m` Megatron-Core's GPT model cannot build
/// as priced (ALiBi, soft-capping, sliding windows, attention sinks, expert biases), for `engine`.
void refuse_unbuildable(const TransformerConfig& m, const char* engine);
/// Megatron-Core's MoE layer pattern as a list of one 0 (dense) or 1 (MoE) per layer: the
/// leading dense layers, then every moe_every-th layer ("[0,0,1,1]").
std::string moe_layer_list(const TransformerConfig& m);
/// Whole machines for a torchrun launch of `world` ranks, `devices_per_node` each (0: one).
struct TorchrunMachines {
  int nodes = 1, per_node = 1;
};
TorchrunMachines torchrun_machines(int world, int devices_per_node);
/// "# Run it from the CHECKOUT checkout." or, on several nodes, that every node runs it with
/// NODE_RANK, MASTER_ADDR and MASTER_PORT from the scheduler.
std::string run_from_comment(const std::string& checkout, const TorchrunMachines& m);
/// torchrun over the machines, up to its program: --standalone on one; on several, the node's
/// rank and the master's address from those variables. Each line ends in " \\\n".
std::string torchrun_lines(const TorchrunMachines& m);
/// The layers of each pipeline stage: the configuration's split, else the even one.
std::vector<int> stage_split(const TransformerConfig& model, const TrainingConfig& config);
/// Megatron-Core's --pipeline-model-parallel-layout for a split Megatron-LM would not make
/// itself (uneven stages; "Et*27|t*27|t*26,L"); empty when the even split is the plan's.
std::string megatron_layout(const TransformerConfig& model, const TrainingConfig& config);
/// A NeMo GPT recipe's YAML (trainer and model sections, the optimizer) for the plan, in the
/// keys `--from nemo` reads. FieldError("export") for what NeMo's recipe cannot build, or ZeRO 2–3.
/// `tokenizer_id`: the model's Hugging Face id, whose tokenizer NeMo builds ("": GPT-2's BPE
/// for its 50,257 tokens, else a placeholder to fill in).
std::string nemo_recipe(const TransformerConfig& model, const TrainingConfig& config,
                        int devices_per_node = 0, const std::string& tokenizer_id = "");
/// A DeepSpeed configuration (batch sizes, gradient accumulation, ZeRO stage, BF16, the gradient
/// reduction's type, activation checkpointing of `checkpoints_per_stage` layers). Parallel sizes
/// are Megatron-DeepSpeed command-line arguments, not config keys.
Json deepspeed_config(const TrainingConfig& config, int checkpoints_per_stage = 0);
/// The plan as Megatron-DeepSpeed runs it: a shell script writing ds_config.json, then the
/// deepspeed launcher over whole machines with pretrain_gpt.py's arguments (the model, tp, pp,
/// batch, recomputation, --zero-stage, --deepspeed_config), which `--from deepspeed` reads back.
/// FieldError("export") for what Megatron-DeepSpeed does not run as priced (another stack,
/// context parallelism, MoE, interleaving, uneven stages, partial recomputation, FP8).
std::string megatron_deepspeed_launch(const TransformerConfig& model, const TrainingConfig& config,
                                      int devices_per_node = 0);

}  // namespace paraplan::engines
