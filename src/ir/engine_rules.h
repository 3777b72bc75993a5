// What each training engine runs, written once, from the engine's own code: the one home of the
// stacks' rules. `plan` and `frontier` search only what the engine runs (search_within), and
// `evaluate`, every export and every launch reader refuse what it does not (rules::engine), so no
// plan is offered, drawn or exported that its engine refuses. The rules every stack shares (tp
// dividing the heads and the key-value heads, ZeRO 2/3 without pipelines, ...) are the training
// rules (ir/training_rules.h); these are the ones that differ by engine.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "ir/knobs.h"
#include "ir/training.h"
#include "ir/training_rules.h"

namespace paraplan {

struct EngineRules {
  Engine engine;
  std::string_view title;   ///< "Megatron-LM", ...
  std::string_view commit;  ///< the engine's source the rules follow
  Stack stack;              ///< the training stack its plans are priced on
  /// The highest ZeRO stage: Megatron-LM's and NeMo's distributed optimizer shards the optimizer
  /// states only (ZeRO 1).
  int max_zero_stage = 3;
  /// ZeRO 1 exists: torchtitan runs DDP (ZeRO 0) or FSDP (ZeRO 2, 3), nothing in between.
  bool zero_stage_1 = true;
  bool context_parallel = true;  ///< cp > 1 (Megatron-DeepSpeed: its Ulysses is another thing)
  bool interleaving = true;      ///< vpp > 1 (Megatron-DeepSpeed: its pipeline engine has none)
  /// Any layer split (false: only the engine's own, deepspeed_split: Megatron-DeepSpeed's).
  bool uneven_stages = true;
  bool partial_recompute = true;  ///< N < all layers recomputed (deepspeed: no)
  /// Partial recomputation as every k-th layer of a rank (torchtitan's selective option k): only
  /// the counts some k gives (⌊layers per rank ÷ k⌋).
  bool recompute_every_kth = false;
  bool fp8 = true;  ///< an FP8 recipe (Megatron-DeepSpeed has none)
  /// Tensor parallelism comes with sequence parallelism (torchtitan shards the norms' sequence).
  bool sequence_parallel_with_tp = false;
  /// Plain data-parallel replicas (ZeRO 0) only alone: torchtitan's DDP "has not supported > 1D
  /// parallelism" (it runs replicas beside TP or PP as FSDP/HSDP).
  bool replicas_alone = false;
  /// Uneven stages only as the first and the last stage's layers, the rest split evenly: NeMo
  /// 1.x's GPT model (num_layers_in_first/last_pipeline_stage; it never reads Megatron-Core's
  /// layout).
  bool split_first_last_only = false;
  /// bf16 mixed precision only under FSDP (sharded data parallelism or context parallelism):
  /// torchtitan without it beside tensor or pipeline parallelism trains in fp32
  /// (maybe_enable_amp: "Mixed precision training is disabled") unless in pure bf16.
  bool mixed_precision_needs_fsdp = false;
  /// HSDP's shard group folds context parallelism in whole: torchtitan shards over
  /// data_parallel_shard_degree × cp, so a shard group is a multiple of cp.
  bool shard_group_folds_cp = false;
  /// Experts split otherwise than the dense layers (Megatron-Core's expert tensor parallelism;
  /// NeMo 1.x's GPT recipe has no key for it).
  bool expert_tensor_parallel = true;
  /// Gradients reduced in bf16 (Megatron-Bridge's bf16 mixed-precision recipe sets
  /// grad_reduce_in_fp32 over the DDP configuration: fp32 only).
  bool bf16_gradient_reduction = true;
  /// FP8 with bf16 weights beside their FP8 copies (Megatron-Bridge's FP8 recipes keep the
  /// weights in FP8 and gather them so: fp8_param_gather on).
  bool fp8_without_param_gather = true;
  /// Megatron-Core's precision-aware optimizer (low-precision moments): Megatron-LM's and
  /// Megatron-Bridge's options; NeMo 1.x's YAML and DeepSpeed have none.
  bool precision_aware_optimizer = true;
  /// Megatron-Core's shared-expert overlap (--moe-shared-expert-overlap): Megatron-LM's and
  /// Megatron-Bridge's options; paraplan's NeMo 1.x export and reader do not carry it.
  bool shared_expert_overlap = true;
};

/// Every engine, in kEngines' order.
const EngineRules& engine_rules(Engine engine);
/// The engine a stack's plans export to and run on: megatron → Megatron-LM, fsdp → torchtitan
/// (PyTorch's FSDP2 trainer), deepspeed → Megatron-DeepSpeed.
Engine stack_engine(Stack stack);
/// The engine `--export` or `--from` names ("megatron", "nemo", "deepspeed", "torchtitan",
/// "bridge").
std::optional<Engine> engine_from_name(std::string_view name);

/// For an engine that sets only the first and the last stage's layers (NeMo): the even split of
/// `layers` over `pp` stages when its middle stages are equal, else the nearest split whose are
/// (the middle stages at round(layers / pp), the rest shared by the first and last, the last
/// taking the odd one); nullopt when no such split leaves each end a layer.
std::optional<std::vector<int>> first_last_split(int layers, int pp);

/// DeepSpeed's pipeline engine's split of `layers` transformer layers over `pp` stages as
/// Megatron-DeepSpeed asks for it (partition_method "type:transformer": DeepSpeed's
/// partition_balanced over the layer specs, the transformer layers weighing 1, the embedding,
/// norm, head and casts 0): for layers >= pp, the first layers % pp stages one layer more.
std::vector<int> deepspeed_split(int layers, int pp);
/// The split `engine` runs when it splits the layers itself (uneven_stages false) and `t` names
/// none: deepspeed_split where it differs from the even split; otherwise `t` as it is.
void apply_engine_split(const EngineRules& engine, TrainingConfig& t, int layers);

namespace rules {
/// The first rule of `engine` that `t` breaks (its stack, ZeRO, cp, vpp, the split, the
/// recomputation, sequence parallelism, replicas with model parallelism), or nullopt.
std::optional<Violation> engine(const EngineRules& engine, const TrainingConfig& t, int num_layers);
}  // namespace rules

}  // namespace paraplan
