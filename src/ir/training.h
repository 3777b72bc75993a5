// How a transformer is trained: batch, sequence and every parallelism knob. The analytic cost
// model prices one of these; the transformer planner searches over them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace paraplan {

/// Activation recomputation. kFull with recompute_layers > 0 recomputes only that many layers of
/// each pipeline stage (Megatron's --recompute-method block).
enum class Recompute { kNone, kSelective, kFull };

/// The attention kernel. kFlash (FlashAttention, Megatron's --attention-backend flash) keeps the
/// s × s scores on chip: no score memory, no score traffic, causal blocks skipped, the scores
/// recomputed in the backward. kStandard materialises them (softmax, mask and dropout in memory).
enum class Attention { kFlash, kStandard };

/// The training engine that runs the model (docs/cost-models.md, "Training stacks"): what it
/// fuses, which attention kernel it calls, which communications it can overlap and at what cost.
/// kMegatron: Megatron-Core / NeMo (Transformer Engine's fused kernels and cuDNN fused
/// attention; tensor-parallel, pipeline, parameter-gather and gradient-reduce overlaps).
/// kFsdp: PyTorch FSDP (eager element-wise kernels, FlashAttention-2, prefetched gathers).
/// kDeepSpeed: Megatron-DeepSpeed (Megatron's fused kernels under DeepSpeed's engine,
/// FlashAttention-2, no Megatron-Core overlaps).
enum class Stack { kMegatron, kFsdp, kDeepSpeed };

/// Adam's moments as the optimizer keeps them. kFp32: Megatron-Core's default (fp32 main
/// parameters and moments, 12 bytes a parameter). kBf16 / kFp8: Megatron-Core's precision-aware
/// optimizer (--use-precision-aware-optimizer: Transformer Engine's FusedAdam holds the
/// distributed optimizer's states) with both moments in bf16 / FP8, the fp32 main parameters
/// kept as the 16 bits the bf16 parameters lack (store_param_remainders, its default): 6 / 4
/// bytes a parameter. DeepSeek-V3's recipe runs kBf16.
enum class OptimizerMoments { kFp32, kBf16, kFp8 };

/// Bytes of one of Adam's moments for a parameter.
inline double moment_bytes(OptimizerMoments moments) {
  switch (moments) {
    case OptimizerMoments::kBf16:
      return 2;
    case OptimizerMoments::kFp8:
      return 1;
    default:
      return 4;
  }
}

/// "fp32", "bf16", "fp8": the moments as knobs, plan files, launches and reports name them.
inline std::string_view optimizer_moments_text(OptimizerMoments moments) {
  switch (moments) {
    case OptimizerMoments::kBf16:
      return "bf16";
    case OptimizerMoments::kFp8:
      return "fp8";
    default:
      return "fp32";
  }
}
inline std::optional<OptimizerMoments> optimizer_moments_from_text(std::string_view text) {
  for (OptimizerMoments m :
       {OptimizerMoments::kFp32, OptimizerMoments::kBf16, OptimizerMoments::kFp8})
    if (optimizer_moments_text(m) == text) return m;
  return std::nullopt;
}

struct TrainingConfig {
  std::int64_t seq_len = 2048;
  std::int64_t global_batch = 512;  ///< sequences per iteration
  std::int64_t micro_batch = 1;     ///< sequences per micro-batch
  int tp = 1;                       ///< tensor parallel
  int cp = 1;                       ///< context parallel (the sequence split across devices)
  int pp = 1;                       ///< pipeline stages
  int dp = 1;                       ///< data parallel
  int ep = 1;                       ///< expert parallel (carved out of dp × cp; MoE models only)
  /// Expert tensor parallelism (Megatron-Core's --expert-tensor-parallel-size): each expert's
  /// matrices split this many ways, the experts' ranks of a stage (tp × cp × dp of them) laid
  /// out as etp × ep × expert data parallel. 0: the tensor-parallel size (the experts split as
  /// the dense layers, expert parallelism within dp × cp).
  int etp = 0;
  int expert_tp() const { return etp > 0 ? etp : tp; }
  int vpp = 1;  ///< virtual stages per device (interleaved 1F1B when > 1)
  Recompute recompute = Recompute::kFull;
  int recompute_layers = 0;  ///< kFull: layers recomputed per stage; 0 = all of them
  bool sequence_parallel = false;
  int zero_stage = 0;  ///< 0: none; 1: optimizer states; 2: + gradients; 3: + weights
  /// ZeRO 3's shard group (HSDP: PyTorch FSDP's hybrid sharding, torchtitan's
  /// data_parallel_shard_degree × cp): the ranks of dp × cp that share one copy of the states,
  /// a divisor of dp × cp; the groups replicate it and all-reduce their shards' gradients.
  /// 0: every rank of dp × cp (full sharding).
  int shard_group = 0;
  /// The ranks one copy of the sharded states spans: the shard group, or dp × cp.
  int shard_ranks() const { return shard_group > 0 ? shard_group : dp * cp; }
  bool overlap_grad_reduce = false;  ///< data-parallel gradient reduction overlapped with backward
  Stack stack = Stack::kMegatron;
  /// Megatron-Core's overlaps (stack kMegatron only). Tensor-parallel all-gathers and
  /// reduce-scatters split into chunks and pipelined with the GEMMs they feed (--tp-comm-overlap,
  /// userbuffers; needs sequence parallelism).
  bool tp_comm_overlap = false;
  /// Pipeline sends and receives posted ahead and waited on just before they are needed, in the
  /// interleaved schedule (--overlap-p2p-communication; vpp > 1).
  bool overlap_p2p_comm = false;
  /// The distributed optimizer's all-gather of the updated bf16 parameters overlapped with the
  /// next iteration's forward (--overlap-param-gather; ZeRO 1).
  bool overlap_param_gather = false;
  /// A MoE layer's shared experts on a side stream, their GEMMs overlapping the expert-parallel
  /// dispatch and combine all-to-alls (Megatron-Core's --moe-shared-expert-overlap).
  bool moe_shared_expert_overlap = false;
  /// FP8 matrix products (Transformer Engine's recipe, E4M3 forward and E5M2 gradients with
  /// delayed scaling): the transformer layers' linear GEMMs at twice the bf16 rate on devices
  /// with FP8 tensor cores, their inputs cast and (backward) transposed, the weights' FP8 copies
  /// kept beside the bf16 ones, the GEMM inputs saved for the backward in FP8. Attention, the LM
  /// head, the router and the optimizer stay in bf16/fp32.
  bool fp8 = false;
  /// FP8 parameters (Megatron-LM's --fp8-param-gather, NeMo's fp8_params): with fp8, each linear
  /// weight kept in FP8 alone (with its transpose) instead of bf16 beside its FP8 copy, and the
  /// distributed optimizer's parameter all-gather in FP8 (1 byte a parameter instead of 2).
  bool fp8_param_gather = false;
  Attention attention = Attention::kFlash;
  /// Attention and residual dropout: their masks are kept for the backward (Korthikanti et al.
  /// count them; most LLM pretraining today, MPT and Llama among them, runs without).
  bool dropout = true;
  /// Gradients reduced in bf16 (FSDP's PURE mixed precision, DeepSpeed's default) rather than in
  /// fp32 (the calibration's gradient_bytes_per_parameter).
  bool bf16_gradient_reduction = false;
  /// Element-wise work in fused kernels (Megatron-LM's fused layer norm, bias-GELU,
  /// bias-dropout-add and softmax) rather than one eager PyTorch kernel per operation.
  bool fused_elementwise = true;
  /// The loss computed on fp32 logits (autocast, Megatron's cross entropy) rather than on the
  /// bf16 logits themselves (pure bf16, FSDP's PURE mode): 4 instead of 2 bytes per logit kept.
  bool fp32_loss = true;
  /// A fused cross-entropy kernel (flash-attn's, as LLM Foundry's default loss_fn; Liger's) that
  /// reads the bf16 logits and writes their gradient in place, rather than PyTorch's eager
  /// F.cross_entropy on fp32 logits (log-softmax output, its gradient and the loss's gradient
  /// each a full fp32 copy). Stack kFsdp; Megatron's and DeepSpeed's losses are their own.
  bool fused_loss = false;
  /// Adam's moments (and with them the main parameters' bytes): the precision-aware optimizer's
  /// when not kFp32 (stack kMegatron, ZeRO 1 or 2).
  OptimizerMoments optimizer_moments = OptimizerMoments::kFp32;
  /// Megatron-Core's precision-aware optimizer with fp32 moments as well
  /// (--use-precision-aware-optimizer alone, as Megatron-Bridge's Qwen3 16-GPU recipes run it):
  /// the main parameters are the bf16 weights' 16-bit remainders all the same, 10 bytes of state
  /// a parameter. Low-precision moments imply it (precision_aware_optimizer()).
  bool precision_aware_optimizer = false;
  /// MoE token dropping (Megatron's --moe-expert-capacity-factor with padding to capacity, as
  /// GShard and Switch): every expert processes exactly capacity_factor × its mean share of the
  /// tokens. 0: dropless, each expert takes what the router sends it (the busiest expert-parallel
  /// rank then sets the pace: the calibration's moe_load_imbalance).
  double moe_capacity_factor = 0;
  /// Transformer layers per pipeline stage (size pp, sum = layers); empty: as even as possible,
  /// the remainder going to the middle stages. With vpp > 1, a rank's layers over all its
  /// virtual stages.
  std::vector<int> stage_layers;
  /// With vpp > 1 and stage_layers given: the layers of each virtual stage in Megatron-Core's
  /// order (virtual stage c·pp + r is rank r's c-th chunk; size pp × vpp, rank r's summing to
  /// stage_layers[r], zero allowed: a chunk of only the MTP module or the loss). Empty: each
  /// rank's layers split as evenly as possible over its chunks, the first taking the remainder
  /// (virtual_split).
  std::vector<int> virtual_stage_layers;

  int devices() const { return tp * cp * pp * dp; }
  /// Micro-batches per pipeline per iteration.
  std::int64_t microbatches() const { return global_batch / (micro_batch * dp); }
};

/// Whether Megatron-Core's precision-aware optimizer holds the states: asked for, or implied by
/// moments below fp32.
inline bool precision_aware_optimizer(const TrainingConfig& t) {
  return t.precision_aware_optimizer || t.optimizer_moments != OptimizerMoments::kFp32;
}

/// The optimizer's state per parameter in bytes: the main parameter — fp32, or under the
/// precision-aware optimizer the 16 bits the bf16 weight lacks (Transformer Engine's FusedAdam
/// with store_param_remainders, Megatron-Core's default; paraplan's FP8 is the delayed-scaling
/// recipe, under which it holds too) — and Adam's two moments.
inline double optimizer_state_bytes(const TrainingConfig& t) {
  return (precision_aware_optimizer(t) ? 2 : 4) + 2 * moment_bytes(t.optimizer_moments);
}

/// A transformer pipeline over devices of several types (the mixed planner's configuration):
/// segments in pipeline order, each on devices of one type with its own widths and stage count.
struct MixedSegment {
  int device_type = 0;  ///< index into the cluster's device_types
  int tp = 1, dp = 1, pp = 1;
  int devices() const { return tp * dp * pp; }
};

struct MixedConfig {
  std::vector<MixedSegment> segments;  ///< in pipeline order
  std::int64_t seq_len = 2048;
  std::int64_t global_batch = 512;          ///< sequences per iteration
  std::int64_t samples_per_microbatch = 1;  ///< per pipeline micro-batch, over a stage's replicas
  Recompute recompute = Recompute::kFull;
  bool sequence_parallel = false;  ///< on segments with tp > 1
  int zero_stage = 1;              ///< 0–2
  bool overlap_grad_reduce = false;
  Attention attention = Attention::kFlash;
  std::vector<int> stage_layers;  ///< size stages(), sum = layers; empty: even split

  int stages() const {
    int n = 0;
    for (const MixedSegment& s : segments) n += s.pp;
    return n;
  }
  int devices() const {
    int n = 0;
    for (const MixedSegment& s : segments) n += s.devices();
    return n;
  }
  std::int64_t microbatches() const { return global_batch / samples_per_microbatch; }
};

/// The default split of `layers` over `stages`: as even as possible, the extra layers going to
/// the middle stages first (the first and last stages carry the embedding and the LM head).
inline std::vector<int> even_stage_split(int layers, int stages) {
  std::vector<int> split(static_cast<std::size_t>(stages > 0 ? stages : 0),
                         stages > 0 ? layers / stages : 0);
  int extra = stages > 0 ? layers % stages : 0;
  for (int i = 1; i + 1 < stages && extra > 0; ++i, --extra) ++split[static_cast<std::size_t>(i)];
  if (extra > 0) ++split[0], --extra;
  if (extra > 0) ++split.back(), --extra;
  return split;
}

/// The layers of each virtual stage (virtual stage c·pp + r: rank r's c-th chunk) of `t` with
/// `layers` in all: t.virtual_stage_layers when given, else each rank's layers (stage_layers or
/// the even split) over its vpp chunks as evenly as possible, the first chunks taking the
/// remainder. With vpp 1: the stages' layers.
inline std::vector<int> virtual_split(const TrainingConfig& t, int layers) {
  if (!t.virtual_stage_layers.empty()) return t.virtual_stage_layers;
  const std::vector<int> ranks =
      t.stage_layers.empty() ? even_stage_split(layers, t.pp) : t.stage_layers;
  const int v = t.vpp > 0 ? t.vpp : 1;
  std::vector<int> out(ranks.size() * static_cast<std::size_t>(v));
  for (std::size_t r = 0; r < ranks.size(); ++r)
    for (int c = 0; c < v; ++c)
      out[static_cast<std::size_t>(c) * ranks.size() + r] =
          ranks[r] / v + (c < ranks[r] % v ? 1 : 0);
  return out;
}

}  // namespace paraplan
