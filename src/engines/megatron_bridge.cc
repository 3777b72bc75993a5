// Megatron-Bridge 067f987: scripts/training/run_recipe.py (its options, the order it applies
// them: recipe, --dataset preset, overrides, model.seq_length synchronised from the dataset's),
// src/megatron/bridge/recipes/gpt/h100/vanilla_gpt.py (the recipe), training/config.py
// (ddp.* and optimizer.* use_distributed_optimizer and overlap_param_gather kept in step: either
// on turns both on), training/mixed_precision.py (the named recipes overwrite the model's,
// optimizer's and DDP's precision fields), training/setup.py (the model's vocabulary is the
// tokenizer's padded to make_vocab_size_divisible_by × tp when model.vocab_size is unset) and
// docs/megatron-lm-to-megatron-bridge.md (Megatron-LM's options as overrides). Megatron-Core's
// NullTokenizer at the commit Bridge pins (2a75ac1) has exactly vocab_size tokens.
#include "engines/megatron_bridge.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "engines/engine_export.h"
#include "ir/engine_rules.h"
#include "ir/error.h"

namespace paraplan::engines {
namespace {

constexpr const char* kBridgeEngine = "bridge";

// One override as a shell word: bare when the shell and Hydra both take it as it is; else in
// single quotes for the shell, with a string value also quoted for Hydra (a layout's | and ,).
std::string override_word(const std::string& key, const std::string& value, bool hydra_string) {
  const bool plain = std::all_of(value.begin(), value.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
  });
  if (plain) return key + "=" + value;
  return "'" + key + "=" + (hydra_string ? "\"" + value + "\"" : value) + "'";
}

struct Overrides {
  std::vector<std::string> words;
  void set(const std::string& key, const std::string& value, bool hydra_string = false) {
    words.push_back(override_word(key, value, hydra_string));
  }
  void set(const std::string& key, bool on) { set(key, std::string(on ? "true" : "false")); }
  void set(const std::string& key, std::int64_t v) { set(key, fmt::format("{}", v)); }
  void set(const std::string& key, int v) { set(key, fmt::format("{}", v)); }
  // A float field's value as Python writes a float (Hydra reads 0 as an int).
  void set(const std::string& key, double v) {
    set(key, v == static_cast<double>(static_cast<std::int64_t>(v)) ? fmt::format("{:.1f}", v)
                                                                    : fmt::format("{}", v));
  }
};

void model_overrides(const TransformerConfig& m, const TrainingConfig& t, Overrides& o) {
  o.set("model.num_layers", m.num_layers);
  o.set("model.hidden_size", m.hidden_size);
  o.set("model.num_attention_heads", m.num_attention_heads);
  o.set("model.num_query_groups", m.num_kv_heads);
  o.set("model.kv_channels", m.head_dim);
  // The dense MLP's width (DeepSeek's leading layers); the experts' below.
  o.set("model.ffn_hidden_size",
        m.ffn_hidden_size > 0 ? m.ffn_hidden_size : m.expert_ffn_hidden_size);
  o.set("model.gated_linear_unit", m.gated_mlp);
  o.set("model.activation_func", std::string(m.gated_mlp ? "silu" : "gelu"));
  // Norms without a shift, as priced (h parameters each), are Megatron's RMSNorm.
  o.set("model.normalization", std::string(m.biases ? "LayerNorm" : "RMSNorm"));
  o.set("model.share_embeddings_and_output_weights", m.tied_embeddings);
  o.set("model.position_embedding_type",
        std::string(m.learned_positions ? "learned_absolute" : "rope"));
  if (!m.learned_positions) {
    if (m.rotary_base > 0) o.set("model.rotary_base", m.rotary_base);
    o.set("model.rotary_percent", m.partial_rotary);
  }
  o.set("model.add_bias_linear", m.biases);
  o.set("model.add_qkv_bias", m.biases || m.attention_bias);
  o.set("model.qk_layernorm", m.qk_norm);
  if (m.moe()) {
    o.set("model.num_moe_experts", m.num_experts);
    o.set("model.moe_router_topk", m.experts_per_token);
    o.set("model.moe_ffn_hidden_size", m.expert_ffn_hidden_size);
    if (m.shared_experts > 0)  // Megatron's size is all shared experts' together
      o.set(
          "model.moe_shared_expert_intermediate_size",
          m.shared_experts * (m.shared_expert_ffn_hidden_size > 0 ? m.shared_expert_ffn_hidden_size
                                                                  : m.expert_ffn_hidden_size));
    if (m.first_dense_layers > 0)
      o.set("model.moe_layer_freq", moe_layer_list(m));
    else
      o.set("model.moe_layer_freq", std::max<std::int64_t>(1, m.moe_every));
    // As priced: grouped expert GEMMs, all-to-all token dispatch.
    o.set("model.moe_grouped_gemm", true);
    o.set("model.moe_token_dispatcher_type", std::string("alltoall"));
    if (t.moe_shared_expert_overlap) o.set("model.moe_shared_expert_overlap", true);
    if (t.moe_capacity_factor > 0) {
      o.set("model.moe_expert_capacity_factor", t.moe_capacity_factor);
      o.set("model.moe_pad_expert_input_to_capacity", true);
    }
  }
  if (m.mtp_layers > 0) o.set("model.mtp_num_layers", m.mtp_layers);
  const bool dropout = t.dropout && m.dropout;  // Megatron-Core's default is 0.1
  o.set("model.hidden_dropout", dropout ? 0.1 : 0.0);
  o.set("model.attention_dropout", dropout ? 0.1 : 0.0);
  // The tokenizer's vocabulary as priced, padded by Bridge as Megatron-LM pads it (model
  // .vocab_size unset: 128 × tp).
  o.set("tokenizer.tokenizer_type", std::string("NullTokenizer"));
  o.set("tokenizer.vocab_size", m.vocab_size);
  o.set("model.make_vocab_size_divisible_by", 128);
}

void plan_overrides(const TransformerConfig& m, const TrainingConfig& t, Overrides& o) {
  o.set("model.seq_length", t.seq_len);
  o.set("dataset.seq_length", t.seq_len);
  o.set("train.micro_batch_size", t.micro_batch);
  o.set("train.global_batch_size", t.global_batch);
  o.set("train.train_iters", 100);
  o.set("model.tensor_model_parallel_size", t.tp);
  o.set("model.pipeline_model_parallel_size", t.pp);
  o.set("model.context_parallel_size", t.cp);
  if (m.moe()) o.set("model.expert_model_parallel_size", t.ep);
  if (m.moe() && t.etp > 0) o.set("model.expert_tensor_parallel_size", t.etp);
  if (t.vpp > 1) o.set("model.virtual_pipeline_model_parallel_size", t.vpp);
  if (const std::string layout = megatron_layout(m, t); !layout.empty())
    o.set("model.pipeline_model_parallel_layout", layout, true);
  o.set("model.sequence_parallel", t.sequence_parallel);
  switch (t.recompute) {
    case Recompute::kFull:
      o.set("model.recompute_granularity", std::string("full"));
      // block: the first N layers of each (virtual) stage; uniform: every layer, one at a time.
      o.set("model.recompute_method", std::string(t.recompute_layers > 0 ? "block" : "uniform"));
      o.set("model.recompute_num_layers", t.recompute_layers > 0 ? t.recompute_layers : 1);
      break;
    case Recompute::kSelective:  // Megatron-Core's default module: the attention core
      o.set("model.recompute_granularity", std::string("selective"));
      break;
    case Recompute::kNone:
      o.set("model.recompute_granularity", std::string("null"));
      break;
  }
  // Bridge turns the distributed optimizer and its overlapped gather on for both sections when
  // either has it: both are written.
  const bool sharded = t.zero_stage >= 1;
  o.set("ddp.use_distributed_optimizer", sharded);
  o.set("optimizer.use_distributed_optimizer", sharded);
  o.set("ddp.overlap_grad_reduce", t.overlap_grad_reduce);
  o.set("ddp.overlap_param_gather", sharded && t.overlap_param_gather);
  o.set("optimizer.overlap_param_gather", sharded && t.overlap_param_gather);
  o.set("model.tp_comm_overlap", t.tp_comm_overlap);
  if (t.vpp > 1) {  // Megatron-Core batches p2p sends unless they overlap, never both
    o.set("model.overlap_p2p_comm", t.overlap_p2p_comm);
    o.set("model.batch_p2p_comm", !t.overlap_p2p_comm);
  }
  // The fused attention priced on the megatron stack is Transformer Engine's (cuDNN).
  o.set("model.attention_backend",
        std::string(t.attention == Attention::kStandard ? "unfused" : "fused"));
  // Bridge's recipes: bf16 weights, fp32 main parameters and gradient reduction; FP8's delayed
  // scaling (hybrid, amax history 1024, max) with FP8 parameters, as priced.
  o.set("mixed_precision",
        std::string(t.fp8 ? "bf16_with_fp8_delayed_scaling_mixed" : "bf16_mixed"));
  if (precision_aware_optimizer(t)) {
    // Transformer Engine's FusedAdam holds the states: the fp32 main parameters as 16-bit
    // remainders, both moments in bf16 where asked (DeepSeek-V3's recipe's optimizer) or fp32
    // (the Qwen3 16-GPU recipes').
    o.set("optimizer.use_precision_aware_optimizer", true);
    if (t.optimizer_moments != OptimizerMoments::kFp32) {
      o.set("optimizer.exp_avg_dtype", std::string("bf16"));
      o.set("optimizer.exp_avg_sq_dtype", std::string("bf16"));
    }
  }
}

}  // namespace

std::string megatron_bridge_launch(const TransformerConfig& m, const TrainingConfig& t,
                                   int devices_per_node) {
  if (const auto v =
          rules::engine(engine_rules(Engine::kMegatronBridge), t, static_cast<int>(m.num_layers)))
    throw RuleViolation(*v);
  refuse_unbuildable(m, kBridgeEngine);
  if (t.optimizer_moments == OptimizerMoments::kFp8)
    throw FieldError("export",
                     " bridge: FP8 moments are not written: Bridge's dtype names give FP8 as "
                     "torch.float8_e4m3fn, not the torch.uint8 that Megatron-LM's --exp-avg-dtype "
                     "fp8 passes Transformer Engine's FusedAdam; use --optimizer-moments bf16, or "
                     "--export megatron");
  if (m.mla())
    throw FieldError(
        "export", fmt::format(" bridge: {} has latent attention, which the vanilla GPT recipe's "
                              "GPTModelProvider does not build (Bridge builds it with its DeepSeek "
                              "recipes' MLA provider); export it with --export megatron",
                              m.name));
  Overrides o;
  model_overrides(m, t, o);
  plan_overrides(m, t, o);
  const TorchrunMachines machines = torchrun_machines(t.devices(), devices_per_node);
  std::string out = "#!/usr/bin/env bash\n";
  out += fmt::format(
      "# Megatron-Bridge {}: run_recipe.py with the vanilla GPT recipe (Megatron-LM's defaults, "
      "no model\n# of its own) and the model and plan as ConfigContainer overrides, on synthetic "
      "tokens (--dataset mock,\n# a NullTokenizer of the vocabulary priced); for your run give "
      "the tokenizer, the data\n# (--dataset megatron-indexed, dataset.blend) and "
      "train.train_iters.\n",
      kMegatronBridgeCommit);
  out += run_from_comment("Megatron-Bridge", machines);
  out += "set -euo pipefail\n";
  if (t.tp > 1 || t.cp > 1) out += "export CUDA_DEVICE_MAX_CONNECTIONS=1\n";
  // Transformer Engine's attention kernel as priced. Bridge's overrides leave
  // model.attention_backend a string, which Megatron-Core 2a75ac1 compares with its AttnBackend
  // enum and so never applies: the variables it would set are set here.
  out += t.attention == Attention::kStandard
             ? "export NVTE_FLASH_ATTN=0 NVTE_FUSED_ATTN=0 NVTE_UNFUSED_ATTN=1\n"
             : "export NVTE_FLASH_ATTN=0 NVTE_FUSED_ATTN=1 NVTE_UNFUSED_ATTN=0\n";
  out += torchrun_lines(machines);
  out += fmt::format(
      "  scripts/training/run_recipe.py --recipe {} --mode pretrain --dataset mock \\\n",
      kMegatronBridgeRecipe);
  for (std::size_t i = 0; i < o.words.size(); ++i)
    out += "  " + o.words[i] + (i + 1 < o.words.size() ? " \\\n" : "\n");
  return out;
}

std::vector<std::pair<std::string, std::string>> megatron_bridge_searched_options(
    const TransformerConfig& model, const TrainingConfig& t) {
  std::vector<std::pair<std::string, std::string>> out;
  auto num = [](auto v) { return fmt::format("{}", v); };
  auto on = [](bool b) { return std::string(b ? "true" : "false"); };
  const Engine e = Engine::kMegatronBridge;
  out.emplace_back(spelled(Knob::kTp, e), num(t.tp));
  out.emplace_back(spelled(Knob::kPp, e), num(t.pp));
  out.emplace_back(spelled(Knob::kCp, e), num(t.cp));
  if (model.moe()) out.emplace_back(spelled(Knob::kEp, e), num(t.ep));
  if (t.vpp > 1) out.emplace_back(spelled(Knob::kVpp, e), num(t.vpp));
  out.emplace_back(spelled(Knob::kMicroBatch, e), num(t.micro_batch));
  out.emplace_back(spelled(Knob::kSequenceParallel, e), on(t.sequence_parallel));
  out.emplace_back(spelled(Knob::kRecompute, e), t.recompute == Recompute::kFull ? "full"
                                                 : t.recompute == Recompute::kSelective
                                                     ? "selective"
                                                     : "null");
  if (t.recompute == Recompute::kFull) {
    out.emplace_back("model.recompute_method", t.recompute_layers > 0 ? "block" : "uniform");
    out.emplace_back("model.recompute_num_layers",
                     num(t.recompute_layers > 0 ? t.recompute_layers : 1));
  }
  // Bridge turns the distributed optimizer and its gather on in both sections when either has
  // it: a change says both.
  out.emplace_back(spelled(Knob::kZero, e), on(t.zero_stage >= 1));
  out.emplace_back("optimizer.use_distributed_optimizer", on(t.zero_stage >= 1));
  out.emplace_back(spelled(Knob::kOverlapGradReduce, e), on(t.overlap_grad_reduce));
  out.emplace_back(spelled(Knob::kOverlapParamGather, e), on(t.overlap_param_gather));
  out.emplace_back("optimizer.overlap_param_gather", on(t.overlap_param_gather));
  out.emplace_back(spelled(Knob::kTpCommOverlap, e), on(t.tp_comm_overlap));
  if (t.moe_shared_expert_overlap)
    out.emplace_back(spelled(Knob::kSharedExpertOverlap, e), on(t.moe_shared_expert_overlap));
  if (t.vpp > 1) out.emplace_back(spelled(Knob::kOverlapP2pComm, e), on(t.overlap_p2p_comm));
  if (t.optimizer_moments != OptimizerMoments::kFp32)
    out.emplace_back(spelled(Knob::kOptimizerMoments, e),
                     std::string(optimizer_moments_text(t.optimizer_moments)));
  if (t.precision_aware_optimizer)
    out.emplace_back(spelled(Knob::kPrecisionAwareOptimizer, e), on(true));
  return out;
}

}  // namespace paraplan::engines
