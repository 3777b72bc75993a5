#include "ir/knobs.h"

#include <algorithm>
#include <iomanip>
#include <sstream>

#include "ir/training_rules.h"

namespace paraplan {
namespace {

constexpr unsigned kMegatronOnly = stack_bit(Stack::kMegatron);
constexpr unsigned kMegatronAndFsdp = stack_bit(Stack::kMegatron) | stack_bit(Stack::kFsdp);
constexpr double kWidth = 1 << 16;  // a parallel size
constexpr double kWide = 1 << 20;   // data-parallel replicas, micro-batch sequences

// Spellings: Megatron-LM's arguments, NeMo's recipe keys, Megatron-DeepSpeed's arguments and
// ds_config.json keys, torchtitan's job keys, Megatron-Bridge's ConfigContainer overrides (engines/
// reads and writes them by these names). One row per knob: keyword, flag, plan-file key, type,
// unit, min, max, choices, searched, default, stacks, {Megatron-LM, NeMo, Megatron-DeepSpeed,
// torchtitan, Megatron-Bridge}, help.
// clang-format off
constexpr KnobSpec kTable[] = {
    {Knob::kDevices, "devices", "--devices", "devices", KnobType::kInteger, "devices", 1, kWide, "",
     false, "8 (evaluate: tp × cp × pp × dp)", kAllStacks, {},
     "Devices the job runs on"},
    {Knob::kGlobalBatch, "batch", "--batch", "global_batch", KnobType::kInteger, "sequences", 1, 1 << 30, "",
     false, "512", kAllStacks,
     {"--global-batch-size", "model.global_batch_size", "train_batch_size", "training.global_batch_size", "train.global_batch_size"},
     "Global batch in sequences per iteration"},
    {Knob::kMicroBatch, "micro_batch", "--micro-batch", "micro_batch", KnobType::kInteger, "sequences", 1, kWide, "",
     true, "1", kAllStacks,
     {"--micro-batch-size", "model.micro_batch_size", "train_micro_batch_size_per_gpu", "training.local_batch_size", "train.micro_batch_size"},
     "Sequences per micro-batch"},
    {Knob::kSeqLen, "seq_len", "--seq-len", "seq_len", KnobType::kInteger, "tokens", 1, 1 << 24, "",
     false, "2048", kAllStacks,
     {"--seq-length", "model.encoder_seq_length", "--seq-length", "training.seq_len", "dataset.seq_length"},
     "Sequence length in tokens"},
    {Knob::kTp, "tp", "--tp", "tp", KnobType::kInteger, "devices", 1, kWidth, "",
     true, "1", kAllStacks,
     {"--tensor-model-parallel-size", "model.tensor_model_parallel_size", "--tensor-model-parallel-size", "parallelism.tensor_parallel_degree", "model.tensor_model_parallel_size"},
     "Tensor-parallel size"},
    {Knob::kCp, "cp", "--cp", "cp", KnobType::kInteger, "devices", 1, kWidth, "",
     true, "1", kAllStacks,
     {"--context-parallel-size", "model.context_parallel_size", "", "parallelism.context_parallel_degree", "model.context_parallel_size"},
     "Context-parallel size"},
    {Knob::kPp, "pp", "--pp", "pp", KnobType::kInteger, "stages", 1, kWidth, "",
     true, "1", kAllStacks,
     {"--pipeline-model-parallel-size", "model.pipeline_model_parallel_size", "--pipeline-model-parallel-size", "parallelism.pipeline_parallel_degree", "model.pipeline_model_parallel_size"},
     "Pipeline-parallel size (stages)"},
    {Knob::kDp, "dp", "--dp", "dp", KnobType::kInteger, "replicas", 1, kWide, "",
     true, "devices ÷ (tp × cp × pp)", kAllStacks,
     {"", "", "", "parallelism.data_parallel_replicate_degree"},
     "Data-parallel size"},
    {Knob::kEp, "ep", "--ep", "ep", KnobType::kInteger, "devices", 1, kWidth, "",
     true, "1", kAllStacks,
     {"--expert-model-parallel-size", "model.expert_model_parallel_size", "", "parallelism.expert_parallel_degree", "model.expert_model_parallel_size"},
     "Expert-parallel size (MoE models)"},
    {Knob::kEtp, "etp", "--etp", "etp", KnobType::kInteger, "devices", 0, kWidth, "",
     false, "0: tp", kMegatronOnly,
     {"--expert-tensor-parallel-size", "", "", "", "model.expert_tensor_parallel_size"},
     "Expert tensor-parallel size (MoE, megatron): each expert split this many ways, expert parallelism over tp × cp × dp ÷ etp (Megatron-Core's expert grid; 1 keeps experts whole beside tensor-parallel attention)"},
    {Knob::kVpp, "vpp", "--vpp", "vpp", KnobType::kInteger, "virtual stages", 1, kWidth, "",
     true, "1", kAllStacks,
     {"--num-virtual-stages-per-pipeline-rank", "model.virtual_pipeline_model_parallel_size", "", "parallelism.pipeline_parallel_schedule", "model.virtual_pipeline_model_parallel_size"},
     "Virtual stages per device: interleaved 1F1B when > 1"},
    {Knob::kRecompute, "recompute", "--recompute", "recompute", KnobType::kText, "", 0, 0, "none|selective|full|N",
     true, "full", kAllStacks,
     {"--recompute-granularity", "model.activations_checkpoint_granularity", "activation_checkpointing", "activation_checkpoint.mode", "model.recompute_granularity"},
     "Activation recomputation: none, selective (Megatron's attention core; on fsdp torchtitan's per-op checkpointing), full or N (full recomputation of N layers per stage)"},
    {Knob::kSequenceParallel, "sequence_parallel", "--sequence-parallel", "sequence_parallel", KnobType::kFlag, "", 0, 0, "",
     true, "off", kAllStacks,
     {"--sequence-parallel", "model.sequence_parallel", "--sequence-parallel", "", "model.sequence_parallel"},
     "Megatron sequence parallelism"},
    {Knob::kZero, "zero", "--zero", "zero", KnobType::kInteger, "", 0, 3, "",
     true, "0 (fsdp: 3)", kAllStacks,
     {"--use-distributed-optimizer", "model.optim.name", "zero_optimization.stage", "parallelism.data_parallel_shard_degree", "ddp.use_distributed_optimizer"},
     "ZeRO stage 0-3 (1 = distributed optimizer)"},
    {Knob::kShardGroup, "shard_group", "--shard-group", "shard_group", KnobType::kInteger, "devices", 0, kWide, "",
     false, "0: dp × cp (full sharding)", stack_bit(Stack::kFsdp) | stack_bit(Stack::kDeepSpeed),
     {"", "", "zero_optimization.mics_shard_size", ""},
     "HSDP: ZeRO 3's states sharded over groups of this many of the dp × cp ranks (e.g. one node's), the groups replicas that all-reduce their shards' gradients (torchtitan's data_parallel_shard_degree × cp, FSDP's HYBRID_SHARD, DeepSpeed's MiCS mics_shard_size)"},
    {Knob::kOverlapGradReduce, "overlap_grad_reduce", "--overlap-grad-reduce", "overlap_grad_reduce", KnobType::kOnOff, "", 0, 0, "",
     true, "the stack's", kAllStacks,
     {"--overlap-grad-reduce", "model.optim.overlap_grad_sync", "zero_optimization.overlap_comm", "", "ddp.overlap_grad_reduce"},
     "Overlap the data-parallel gradient reduction with the backward pass (default with --stack megatron or fsdp)"},
    {Knob::kAttention, "attention", "--attention", "attention", KnobType::kChoice, "", 0, 0, "flash|standard",
     false, "flash", kAllStacks,
     {"--attention-backend", "", "--use-flash-attn-v2", "", "model.attention_backend"},
     "Attention kernel: flash (FlashAttention: no s × s scores in memory) or standard (materialised scores, as 2023 Megatron-DeepSpeed)"},
    {Knob::kStageLayers, "stage_layers", "--stage-layers", "stage_layers", KnobType::kText, "", 0, 0, "",
     true, "as even as possible", kAllStacks,
     {"--pipeline-model-parallel-layout", "model.pipeline_model_parallel_layout", "", "parallelism.module_fqns_per_model_part", "model.pipeline_model_parallel_layout"},
     "Layers per pipeline stage, e.g. 9,8,8,7"},
    {Knob::kMoeCapacityFactor, "moe_capacity_factor", "--moe-capacity-factor", "moe_capacity_factor", KnobType::kReal, "", 1, 1024, "",
     false, "dropless", kAllStacks,
     {"--moe-expert-capacity-factor", "model.moe_expert_capacity_factor", "", "", "model.moe_expert_capacity_factor"},
     "MoE token dropping: each expert takes at most this multiple of its mean share of the tokens, padded to it (Megatron's --moe-expert-capacity-factor with --moe-pad-expert-input-to-capacity)"},
    {Knob::kStack, "stack", "--stack", "stack", KnobType::kChoice, "", 0, 0, "megatron|fsdp|deepspeed",
     false, "megatron", kAllStacks, {},
     "Training stack: megatron (Megatron-Core/NeMo: fused kernels, cuDNN attention, its overlaps), fsdp (PyTorch FSDP: eager element-wise kernels, FlashAttention-2, prefetched gathers; ZeRO 3 unless --zero) or deepspeed (Megatron-DeepSpeed: fused kernels, FlashAttention-2, no overlaps)"},
    {Knob::kTpCommOverlap, "tp_comm_overlap", "--tp-comm-overlap", "tp_comm_overlap", KnobType::kOnOff, "", 0, 0, "",
     false, "on where it applies (megatron)", kMegatronAndFsdp,
     {"--tp-comm-overlap", "model.ub_tp_comm_overlap", "", "parallelism.enable_async_tensor_parallel", "model.tp_comm_overlap"},
     "Overlap tensor-parallel communication with the GEMMs (megatron: userbuffers; fsdp: torchtitan's async tensor parallelism; needs --sequence-parallel)"},
    {Knob::kOverlapP2pComm, "overlap_p2p_comm", "--overlap-p2p-comm", "overlap_p2p_comm", KnobType::kOnOff, "", 0, 0, "",
     false, "on where it applies", kMegatronOnly,
     {"--no-overlap-p2p-communication", "model.overlap_p2p_comm", "", "", "model.overlap_p2p_comm"},
     "Overlap pipeline sends with compute (interleaved schedule, --vpp > 1)"},
    {Knob::kOverlapParamGather, "overlap_param_gather", "--overlap-param-gather", "overlap_param_gather", KnobType::kOnOff, "", 0, 0, "",
     false, "on where it applies", kMegatronOnly,
     {"--overlap-param-gather", "model.optim.overlap_param_sync", "", "", "ddp.overlap_param_gather"},
     "Overlap the distributed optimizer's parameter all-gather with the forward (--zero 1)"},
    {Knob::kPrecision, "precision", "--precision", "precision", KnobType::kChoice, "", 0, 0, "bf16|fp8|mxfp8",
     false, "bf16", kAllStacks,
     {"--fp8-format", "model.fp8", "", "quantize.linear.float8", "mixed_precision"},
     "Precision of the transformer layers' matrix products: bf16, fp8 (Transformer Engine's recipe; H100, H200; on B200 and GB200 its block-scaled MXFP8) or mxfp8"},
    {Knob::kFp8ParamGather, "fp8_param_gather", "--fp8-param-gather", "fp8_param_gather", KnobType::kOnOff, "", 0, 0, "",
     false, "off", kMegatronAndFsdp,
     {"--fp8-param-gather", "model.fp8_params", "", "quantize.linear.float8.enable_fsdp_float8_all_gather", "mixed_precision"},
     "FP8 parameters with --precision fp8: megatron, the linear weights kept in FP8 alone and the distributed optimizer's parameter gather in FP8; fsdp (ZeRO 3), FSDP's all-gather of float8 weights (torchtitan's enable_fsdp_float8_all_gather)"},
    {Knob::kGradReduceDtype, "grad_reduce_dtype", "--grad-reduce-dtype", "grad_reduce_dtype", KnobType::kChoice, "", 0, 0, "bf16|fp32",
     false, "fp32", kAllStacks,
     {"--grad-reduce-in-bf16", "", "communication_data_type", ""},
     "Precision of the data-parallel gradient reduction: fp32 or bf16 (FSDP's pure bf16 mixed precision, Composer's PURE)"},
    {Knob::kLossDtype, "loss_dtype", "--loss-dtype", "fp32_loss", KnobType::kChoice, "", 0, 0, "bf16|fp32",
     false, "fp32 (fsdp with bf16 gradient reduction: bf16)", kAllStacks, {},
     "Precision of the logits the loss keeps: fp32 or bf16 (pure bf16, no autocast)"},
    {Knob::kMemory, "memory", "--memory", "", KnobType::kText, "bytes", 0, 0, "",
     false, "the cluster's", kAllStacks, {},
     "Memory per device, overriding the cluster's: 40GiB (2^30 bytes), 80GB (10^9) or a number of bytes"},
    {Knob::kMemoryHeadroom, "memory_headroom", "--memory-headroom", "", KnobType::kText, "bytes", 0, 0, "",
     false, "plan: 5% (the memory model's error on measured peaks); evaluate, frontier: none", kAllStacks, {},
     "Memory per device kept free: a share (5%) or a size (2GiB, 2GB); plans must fit in the rest"},
    {Knob::kCalibration, "calibration", "--calibration", "", KnobType::kText, "", 0, 0, "",
     false, "the shipped one for the cluster's device", kAllStacks, {},
     "Calibration file (JSON or YAML, docs/formats.md); default: the shipped one for the cluster's device (A100, H100, H200)"},
    {Knob::kCompile, "compile", "--compile", "fused_elementwise", KnobType::kOnOff, "", 0, 0, "",
     false, "off", stack_bit(Stack::kFsdp),
     {"", "", "", "compile.enable"},
     "torch.compile the model: element-wise work fused into few kernels instead of one eager kernel per operation (Megatron's and DeepSpeed's kernels are fused already)"},
    {Knob::kLossKernel, "loss_kernel", "--loss-kernel", "fused_loss", KnobType::kChoice, "", 0, 0, "eager|fused",
     false, "eager", stack_bit(Stack::kFsdp), {},
     "Cross-entropy kernel: eager (F.cross_entropy on fp32 logits, as PyTorch users and torchtitan write it: three fp32 copies of the logits at the backward's start) or fused (reads the bf16 logits and writes their gradient in place: flash-attn's, LLM Foundry's default, Liger's)"},
    {Knob::kOptimizerMoments, "optimizer_moments", "--optimizer-moments", "optimizer_moments", KnobType::kChoice, "", 0, 0, "fp32|bf16|fp8",
     false, "fp32", kMegatronOnly,
     {"--exp-avg-dtype", "", "", "", "optimizer.exp_avg_dtype"},
     "Adam's moments: fp32 (12 bytes of optimizer state a parameter), or bf16 / fp8 with Megatron-Core's precision-aware optimizer, the fp32 main parameters kept as the bf16 weights' missing 16 bits (6 / 4 bytes; DeepSeek-V3's recipe: bf16; needs --zero 1 or 2)"},
    {Knob::kSharedExpertOverlap, "shared_expert_overlap", "--shared-expert-overlap", "moe_shared_expert_overlap", KnobType::kOnOff, "", 0, 0, "",
     false, "on where it applies (shared experts, ep > 1)", kMegatronOnly,
     {"--moe-shared-expert-overlap", "", "", "", "model.moe_shared_expert_overlap"},
     "Run a MoE layer's shared experts on a side stream, their GEMMs hiding the expert-parallel dispatch and combine (Megatron-Core's --moe-shared-expert-overlap; DeepSeek-V2's, GLM-4.5's and Kimi K2's recipes)"},
    {Knob::kPrecisionAwareOptimizer, "precision_aware_optimizer", "--precision-aware-optimizer", "use_precision_aware_optimizer", KnobType::kOnOff, "", 0, 0, "",
     false, "off (on with --optimizer-moments bf16 or fp8)", kMegatronOnly,
     {"--use-precision-aware-optimizer", "", "", "", "optimizer.use_precision_aware_optimizer"},
     "Megatron-Core's precision-aware optimizer with fp32 moments too: Transformer Engine's FusedAdam keeps the fp32 main parameters as the bf16 weights' missing 16 bits (10 bytes of optimizer state a parameter, not 12; Megatron-Bridge's Qwen3 16-GPU recipes; needs --zero 1 or 2)"},
};
// clang-format on

// The table is in Knob's order: knob_spec indexes it.
constexpr bool knobs_in_order() {
  for (std::size_t i = 0; i < std::size(kTable); ++i)
    if (static_cast<std::size_t>(kTable[i].knob) != i) return false;
  return std::size(kTable) == static_cast<std::size_t>(Knob::kPrecisionAwareOptimizer) + 1;
}
static_assert(knobs_in_order(), "kTable lists every Knob once, in Knob's order");

}  // namespace

std::string_view engine_name(Engine engine) {
  switch (engine) {
    case Engine::kMegatronLm:
      return "megatron";
    case Engine::kNemo:
      return "nemo";
    case Engine::kMegatronDeepSpeed:
      return "deepspeed";
    case Engine::kTorchtitan:
      return "torchtitan";
    case Engine::kMegatronBridge:
      return "bridge";
  }
  return "?";
}

std::vector<std::string> stacks_of(const KnobSpec& spec) {
  std::vector<std::string> out;
  for (Stack st : {Stack::kMegatron, Stack::kFsdp, Stack::kDeepSpeed})
    if (spec.stacks & stack_bit(st)) out.emplace_back(stack_text(st));
  return out;
}

std::vector<std::string> choices_of(const KnobSpec& spec) {
  std::vector<std::string> out;
  const std::string_view c = spec.choices;
  for (std::size_t pos = 0; !c.empty() && pos <= c.size();) {
    const std::size_t bar = std::min(c.find('|', pos), c.size());
    out.emplace_back(c.substr(pos, bar - pos));
    pos = bar + 1;
  }
  return out;
}

std::span<const KnobSpec> knob_table() { return kTable; }

const KnobSpec& knob_spec(Knob knob) { return kTable[static_cast<std::size_t>(knob)]; }

std::string_view knob_field(Knob knob) {
  const KnobSpec& s = knob_spec(knob);
  return s.config_key.empty() ? s.keyword : s.config_key;
}

std::string indivisible_devices(int devices, int tp, int cp, int pp) {
  const int inner = std::max(1, tp * cp * pp);
  const int below = devices / inner * inner, above = below + inner;
  std::ostringstream out;
  out << ' ' << devices << ": not divisible by tp × cp × pp = " << tp << " × " << cp << " × " << pp
      << " = " << inner << " (data parallelism would be " << std::setprecision(3)
      << static_cast<double>(devices) / inner << " replicas); valid: a multiple of " << inner
      << ", e.g. ";
  if (below >= inner) out << below << " or ";
  out << above;
  return out.str();
}

}  // namespace paraplan
