// Option names: Megatron-LM megatron/training/arguments.py; DeepSpeed docs/config-json.
#include "io/engine_export.h"

#include <fmt/format.h>

namespace paraplan::io {

std::string megatron_arguments(const TransformerConfig& m, const TrainingConfig& t) {
  std::string out;
  auto arg = [&](const std::string& flag, const std::string& value = {}) {
    out += value.empty() ? flag : flag + " " + value;
    out += " \\\n";
  };
  auto num = [](auto v) { return fmt::format("{}", v); };
  arg("--num-layers", num(m.num_layers));
  arg("--hidden-size", num(m.hidden_size));
  arg("--num-attention-heads", num(m.num_attention_heads));
  if (m.num_kv_heads != m.num_attention_heads) {
    arg("--group-query-attention");
    arg("--num-query-groups", num(m.num_kv_heads));
  }
  if (m.head_dim * m.num_attention_heads != m.hidden_size) arg("--kv-channels", num(m.head_dim));
  arg("--ffn-hidden-size", num(m.moe() ? m.expert_ffn_hidden_size : m.ffn_hidden_size));
  if (m.gated_mlp) arg("--swiglu");
  if (!m.tied_embeddings) arg("--untie-embeddings-and-output-weights");
  if (!m.learned_positions) arg("--position-embedding-type", "rope");
  if (!m.biases) arg("--disable-bias-linear");
  if (m.moe()) {
    arg("--num-experts", num(m.num_experts));
    arg("--moe-router-topk", num(m.experts_per_token));
  }
  // The tokenizer's vocabulary as priced (Megatron pads it to a multiple of 128 × tp).
  arg("--vocab-size", num(m.vocab_size));
  if (!t.dropout) {
    arg("--attention-dropout", "0.0");
    arg("--hidden-dropout", "0.0");
  }
  arg("--seq-length", num(t.seq_len));
  arg("--max-position-embeddings", num(std::max<std::int64_t>(t.seq_len, m.max_positions)));
  arg("--micro-batch-size", num(t.micro_batch));
  arg("--global-batch-size", num(t.global_batch));
  arg("--tensor-model-parallel-size", num(t.tp));
  arg("--pipeline-model-parallel-size", num(t.pp));
  if (t.cp > 1) arg("--context-parallel-size", num(t.cp));
  if (t.ep > 1) arg("--expert-model-parallel-size", num(t.ep));
  if (m.moe()) {  // as priced: grouped expert GEMMs, all-to-all token dispatch
    arg("--moe-grouped-gemm");
    arg("--moe-token-dispatcher-type", "alltoall");
    if (t.moe_capacity_factor > 0) {
      arg("--moe-expert-capacity-factor", fmt::format("{}", t.moe_capacity_factor));
      arg("--moe-pad-expert-input-to-capacity");
    }
  }
  if (t.vpp > 1) arg("--num-layers-per-virtual-pipeline-stage", num(m.num_layers / (t.pp * t.vpp)));
  if (!t.stage_layers.empty()) {
    // Megatron-core's custom layout: E embedding, t decoder layer, L loss; stages split by |.
    std::string layout;
    for (std::size_t i = 0; i < t.stage_layers.size(); ++i) {
      if (i > 0) layout += "|";
      if (i == 0) layout += "E";
      layout += fmt::format("t*{}", t.stage_layers[i]);
      if (i + 1 == t.stage_layers.size()) layout += ",L";
    }
    arg("--pipeline-model-parallel-layout", "\"" + layout + "\"");
  }
  if (t.sequence_parallel) arg("--sequence-parallel");
  switch (t.recompute) {
    case Recompute::kFull:
      arg("--recompute-granularity", "full");
      if (t.recompute_layers > 0) {  // the first N layers of each (virtual) stage
        arg("--recompute-method", "block");
        arg("--recompute-num-layers", num(t.recompute_layers));
      } else {
        arg("--recompute-method", "uniform");
        arg("--recompute-num-layers", "1");
      }
      break;
    case Recompute::kSelective:
      arg("--recompute-granularity", "selective");
      break;
    case Recompute::kNone:
      break;
  }
  if (t.zero_stage >= 2)
    throw FieldError("export", fmt::format(" megatron: Megatron-LM has no ZeRO stage {} (its "
                                           "distributed optimizer is stage 1); export this plan "
                                           "for deepspeed",
                                           t.zero_stage));
  if (t.zero_stage >= 1) arg("--use-distributed-optimizer");
  if (t.overlap_grad_reduce) arg("--overlap-grad-reduce");
  // Megatron-Core's overlaps as priced (Megatron-LM overlaps interleaved pipeline sends unless
  // told not to).
  if (t.overlap_param_gather) arg("--overlap-param-gather");
  if (t.tp_comm_overlap) arg("--tp-comm-overlap");
  if (t.vpp > 1 && !t.overlap_p2p_comm) arg("--no-overlap-p2p-communication");
  if (t.bf16_gradient_reduction) arg("--grad-reduce-in-bf16");
  // The fused attention priced on the megatron stack is Transformer Engine's (cuDNN); the other
  // stacks call FlashAttention-2.
  arg("--attention-backend", t.attention == Attention::kStandard ? "unfused"
                             : t.stack == Stack::kMegatron       ? "fused"
                                                                 : "flash");
  arg("--bf16");
  if (t.fp8) {  // Transformer Engine's delayed-scaling recipe, as priced
    arg("--fp8-format", "hybrid");
    arg("--fp8-amax-history-len", "1024");
    arg("--fp8-amax-compute-algo", "max");
  }
  out.resize(out.size() - 3);  // no continuation after the last argument
  out += "\n";
  return out;
}

Json deepspeed_config(const TrainingConfig& t) {
  Json j{{"train_batch_size", t.global_batch},
         {"train_micro_batch_size_per_gpu", t.micro_batch},
         {"gradient_accumulation_steps", t.microbatches()},
         {"bf16", {{"enabled", true}}},
         {"zero_optimization", {{"stage", t.zero_stage}, {"overlap_comm", t.overlap_grad_reduce}}},
         {"gradient_clipping", 1.0}};
  if (t.recompute != Recompute::kNone)
    j["activation_checkpointing"] = {{"partition_activations", t.sequence_parallel},
                                     {"contiguous_memory_optimization", false},
                                     {"cpu_checkpointing", false},
                                     {"number_checkpoints", nullptr},
                                     {"synchronize_checkpoint_boundary", false},
                                     {"profile", false}};
  return j;
}

}  // namespace paraplan::io
