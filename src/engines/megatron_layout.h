// Megatron-Core's own notations for a model's structure, as Megatron-LM's arguments and NeMo's
// recipes write them: the pipeline layout ("Et*3|(tt|)*29,m|L") and the MoE layer pattern; and
// its optimizer's dtypes, as Megatron-LM's arguments and Megatron-Bridge's recipes set them.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ir/training.h"
#include "ir/transformer.h"

namespace paraplan::engines {

/// The decoder layers of each virtual stage of a pipeline layout, in layout order (virtual stage
/// v of rank r at v × pp + r): (…)*n and x*n unrolled, commas and spaces for reading only.
/// False with `error` set for a malformed layout or a stage count not a multiple of `pp`.
bool layout_stages(const std::string& layout, int pp, std::vector<int>& stages, std::string& error);

/// Reads a layout into `t` (t.pp set): one stage per rank sets t.stage_layers; several per rank
/// set t.vpp and, unless all hold equal layers, each rank's layers (t.stage_layers) and, unless
/// they are virtual_split's of those, each virtual stage's (t.virtual_stage_layers). The MTP
/// modules (m) are priced with the loss, on the last stage.
bool read_layout(const std::string& layout, TrainingConfig& t, std::string& error);

/// Megatron-Core's uneven splits without a layout (transformer_block.py's
/// get_num_layers_to_build), into t.stage_layers (and with t.vpp > 1, t.virtual_stage_layers):
/// `first` / `last` layers on the first / last stage (-1: not given), the rest even over the
/// other stages, each stage's even over its virtual stages; or the embedding and the loss
/// counted as a layer each in an even split (account_for_embedding/loss_in_pipeline_split), the
/// first virtual stage building one layer fewer for the embedding, the last one fewer for the
/// loss. False with `error` (Megatron-Core's assertion) when the layers do not divide so.
bool uneven_split(std::int64_t layers, int first, int last, bool embedding, bool loss,
                  TrainingConfig& t, std::string& error);

/// Megatron's MoE layer pattern, a Python list expression of 0 (dense) and 1 (MoE) with one
/// entry per layer ("([0]*3+[1]*58)", "[0,1,0,1]", "([0]+[1]*3)*2"): K leading dense layers,
/// then every N-th layer MoE,
/// into m.first_dense_layers and m.moe_every; false with `error` for another pattern.
bool read_moe_list(const std::string& list, TransformerConfig& m, std::string& error);

/// Megatron-Core's optimizer dtypes (megatron/core/optimizer/optimizer_config.py), each as
/// "fp32", "bf16", "fp16" or "fp8".
struct OptimizerDtypes {
  bool precision_aware = false;  ///< use_precision_aware_optimizer
  std::string exp_avg = "fp32", exp_avg_sq = "fp32", main_params = "fp32", main_grads = "fp32";
};
/// Which of OptimizerDtypes' fields a refusal is about.
enum class OptimizerDtypeField { kExpAvg, kExpAvgSq, kMainParams, kMainGrads };

/// Sets t.optimizer_moments from what paraplan prices — both moments in fp32, bf16 or fp8, fp32
/// main parameters (kept as 16-bit remainders) — and returns the refusals, each with why: a dtype
/// other than fp32 without the precision-aware optimizer (Megatron-Core asserts it), fp16 moments,
/// two moment dtypes. The main gradients' dtype is the caller's: the gradient buffer is the DDP
/// configuration's.
std::vector<std::pair<OptimizerDtypeField, std::string>> read_optimizer_dtypes(
    const OptimizerDtypes& d, TrainingConfig& t);

/// A torch dtype as written in a recipe or an override ("torch.bfloat16", "bfloat16", "bf16",
/// "torch.uint8" for FP8 moments): "fp32", "bf16", "fp16", "fp8", or empty for another.
std::string optimizer_dtype_name(const std::string& text);

}  // namespace paraplan::engines
