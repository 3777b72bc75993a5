// The training knobs as a front end takes them (text and numbers, each optional) and what they
// become: the fixed knobs of a search, or one training configuration to price. Their names,
// types, ranges and defaults are the table's (ir/knobs.h): the CLI's flags and the Python
// module's keywords are made from it through knob_slot; wrong values are FieldErrors.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "io/json_fields.h"
#include "ir/cluster.h"
#include "ir/knobs.h"
#include "ir/training.h"
#include "ir/training_rules.h"
#include "search/llm.h"

namespace paraplan::api {

/// The training knobs (0 / -1 / empty: not given).
struct TransformerKnobs {
  std::int64_t seq_len = 0, micro_batch = 0;
  int tp = 0, cp = 0, pp = 0, dp = 0, ep = 0, vpp = 0;
  std::string recompute;  ///< none, selective, full or a number of layers
  bool sequence_parallel = false;
  int zero = -1;
  int etp = 0;                     ///< expert tensor parallel size; 0: tp
  int shard_group = 0;             ///< HSDP's shard group; 0: every data-parallel rank
  std::string attention;           ///< flash | standard; empty: flash
  double moe_capacity_factor = 0;  ///< 0: dropless
  std::string stage_layers;        ///< "9,8,8,7"
  std::string calibration;         ///< a calibration file; empty: the shipped one
  std::string stack;               ///< megatron | fsdp | deepspeed; empty: megatron
  /// The overlaps: -1 the stack's default, 0 off, 1 on (the gradient reduction's on any stack,
  /// Megatron-Core's own on the megatron stack).
  int overlap_grad_reduce = -1, tp_comm_overlap = -1, overlap_p2p_comm = -1,
      overlap_param_gather = -1;
  int fp8_param_gather = -1;  ///< FP8 parameters (megatron, fp8): -1 off unless given, 0, 1
  /// The shared experts' overlap (megatron): -1 on where it applies, 0, 1.
  int shared_expert_overlap = -1;
  /// The precision-aware optimizer with fp32 moments (megatron): -1 off unless implied, 0, 1.
  int precision_aware_optimizer = -1;
  int compile = -1;  ///< torch.compile (fsdp): -1 the stack's default (eager), 0 off, 1 on
  std::string grad_reduce_dtype;  ///< bf16 | fp32; empty: the stack's (fp32)
  std::string loss_dtype;         ///< bf16 | fp32; empty: the stack's
  std::string loss_kernel;        ///< eager | fused (fsdp); empty: eager
  std::string optimizer_moments;  ///< fp32 | bf16 | fp8 (megatron); empty: fp32
  std::string precision;          ///< bf16 | fp8; empty: bf16
  std::string memory;             ///< memory per device ("40GiB"); empty: the cluster's
  std::string memory_headroom;    ///< "5%" of it or a size ("2GiB") kept free; empty: none
};

/// Where a knob's value lives in TransformerKnobs, as its type (kFlag: bool; kOnOff: int, -1 not
/// given; kInteger: int or std::int64_t, 0 not given — zero: -1; kReal: double; kChoice,
/// kText: std::string, empty not given); monostate for the knobs a request holds elsewhere
/// (devices, batch).
using KnobSlot = std::variant<std::monostate, int*, std::int64_t*, double*, bool*, std::string*>;
KnobSlot knob_slot(TransformerKnobs& knobs, Knob knob);
/// Whether the knob was given (its slot holds something other than "not given").
bool knob_given(TransformerKnobs& knobs, Knob knob);

/// A value a verb took for a field the user did not give: printed beside the answer.
struct DefaultTaken {
  std::string field;  ///< the request field (Python keyword; the CLI's flag with dashes)
  std::string value;
};
/// The `used` values of the fields not in `given`, in order.
std::vector<DefaultTaken> defaults_taken(const std::vector<std::string>& given,
                                         const std::vector<DefaultTaken>& used);
/// As the documents carry them (`"defaults": {"cluster": "dgx-a100", "batch": "512"}`) and as
/// the answer in words says them ("defaults (not given): --cluster dgx-a100, --batch 512").
io::Json defaults_json(const std::vector<DefaultTaken>& taken);
std::string defaults_words(const std::vector<DefaultTaken>& taken);

/// Applies `memory` and `memory_headroom` to every device type of `cluster`. FieldError for a
/// malformed value or a headroom that leaves no memory.
void apply_memory_knobs(const TransformerKnobs& knobs, Cluster& cluster);

/// RuleViolation for a knob given on a stack it does not apply to (the table's stacks):
/// `--compile` on the megatron stack, `--tp-comm-overlap` on fsdp (turning Megatron-Core's
/// overlaps off is what the other stacks do, and is taken).
void check_stack_knobs(const TransformerKnobs& knobs, Stack stack);

/// The stack named (empty: megatron); FieldError("stack") otherwise.
Stack stack(const std::string& text);
/// --precision: bf16 (or empty) false, fp8 true; FieldError("precision") otherwise.
bool fp8(const std::string& text);
/// The fixed stack choices of `knobs` (FieldError for a wrong dtype).
StackChoices stack_choices(const TransformerKnobs& knobs);

/// The search settings of plan and frontier: every knob given is fixed, and the search keeps to
/// what the stack's engine runs (stack_engine); FieldError for stage_layers (the split is
/// searched; uniform stages keep it even).
LlmSearchSettings search_settings(const TransformerKnobs& knobs, int devices, std::int64_t batch,
                                  bool uniform_stages);

/// The one configuration evaluate prices: tp, cp, pp, ep, vpp default 1; dp fills `devices`
/// (0: tp × cp × pp × dp); seq_len 2048; micro-batch 1; the global batch `batch` (0: 512, as
/// every verb); full recomputation unless given. FieldError("devices") when they disagree.
TrainingConfig training_config(const TransformerKnobs& knobs, int devices, std::int64_t batch,
                               const TransformerConfig* model = nullptr);

/// A size: "8GiB" (2^30 bytes), "80GB" (10^9) or a number of bytes; positive. FieldError(field)
/// otherwise.
double bytes_value(const std::string& field, const std::string& text);
/// A rate in bytes per second with its unit: "25GB/s" (10^9), "25GiB/s" (2^30), "3e9B/s";
/// positive. A bare number is refused (it read as GB/s and as bytes/s in different places).
double bandwidth_value(const std::string& field, const std::string& text);
/// A compute rate with its unit: "312TFLOP/s", "1e13FLOP/s"; positive.
double flops_value(const std::string& field, const std::string& text);

/// flash or standard (empty: flash); FieldError("attention") otherwise.
Attention attention(const std::string& text);

/// none, selective, full or a number of layers N (full recomputation of N layers per stage).
struct RecomputeChoice {
  Recompute kind = Recompute::kFull;
  int layers = 0;
};
RecomputeChoice parse_recompute(const std::string& text);
/// none, selective, full, or the number of recomputed layers.
std::string recompute_text(const TrainingConfig& t);
/// "9,8,8,7" → {9, 8, 8, 7}; FieldError("stage_layers") otherwise.
std::vector<int> parse_stage_layers(const std::string& text);
/// `--stage-layers` into `t` (pp and vpp set): counts per stage (with vpp > 1, per rank, or one
/// per virtual stage), or a Megatron-Core layout (Et*3|(tt|)*29,m|L), which also sets vpp.
/// FieldError("stage_layers") for what is neither.
void apply_stage_layers(const std::string& text, TrainingConfig& t);

}  // namespace paraplan::api
