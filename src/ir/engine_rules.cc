#include "ir/engine_rules.h"

#include <algorithm>
#include <string>
#include <vector>

namespace paraplan {
namespace {

// From each engine's own code at the commit named (docs/cli.md, "Export", lists them).
constexpr EngineRules kRules[] = {
    // Megatron-LM: its distributed optimizer shards the optimizer states (ZeRO 1), nothing more.
    {.engine = Engine::kMegatronLm,
     .title = "Megatron-LM",
     .commit = "d98e8a6",
     .stack = Stack::kMegatron,
     .max_zero_stage = 1},
    // NeMo runs Megatron-Core: the same, its stages uneven at the first and last only, its
    // experts split as the dense layers, no precision-aware optimizer in its YAML.
    {.engine = Engine::kNemo,
     .title = "NeMo",
     .commit = "NeMo 1.x megatron_gpt_config.yaml",
     .stack = Stack::kMegatron,
     .max_zero_stage = 1,
     .split_first_last_only = true,
     .expert_tensor_parallel = false,
     .precision_aware_optimizer = false,
     .shared_expert_overlap = false},
    // Megatron-DeepSpeed: DeepSpeed's pipeline engine splits the layers itself (deepspeed_split)
    // and does not interleave, its activation checkpointing takes every layer or none, sequences
    // are split by
    // Ulysses (not context parallelism), and it has no FP8 recipe.
    {.engine = Engine::kMegatronDeepSpeed,
     .title = "Megatron-DeepSpeed",
     .commit = "f4157be",
     .stack = Stack::kDeepSpeed,
     .context_parallel = false,
     .interleaving = false,
     .uneven_stages = false,
     .partial_recompute = false,
     .fp8 = false,
     .precision_aware_optimizer = false},
    // torchtitan: DDP or FSDP (no ZeRO 1), tensor parallelism with sequence parallelism, DDP
    // replicas alone ("DDP has not supported > 1D parallelism"); its selective option checkpoints
    // every N-th layer; HSDP shards over data_parallel_shard_degree × cp.
    {.engine = Engine::kTorchtitan,
     .title = "torchtitan",
     .commit = "238fa99",
     .stack = Stack::kFsdp,
     .zero_stage_1 = false,
     .recompute_every_kth = true,
     .sequence_parallel_with_tp = true,
     .replicas_alone = true,
     .mixed_precision_needs_fsdp = true,
     .shard_group_folds_cp = true,
     .precision_aware_optimizer = false},
    // Megatron-Bridge runs Megatron-Core as Megatron-LM does; its mixed-precision recipes reduce
    // gradients in fp32 (bf16_mixed) and gather FP8 parameters (bf16_with_fp8_*_mixed).
    {.engine = Engine::kMegatronBridge,
     .title = "Megatron-Bridge",
     .commit = "067f987",
     .stack = Stack::kMegatron,
     .max_zero_stage = 1,
     .bf16_gradient_reduction = false,
     .fp8_without_param_gather = false},
};

constexpr bool rules_in_order() {
  for (std::size_t i = 0; i < std::size(kRules); ++i)
    if (kRules[i].engine != kEngines[i]) return false;
  return std::size(kRules) == kEngines.size();
}
static_assert(rules_in_order(), "kRules lists every engine once, in kEngines' order");

std::string count_str(long long v) { return std::to_string(v); }

}  // namespace

const EngineRules& engine_rules(Engine engine) { return kRules[static_cast<std::size_t>(engine)]; }

Engine stack_engine(Stack stack) {
  switch (stack) {
    case Stack::kMegatron:
      return Engine::kMegatronLm;
    case Stack::kFsdp:
      return Engine::kTorchtitan;
    case Stack::kDeepSpeed:
      return Engine::kMegatronDeepSpeed;
  }
  return Engine::kMegatronLm;
}

std::optional<Engine> engine_from_name(std::string_view name) {
  for (Engine e : kEngines)
    if (engine_name(e) == name) return e;
  return std::nullopt;
}

std::vector<int> deepspeed_split(int layers, int pp) {
  if (pp < 1) return {};
  std::vector<int> split(static_cast<std::size_t>(pp), layers / pp);
  for (int i = 0; i < layers % pp; ++i) ++split[static_cast<std::size_t>(i)];
  return split;
}

void apply_engine_split(const EngineRules& engine, TrainingConfig& t, int layers) {
  if (engine.uneven_stages || t.pp < 2 || !t.stage_layers.empty() || layers < t.pp) return;
  std::vector<int> split = deepspeed_split(layers, t.pp);
  if (split != even_stage_split(layers, t.pp)) t.stage_layers = std::move(split);
}

std::optional<std::vector<int>> first_last_split(int layers, int pp) {
  if (pp < 1 || layers < pp) return std::nullopt;
  std::vector<int> split = even_stage_split(layers, pp);
  if (pp <= 2 ||
      std::all_of(split.begin() + 1, split.end() - 1, [&](int n) { return n == split[1]; }))
    return split;
  const int middle = (2 * layers + pp) / (2 * pp);  // round(layers / pp)
  const int rest = layers - (pp - 2) * middle;
  if (rest < 2) return std::nullopt;
  split.assign(static_cast<std::size_t>(pp), middle);
  split.front() = rest / 2;
  split.back() = rest - rest / 2;
  return split;
}

namespace rules {

std::optional<Violation> engine(const EngineRules& e, const TrainingConfig& t, int num_layers) {
  const std::string who(e.title);
  auto broken = [&](Knob knob, const char* rule, std::string value, std::string text) {
    return Violation{knob, rule, std::move(value), who + " " + std::move(text), {}};
  };
  if (t.stack != e.stack)
    return broken(Knob::kStack, "engine_stack", std::string(stack_text(t.stack)),
                  "runs on the " + std::string(stack_text(e.stack)) + " stack ({stack} " +
                      std::string(stack_text(e.stack)) + ")");
  if (t.zero_stage > e.max_zero_stage)
    return broken(
        Knob::kZero, "engine_zero", count_str(t.zero_stage),
        "shards at most to ZeRO " + count_str(e.max_zero_stage) + " (its distributed optimizer)");
  if (t.zero_stage == 1 && !e.zero_stage_1)
    return broken(Knob::kZero, "engine_zero_1", "1",
                  "shards with FSDP (ZeRO 3, or 2 without resharding) or not at all (DDP)");
  if (t.cp > 1 && !e.context_parallel)
    return broken(Knob::kCp, "engine_cp", count_str(t.cp),
                  "splits sequences with Ulysses, not context parallelism; use {cp} 1");
  if (t.vpp > 1 && !e.interleaving)
    return broken(Knob::kVpp, "engine_vpp", count_str(t.vpp),
                  "does not interleave its pipeline (DeepSpeed's pipeline engine); use {vpp} 1");
  if (!e.uneven_stages && !t.stage_layers.empty() &&
      t.stage_layers != deepspeed_split(num_layers, t.pp))
    return broken(Knob::kStageLayers, "engine_even_stages", "",
                  "splits the transformer layers over the stages itself (DeepSpeed's "
                  "partition_balanced: the first stages one layer more where they do not divide)");
  // Megatron-Core splits the first and last stages' layers over their virtual stages evenly
  // (get_num_layers_to_build asserts they divide).
  if (e.split_first_last_only && t.vpp > 1 && !t.stage_layers.empty() &&
      (!t.virtual_stage_layers.empty() || std::any_of(t.stage_layers.begin(), t.stage_layers.end(),
                                                      [&](int n) { return n % t.vpp != 0; })))
    return broken(Knob::kStageLayers, "engine_first_last_split", "",
                  "gives interleaved stages only as the first and the last stage's layers, each "
                  "a multiple of {vpp} " +
                      count_str(t.vpp) + " split evenly over its virtual stages");
  if (e.split_first_last_only && num_layers > 0 && t.pp > 2) {
    const std::vector<int> split =
        t.stage_layers.empty() ? even_stage_split(num_layers, t.pp) : t.stage_layers;
    if (!std::all_of(split.begin() + 1, split.end() - 1, [&](int n) { return n == split[1]; }))
      return broken(Knob::kStageLayers, "engine_first_last_split", "",
                    "sets only the first and the last stage's layers and splits the rest "
                    "evenly (num_layers_in_first/last_pipeline_stage), which cannot give " +
                        count_str(num_layers) + " layers on {pp} " + count_str(t.pp) +
                        " as priced; choose a {pp} whose middle stages hold equal layers");
  }
  if (!e.partial_recompute && t.recompute == Recompute::kFull && t.recompute_layers > 0)
    return broken(Knob::kRecompute, "engine_whole_recompute", count_str(t.recompute_layers),
                  "checkpoints every layer or none (full or none)");
  if (e.recompute_every_kth && t.recompute == Recompute::kFull && t.recompute_layers > 0 &&
      num_layers > 0 && t.pp > 0) {
    // A rank's layers (its chunks together when interleaved): the largest stage's.
    const std::vector<int> split =
        t.stage_layers.empty() ? even_stage_split(num_layers, t.pp) : t.stage_layers;
    const long long per_rank = *std::max_element(split.begin(), split.end());
    const long long every = per_rank / t.recompute_layers;
    if (every < 1 || per_rank / every != t.recompute_layers)
      return broken(Knob::kRecompute, "engine_every_kth", count_str(t.recompute_layers),
                    "checkpoints every k-th layer of a rank, and no k recomputes " +
                        count_str(t.recompute_layers) + " of its " + count_str(per_rank) +
                        " layers");
  }
  if (!e.fp8 && t.fp8)
    return broken(Knob::kPrecision, "engine_fp8", "fp8", "has no FP8 recipe; use {precision} bf16");
  if (!e.fp8_without_param_gather && t.fp8 && !t.fp8_param_gather)
    return broken(Knob::kFp8ParamGather, "engine_fp8_param_gather", "off",
                  "keeps FP8 weights and gathers them in FP8 in every FP8 recipe "
                  "(fp8_param_gather); plan with {fp8_param_gather}");
  if (!e.shared_expert_overlap && t.moe_shared_expert_overlap)
    return broken(Knob::kSharedExpertOverlap, "engine_shared_expert_overlap", "on",
                  "has no key for the shared experts' overlap; plan with {shared_expert_overlap} "
                  "off");
  if (!e.precision_aware_optimizer && t.optimizer_moments != OptimizerMoments::kFp32)
    return broken(Knob::kOptimizerMoments, "engine_optimizer_moments",
                  std::string(optimizer_moments_text(t.optimizer_moments)),
                  "has no precision-aware optimizer (Adam's moments in fp32 only); use "
                  "{optimizer_moments} fp32");
  if (!e.precision_aware_optimizer && t.precision_aware_optimizer)
    return broken(Knob::kPrecisionAwareOptimizer, "engine_precision_aware_optimizer", "on",
                  "has no precision-aware optimizer (fp32 main parameters only); plan with "
                  "{precision_aware_optimizer} off");
  if (!e.bf16_gradient_reduction && t.bf16_gradient_reduction)
    return broken(Knob::kGradReduceDtype, "engine_bf16_grad_reduce", "bf16",
                  "reduces gradients in fp32 in a launch of overrides (its bf16 recipe, "
                  "bf16_mixed, a name no override can change, sets grad_reduce_in_fp32 over the "
                  "DDP configuration); use {grad_reduce_dtype} fp32");
  if (e.sequence_parallel_with_tp && t.tp > 1 && !t.sequence_parallel)
    return broken(Knob::kSequenceParallel, "engine_sp_with_tp", "",
                  "shards the norms' sequence with its tensor parallelism: {tp} " +
                      count_str(t.tp) + " needs {sequence_parallel}");
  const bool fsdp_on = (t.zero_stage >= 2 && t.dp > 1) || t.cp > 1;
  const bool pure_bf16 = t.bf16_gradient_reduction && !t.fp32_loss;
  if (e.mixed_precision_needs_fsdp && !fsdp_on && (t.tp > 1 || t.pp > 1) && !pure_bf16)
    return broken(Knob::kZero, "engine_amp_needs_fsdp", count_str(t.zero_stage),
                  "runs bf16 mixed precision only under FSDP; without sharded data parallelism "
                  "or context parallelism beside tensor or pipeline parallelism it trains in "
                  "fp32. Shard over data-parallel replicas ({zero} 2 or 3 with dp > 1), or train "
                  "in pure bf16 ({grad_reduce_dtype} bf16 {fp32_loss} bf16)");
  if (!e.expert_tensor_parallel && t.etp > 0 && t.etp != t.tp)
    return broken(Knob::kEtp, "engine_etp", count_str(t.etp),
                  "splits the experts as the dense layers; use {etp} " + count_str(t.tp) +
                      " (the tensor-parallel size)");
  if (e.shard_group_folds_cp && t.shard_group > 0 && t.shard_group % t.cp != 0)
    return broken(Knob::kShardGroup, "engine_shard_group_folds_cp", count_str(t.shard_group),
                  "shards over whole context-parallel groups (data_parallel_shard_degree × cp): "
                  "{shard_group} must be a multiple of {cp} " +
                      count_str(t.cp));
  if (e.replicas_alone && t.zero_stage == 0 && t.dp > 1 && (t.tp > 1 || t.pp > 1))
    return broken(Knob::kZero, "engine_replicas_alone", "0",
                  "runs data-parallel replicas without sharding (DDP) only alone, not beside "
                  "tensor or pipeline parallelism; use {zero} 2 or 3 (FSDP)");
  return std::nullopt;
}

}  // namespace rules
}  // namespace paraplan
