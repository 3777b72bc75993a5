// The rules a training configuration must follow for a transformer, each written once. A broken
// rule is a value: which knob, which rule, which values. Front ends render it in their own
// words (the CLI with its flag names, file readers with the field's place, the Python module
// with its keywords); the transformer search prunes with the same functions.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ir/error.h"
#include "ir/knobs.h"
#include "ir/training.h"
#include "ir/transformer.h"

namespace paraplan {

struct Violation {
  Knob knob;          ///< the knob the broken rule is about
  std::string rule;   ///< a stable identifier: "tp_divides_heads", "zero_without_pipeline", ...
  std::string value;  ///< the knob's value as given
  /// What must hold, in words. Other knobs appear as {tp}, {pp}, {global_batch}, ... and are
  /// rendered with the front end's names.
  std::string text;
  std::vector<std::pair<std::string, std::string>> values;  ///< the values the rule involves

  /// "NAME VALUE: TEXT" with every knob named by `name`.
  std::string render(const std::function<std::string(Knob)>& name) const;
};

/// Thrown where a broken rule stops the work (ErrorKind::kUsage); what() names the knobs by
/// their field names. Front ends catch it and render the violation in their own words.
class RuleViolation : public Error {
 public:
  explicit RuleViolation(Violation v);
  const Violation& violation() const { return violation_; }
  /// The same rule broken by a file's configuration: an input error placed at the knob's field
  /// under `config_place` ("plan.json: /config" gives "plan.json: /config/tp").
  Error in_file(const std::string& config_place) const;

 private:
  Violation violation_;
};

/// The stack's own choices, each fixed when set (a front end's flags), else the stack's default.
struct StackChoices {
  std::optional<bool> overlap_grad_reduce, tp_comm_overlap, overlap_p2p_comm, overlap_param_gather,
      bf16_gradient_reduction, fp32_loss, fused_loss, fp8_param_gather;
  /// Element-wise work fused (torch.compile on the fsdp stack; the others' kernels are fused).
  std::optional<bool> fused_elementwise;
  std::optional<OptimizerMoments> optimizer_moments;  ///< unset: fp32
  /// Unset: on where it applies (the model has shared experts, ep > 1, megatron).
  std::optional<bool> moe_shared_expert_overlap;
  /// The precision-aware optimizer with fp32 moments (unset: off; low-precision moments imply it).
  std::optional<bool> precision_aware_optimizer;
};

/// Sets what `t.stack` decides for a configuration of t's shape (docs/cost-models.md, "Training
/// stacks"): fused element-wise kernels, and each overlap and precision not fixed in `fixed` —
/// megatron: the Megatron-Core/NeMo recipes' defaults (gradient reduce and parameter gather
/// overlapped with the distributed optimizer, tensor-parallel overlap with sequence
/// parallelism, pipeline sends overlapped when interleaved, gradients reduced in fp32); fsdp:
/// eager element-wise kernels, prefetched collectives, the loss in the reduce precision (fp32
/// with autocast, bf16 in pure bf16); deepspeed: Megatron's fused kernels, nothing overlapped.
/// `model` (where known) decides the shared experts' overlap; without it, off unless fixed.
void apply_stack_defaults(TrainingConfig& t, const StackChoices& fixed,
                          const TransformerConfig* model = nullptr);

/// "megatron", "fsdp", "deepspeed".
std::string_view stack_text(Stack stack);
std::optional<Stack> stack_from_text(std::string_view text);

namespace rules {
// One function per rule family, on just what it needs; each returns the first rule broken.
std::optional<Violation> positive(const TrainingConfig& t);
std::optional<Violation> tensor_parallel(const TransformerConfig& m, int tp);
std::optional<Violation> context_parallel(std::int64_t seq_len, int cp);
std::optional<Violation> pipeline(const TransformerConfig& m, int pp);
std::optional<Violation> batch(std::int64_t global_batch, std::int64_t micro_batch, int dp);
std::optional<Violation> sequence_parallel(std::int64_t seq_len, int cp, int tp);
std::optional<Violation> experts(const TransformerConfig& m, int ep, int dp, int cp,
                                 double capacity_factor);
/// ZeRO 2 and 3 with pipeline stages: refused on DeepSpeed and Megatron (their gradient
/// partitioning runs per micro-batch), allowed on the fsdp stack (FSDP2 + pipeline parallelism,
/// as torchtitan runs it: each stage's parameters sharded over its data-parallel group).
/// `shards`: the data-parallel ranks (dp × cp) a stage's parameters would be sharded over; FSDP
/// with pipeline stages needs more than one.
std::optional<Violation> zero(int zero_stage, int pp, Stack stack = Stack::kMegatron,
                              int shards = 1);
/// Expert tensor parallelism (etp other than tp): a MoE model, etp × ep dividing tp × cp × dp
/// and etp the experts' hidden size; else the expert rules over dp × cp.
std::optional<Violation> expert_tensor(const TransformerConfig& m, const TrainingConfig& t);
/// HSDP: the shard group divides dp × cp, under ZeRO 3, without expert parallelism.
std::optional<Violation> shard_group(const TrainingConfig& t);
std::optional<Violation> interleaving(const TransformerConfig& m, const TrainingConfig& t);
/// Layers per virtual stage: with vpp > 1 and stage_layers, pp × vpp of them, none negative,
/// each rank's summing to its stage_layers.
std::optional<Violation> virtual_stages(const TrainingConfig& t);
/// The stack's overlaps: Megatron-Core's only on the megatron stack, each where it applies.
std::optional<Violation> overlaps(const TrainingConfig& t);
std::optional<Violation> recomputation(const TransformerConfig& m, const TrainingConfig& t);
std::optional<Violation> devices(const TrainingConfig& t, int cluster_devices);
}  // namespace rules

/// Every rule, in the order above; nullopt when the configuration is valid for `model` on a
/// cluster of `cluster_devices`.
std::optional<Violation> check_training(const TransformerConfig& model,
                                        const TrainingConfig& config, int cluster_devices);

}  // namespace paraplan
