// Option names: Megatron-LM megatron/training/arguments.py; DeepSpeed docs/config-json.
#include "engines/engine_export.h"

#include <fmt/format.h>

#include <algorithm>

#include "engines/launch_config.h"
#include "ir/engine_rules.h"

namespace paraplan::engines {

using io::Json;

namespace {

// What the engine does not run (ir/engine_rules.h, the rules the search keeps to) is refused
// before any line is written.
void refuse_what_it_does_not_run(Engine engine, const TransformerConfig& m,
                                 const TrainingConfig& t) {
  if (const auto v = rules::engine(engine_rules(engine), t, static_cast<int>(m.num_layers)))
    throw RuleViolation(*v);
}

// Megatron's --moe-layer-freq: every N-th layer (N), or a Python list expression.
std::string moe_layer_freq(const TransformerConfig& m) {
  const std::int64_t every = std::max<std::int64_t>(1, m.moe_every);
  if (m.first_dense_layers == 0) return fmt::format("{}", every);
  if (every == 1)
    return fmt::format("([0]*{}+[1]*{})", m.first_dense_layers,
                       m.num_layers - m.first_dense_layers);
  return moe_layer_list(m);
}

}  // namespace

std::string moe_layer_list(const TransformerConfig& m) {
  const std::int64_t every = std::max<std::int64_t>(1, m.moe_every);
  std::string list = "[";
  for (std::int64_t i = 0; i < m.num_layers; ++i) {
    const std::int64_t j = i - m.first_dense_layers;
    list += i > 0 ? "," : "";
    list += j >= 0 && j % every == every - 1 ? "1" : "0";
  }
  return list + "]";
}

void refuse_unbuildable(const TransformerConfig& m, const char* engine) {
  const std::pair<bool, const char*> features[] = {
      {m.alibi, "ALiBi position biases"},
      {m.attention_softcap > 0 || m.logit_softcap > 0, "soft-capped logits"},
      {m.windowed_layers() > 0, "sliding-window attention on some layers"},
      {m.attention_sinks, "attention sinks"},
      {m.expert_biases, "biases in the experts"}};
  for (const auto& [has, what] : features)
    if (has)
      throw FieldError("export", fmt::format(" {}: {} has {}, which paraplan does not export "
                                             "to {}; price it, then write the model's arguments "
                                             "by hand",
                                             engine, m.name, what, engine));
}

TorchrunMachines torchrun_machines(int world, int devices_per_node) {
  TorchrunMachines m;
  m.per_node = devices_per_node > 0 ? std::min(world, devices_per_node) : world;
  m.nodes = (world + m.per_node - 1) / m.per_node;
  return m;
}

std::string run_from_comment(const std::string& checkout, const TorchrunMachines& m) {
  if (m.nodes == 1) return fmt::format("# Run it from the {} checkout.\n", checkout);
  return fmt::format(
      "# Run it on each of the {} nodes from the {} checkout, with NODE_RANK, MASTER_ADDR\n# and "
      "MASTER_PORT as your scheduler gives them.\n",
      m.nodes, checkout);
}

std::string torchrun_lines(const TorchrunMachines& m) {
  if (m.nodes == 1)
    return fmt::format("torchrun --standalone --nproc-per-node={} \\\n", m.per_node);
  return fmt::format(
      "torchrun --nnodes={} --nproc-per-node={} --node-rank=\"${{NODE_RANK:?}}\" \\\n"
      "  --master-addr=\"${{MASTER_ADDR:?}}\" --master-port=\"${{MASTER_PORT:-29500}}\" \\\n",
      m.nodes, m.per_node);
}

std::vector<int> stage_split(const TransformerConfig& model, const TrainingConfig& t) {
  return t.stage_layers.empty() ? even_stage_split(static_cast<int>(model.num_layers), t.pp)
                                : t.stage_layers;
}

std::string megatron_layout(const TransformerConfig& model, const TrainingConfig& t) {
  const std::vector<int> ranks = stage_split(model, t);
  const bool even = std::all_of(ranks.begin(), ranks.end(), [&](int n) { return n == ranks[0]; });
  if (even && t.virtual_stage_layers.empty()) return "";
  // Megatron-Core's layout: E the embedding, t a decoder layer, m a multi-token-prediction
  // module, L the loss; stages split by |, commas for reading only. Interleaved: every virtual
  // stage in order (rank r's c-th chunk is stage c·pp + r).
  const std::vector<int> split = virtual_split(t, static_cast<int>(model.num_layers));
  std::string layout;
  for (std::size_t i = 0; i < split.size(); ++i) {
    if (i > 0) layout += "|";
    if (i == 0) layout += "E";
    if (split[i] > 0) layout += fmt::format("t*{}", split[i]);
    if (i + 1 == split.size()) {
      for (std::int64_t k = 0; k < model.mtp_layers; ++k) layout += ",m";
      layout += ",L";
    }
  }
  return layout;
}

namespace {

// Megatron-Core's precision-aware optimizer, one option a line: Transformer Engine's FusedAdam
// holds the distributed optimizer's states, the fp32 main parameters as the bf16 weights' 16-bit
// remainders, both moments in the dtype priced.
std::string precision_aware_arguments(const TrainingConfig& t) {
  if (!precision_aware_optimizer(t)) return "";
  std::string out = "--use-precision-aware-optimizer \\\n";
  if (t.optimizer_moments != OptimizerMoments::kFp32) {
    const std::string_view moments = optimizer_moments_text(t.optimizer_moments);
    out += fmt::format("--exp-avg-dtype {0} \\\n--exp-avg-sq-dtype {0} \\\n", moments);
  }
  if (t.bf16_gradient_reduction) out += "--main-grads-dtype bf16 \\\n";
  return out;
}

}  // namespace

std::string megatron_arguments(const TransformerConfig& m, const TrainingConfig& t,
                               int devices_per_node) {
  refuse_what_it_does_not_run(Engine::kMegatronLm, m, t);
  refuse_unbuildable(m, "megatron");
  std::string out;
  if (devices_per_node > 0) {  // the launch: torchrun over whole machines
    const int world = t.devices(), nproc = std::min(world, devices_per_node);
    out +=
        "# runs as priced on synthetic tokens (NullTokenizer keeps the vocabulary priced, "
        "--mock-data); for your run give --tokenizer-type/--tokenizer-model, --data-path and "
        "--train-iters\n";
    if (t.tp > 1 || t.cp > 1) out += "CUDA_DEVICE_MAX_CONNECTIONS=1 ";
    out += fmt::format("torchrun --nproc_per_node={} --nnodes={} pretrain_gpt.py \\\n", nproc,
                       (world + nproc - 1) / nproc);
  }
  auto arg = [&](const std::string& flag, const std::string& value = {}) {
    out += value.empty() ? flag : fmt::format("{} {}", flag, value);
    out += " \\\n";
  };
  auto num = [](auto v) { return fmt::format("{}", v); };
  arg("--num-layers", num(m.num_layers));
  arg("--hidden-size", num(m.hidden_size));
  arg("--num-attention-heads", num(m.num_attention_heads));
  if (m.mla()) {
    arg("--multi-latent-attention");
    if (m.q_lora_rank > 0) arg("--q-lora-rank", num(m.q_lora_rank));
    arg("--kv-lora-rank", num(m.kv_lora_rank));
    arg("--qk-head-dim", num(m.qk_nope_head_dim));
    arg("--qk-pos-emb-head-dim", num(m.qk_rope_head_dim));
    arg("--v-head-dim", num(m.v_head_dim));
  } else {
    if (m.num_kv_heads != m.num_attention_heads) {
      arg("--group-query-attention");
      arg("--num-query-groups", num(m.num_kv_heads));
    }
    if (m.head_dim * m.num_attention_heads != m.hidden_size) arg("--kv-channels", num(m.head_dim));
  }
  // The dense MLP's width (DeepSeek's leading layers); the experts' below.
  arg("--ffn-hidden-size",
      num(m.ffn_hidden_size > 0 ? m.ffn_hidden_size : m.expert_ffn_hidden_size));
  if (m.gated_mlp) arg("--swiglu");
  // Norms without a shift, as priced (h parameters each), are Megatron's RMSNorm.
  if (!m.biases) arg("--normalization", "RMSNorm");
  if (!m.tied_embeddings) arg("--untie-embeddings-and-output-weights");
  if (!m.learned_positions) {
    arg("--position-embedding-type", "rope");
    if (m.rotary_base > 0) arg("--rotary-base", num(m.rotary_base));
    if (m.partial_rotary != 1) arg("--rotary-percent", num(m.partial_rotary));
  }
  if (!m.biases) arg("--disable-bias-linear");
  if (!m.biases && m.attention_bias) arg("--add-qkv-bias");
  if (m.qk_norm) arg("--qk-layernorm");
  if (m.moe()) {
    arg("--num-experts", num(m.num_experts));
    arg("--moe-router-topk", num(m.experts_per_token));
    arg("--moe-ffn-hidden-size", num(m.expert_ffn_hidden_size));
    if (m.shared_experts > 0)  // Megatron's size is all shared experts' together
      arg("--moe-shared-expert-intermediate-size",
          num(m.shared_experts * (m.shared_expert_ffn_hidden_size > 0
                                      ? m.shared_expert_ffn_hidden_size
                                      : m.expert_ffn_hidden_size)));
    if (m.first_dense_layers > 0 || m.moe_every > 1)
      arg("--moe-layer-freq", fmt::format("\"{}\"", moe_layer_freq(m)));
  }
  if (m.mtp_layers > 0) arg("--mtp-num-layers", num(m.mtp_layers));
  // The tokenizer's vocabulary as priced (Megatron pads it to a multiple of 128 × tp): without
  // a tokenizer type pretrain_gpt.py builds GPT-2's BPE and ignores --vocab-size; NullTokenizer
  // takes it. Synthetic data and a length, so the launch runs as written.
  arg("--tokenizer-type", "NullTokenizer");
  arg("--vocab-size", num(m.vocab_size));
  arg("--mock-data");
  arg("--train-iters", "100");
  if (!(t.dropout && m.dropout)) {  // priced without dropout; Megatron-LM's default is 0.1
    arg("--attention-dropout", "0.0");
    arg("--hidden-dropout", "0.0");
  }
  arg(spelled(Knob::kSeqLen, Engine::kMegatronLm), num(t.seq_len));
  arg("--max-position-embeddings", num(std::max<std::int64_t>(t.seq_len, m.max_positions)));
  arg(spelled(Knob::kMicroBatch, Engine::kMegatronLm), num(t.micro_batch));
  arg(spelled(Knob::kGlobalBatch, Engine::kMegatronLm), num(t.global_batch));
  arg(spelled(Knob::kTp, Engine::kMegatronLm), num(t.tp));
  arg(spelled(Knob::kPp, Engine::kMegatronLm), num(t.pp));
  if (t.cp > 1) arg(spelled(Knob::kCp, Engine::kMegatronLm), num(t.cp));
  if (t.ep > 1) arg(spelled(Knob::kEp, Engine::kMegatronLm), num(t.ep));
  if (t.etp > 0) arg(spelled(Knob::kEtp, Engine::kMegatronLm), num(t.etp));
  if (m.moe()) {  // as priced: grouped expert GEMMs, all-to-all token dispatch
    arg("--moe-grouped-gemm");
    arg("--moe-token-dispatcher-type", "alltoall");
    if (t.moe_capacity_factor > 0) {
      arg(spelled(Knob::kMoeCapacityFactor, Engine::kMegatronLm),
          fmt::format("{}", t.moe_capacity_factor));
      arg("--moe-pad-expert-input-to-capacity");
    }
  }
  // Megatron-LM splits the layers evenly or not at all: another split needs its layout, which
  // gives the virtual stages too (validate_args takes one of the two).
  if (const std::string layout = megatron_layout(m, t); !layout.empty())
    arg(spelled(Knob::kStageLayers, Engine::kMegatronLm), fmt::format("\"{}\"", layout));
  else if (t.vpp > 1)
    arg("--num-layers-per-virtual-pipeline-stage", num(m.num_layers / (t.pp * t.vpp)));
  if (t.sequence_parallel) arg(spelled(Knob::kSequenceParallel, Engine::kMegatronLm));
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
  if (t.zero_stage >= 1) arg("--use-distributed-optimizer");
  if (t.overlap_grad_reduce) arg("--overlap-grad-reduce");
  // Megatron-Core's overlaps as priced (Megatron-LM overlaps interleaved pipeline sends unless
  // told not to).
  if (t.overlap_param_gather) arg("--overlap-param-gather");
  if (t.fp8_param_gather) arg("--fp8-param-gather");
  if (t.tp_comm_overlap) arg("--tp-comm-overlap");
  if (t.moe_shared_expert_overlap) arg("--moe-shared-expert-overlap");
  if (t.vpp > 1 && !t.overlap_p2p_comm) arg("--no-overlap-p2p-communication");
  if (t.bf16_gradient_reduction) arg("--grad-reduce-in-bf16");
  out += precision_aware_arguments(t);
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

std::string nemo_recipe(const TransformerConfig& m, const TrainingConfig& t, int devices_per_node,
                        const std::string& tokenizer_id) {
  refuse_what_it_does_not_run(Engine::kNemo, m, t);
  refuse_unbuildable(m, "nemo");
  if (m.mla() || m.mtp_layers > 0)
    throw FieldError("export", fmt::format(" nemo: {} has multi-latent attention or multi-token "
                                           "prediction, which NeMo's GPT recipe does not "
                                           "build; export it for megatron",
                                           m.name));
  std::string out;
  auto key = [&](int indent, const std::string& name, const std::string& value) {
    out += fmt::format("{:{}}{}: {}\n", "", indent, name, value);
  };
  auto num = [](auto v) { return fmt::format("{}", v); };
  auto yes = [](bool b) { return std::string(b ? "true" : "false"); };
  const int world = t.devices();
  const int per_node = devices_per_node > 0 ? std::min(world, devices_per_node) : world;
  out += fmt::format("# {} on {} GPUs as paraplan planned it (NeMo, Megatron-Core GPT)\n", m.name,
                     world);
  out += "trainer:\n";
  key(2, "devices", num(per_node));
  key(2, "num_nodes", num((world + per_node - 1) / per_node));
  key(2, "precision", "bf16-mixed");
  key(2, "accumulate_grad_batches", "1");
  out += "model:\n";
  key(2, "mcore_gpt", "true");
  key(2, "micro_batch_size", num(t.micro_batch));
  key(2, "global_batch_size", num(t.global_batch));
  key(2, "tensor_model_parallel_size", num(t.tp));
  key(2, "pipeline_model_parallel_size", num(t.pp));
  key(2, "virtual_pipeline_model_parallel_size", t.vpp > 1 ? num(t.vpp) : "null");
  // NeMo 1.x's GPT model never reads Megatron-Core's layout: it takes the first and the last
  // stage's layers and splits the rest evenly (megatron_gpt_model.py); the engine's rules keep
  // every other split out of the plans offered for it.
  if (const std::vector<int> split = stage_split(m, t); !megatron_layout(m, t).empty()) {
    key(2, "num_layers_in_first_pipeline_stage", num(split.front()));
    key(2, "num_layers_in_last_pipeline_stage", num(split.back()));
  }
  key(2, "context_parallel_size", num(t.cp));
  if (m.moe()) key(2, "expert_model_parallel_size", num(t.ep));
  key(2, "encoder_seq_length", num(t.seq_len));
  key(2, "max_position_embeddings", num(std::max<std::int64_t>(t.seq_len, m.max_positions)));
  key(2, "num_layers", num(m.num_layers));
  key(2, "hidden_size", num(m.hidden_size));
  key(2, "ffn_hidden_size",
      num(m.ffn_hidden_size > 0 ? m.ffn_hidden_size : m.expert_ffn_hidden_size));
  key(2, "num_attention_heads", num(m.num_attention_heads));
  key(2, "num_query_groups", num(m.num_kv_heads));
  if (m.head_dim * m.num_attention_heads != m.hidden_size) key(2, "kv_channels", num(m.head_dim));
  const char* dropout = t.dropout && m.dropout ? "0.1" : "0.0";
  key(2, "hidden_dropout", dropout);
  key(2, "attention_dropout", dropout);
  key(2, "ffn_dropout", "0.0");
  key(2, "normalization", m.biases ? "layernorm" : "rmsnorm");
  key(2, "bias", yes(m.biases));
  key(2, "activation", m.gated_mlp ? "fast-swiglu" : "gelu");
  key(2, "position_embedding_type", m.learned_positions ? "learned_absolute" : "rope");
  if (!m.learned_positions && m.rotary_base > 0) key(2, "rotary_base", num(m.rotary_base));
  if (m.partial_rotary != 1) key(2, "rotary_percentage", num(m.partial_rotary));
  key(2, "share_embeddings_and_output_weights", yes(m.tied_embeddings));
  if (m.qk_norm) key(2, "qk_layernorm", "true");
  if (m.moe()) {
    key(2, "num_moe_experts", num(m.num_experts));
    key(2, "moe_router_topk", num(m.experts_per_token));
    key(2, "moe_ffn_hidden_size", num(m.expert_ffn_hidden_size));
    if (m.shared_experts > 0)
      key(2, "moe_shared_expert_intermediate_size",
          num(m.shared_experts * (m.shared_expert_ffn_hidden_size > 0
                                      ? m.shared_expert_ffn_hidden_size
                                      : m.expert_ffn_hidden_size)));
    if (m.first_dense_layers > 0) {  // Megatron-Core's field takes an int or a list
      std::string list;
      const std::int64_t every = std::max<std::int64_t>(1, m.moe_every);
      for (std::int64_t i = 0; i < m.num_layers; ++i) {
        const std::int64_t j = i - m.first_dense_layers;
        list += fmt::format("{}{}", i > 0 ? ", " : "", j >= 0 && j % every == every - 1 ? 1 : 0);
      }
      key(2, "moe_layer_freq", fmt::format("[{}]", list));
    } else if (m.moe_every > 1) {
      key(2, "moe_layer_freq", num(m.moe_every));
    }
    key(2, "moe_grouped_gemm", "true");
    key(2, "moe_token_dispatcher_type", "alltoall");
    if (t.moe_capacity_factor > 0) key(2, "moe_expert_capacity_factor", num(t.moe_capacity_factor));
  }
  key(2, "sequence_parallel", yes(t.sequence_parallel));
  key(2, "activations_checkpoint_granularity",
      t.recompute == Recompute::kFull        ? "full"
      : t.recompute == Recompute::kSelective ? "selective"
                                             : "null");
  if (t.recompute == Recompute::kFull) {
    key(2, "activations_checkpoint_method", t.recompute_layers > 0 ? "block" : "uniform");
    key(2, "activations_checkpoint_num_layers",
        num(t.recompute_layers > 0 ? t.recompute_layers : 1));
  }
  const bool fused = t.attention == Attention::kFlash;
  key(2, "transformer_engine", yes(fused));
  key(2, "use_flash_attention", yes(fused));
  key(2, "fp8", yes(t.fp8));
  if (t.fp8) key(2, "fp8_hybrid", "true");
  if (t.fp8_param_gather) key(2, "fp8_params", "true");
  key(2, "ub_tp_comm_overlap", yes(t.tp_comm_overlap));
  key(2, "overlap_p2p_comm", yes(t.overlap_p2p_comm));
  // Megatron-Core refuses overlapped and batched p2p at once; NeMo's default batches them.
  if (t.overlap_p2p_comm) key(2, "batch_p2p_comm", "false");
  // bf16 weights with fp32 main parameters in the optimizer: what was priced, and what NeMo
  // needs for virtual pipelines and expert parallelism.
  key(2, "megatron_amp_O2", "true");
  key(2, "make_vocab_size_divisible_by", "128");
  // The vocabulary as priced: NeMo sizes the embedding from override_vocab_size when given
  // (megatron_gpt_model.py), never from tokenizer.vocab_size, which is not written (a key NeMo
  // does not read would say a vocabulary it does not build).
  key(2, "override_vocab_size", num(m.vocab_size));
  out += "  tokenizer:\n";
  if (!tokenizer_id.empty()) {
    key(4, "library", "huggingface");
    key(4, "type", tokenizer_id);
  } else if (m.vocab_size == 50257) {
    key(4, "library", "megatron");
    key(4, "type", "GPT2BPETokenizer");
  } else {
    out += fmt::format(
        "    # FILL IN: a tokenizer of {} tokens or fewer (its ids index the embedding), e.g.\n"
        "    # library: huggingface with type: the model's Hugging Face id\n",
        m.vocab_size);
    key(4, "library", "huggingface");
    key(4, "type", "null");
  }
  out += "  optim:\n";
  // ZeRO 1 is Megatron-Core's distributed optimizer (NeMo's distributed_fused_adam is Apex's,
  // which shards gradients too, and which expert parallelism refuses).
  key(4, "name", t.zero_stage >= 1 ? "mcore_distributed_optim" : "fused_adam");
  key(4, "overlap_grad_sync", yes(t.overlap_grad_reduce));
  // NeMo refuses the parameter gather's overlap without the gradient reduction's.
  key(4, "overlap_param_sync", yes(t.overlap_param_gather && t.overlap_grad_reduce));
  key(4, "grad_sync_dtype", t.bf16_gradient_reduction ? "bf16" : "fp32");
  return out;
}

Json deepspeed_config(const TrainingConfig& t, int checkpoints_per_stage) {
  Json j{{"train_batch_size", t.global_batch},
         {"train_micro_batch_size_per_gpu", t.micro_batch},
         {"gradient_accumulation_steps", t.microbatches()},
         {"bf16", {{"enabled", true}}},
         {"communication_data_type", t.bf16_gradient_reduction ? "bf16" : "fp32"},
         {"zero_optimization", {{"stage", t.zero_stage}, {"overlap_comm", t.overlap_grad_reduce}}},
         {"gradient_clipping", 1.0}};
  if (t.shard_group > 0) j["zero_optimization"]["mics_shard_size"] = t.shard_group;  // MiCS
  // DeepSpeed's checkpointing of whole layers (selective recomputation is Megatron's, by flag).
  if (t.recompute == Recompute::kFull) {
    Json checkpoints = nullptr;
    if (checkpoints_per_stage > 0) checkpoints = checkpoints_per_stage;
    j["activation_checkpointing"] = {{"partition_activations", false},
                                     {"contiguous_memory_optimization", false},
                                     {"cpu_checkpointing", false},
                                     {"number_checkpoints", checkpoints},
                                     {"synchronize_checkpoint_boundary", false},
                                     {"profile", false}};
  }
  return j;
}

std::string megatron_deepspeed_launch(const TransformerConfig& m, const TrainingConfig& t,
                                      int devices_per_node) {
  refuse_what_it_does_not_run(Engine::kMegatronDeepSpeed, m, t);
  refuse_unbuildable(m, "deepspeed");
  auto refuse = [&](const std::string& why) {
    throw FieldError("export", fmt::format(" deepspeed: {}; price the plan on the deepspeed stack "
                                           "(--stack deepspeed) without it, or export it for "
                                           "megatron",
                                           why));
  };
  const std::vector<int> split = stage_split(m, t);
  const bool own_split = split == deepspeed_split(static_cast<int>(m.num_layers), t.pp);
  const std::pair<bool, const char*> unsupported[] = {
      {m.moe(), "Megatron-DeepSpeed's experts are not what paraplan prices"},
      {m.mla() || m.mtp_layers > 0 || m.qk_norm,
       "Megatron-DeepSpeed builds no latent attention, MTP or query-key norms"},
      // The layout as written (the rules read an empty split as the even one).
      {!own_split,
       "DeepSpeed's pipeline splits the layers itself (the first stages one layer more where "
       "they do not divide)"}};
  for (const auto& [no, why] : unsupported)
    if (no) refuse(why);
  std::string out;
  out += fmt::format(
      "# {} on {} GPUs as paraplan planned it: Megatron-DeepSpeed's pretrain_gpt.py "
      "under DeepSpeed\n",
      m.name, t.devices());
  const int world = t.devices();
  const int nproc = devices_per_node > 0 ? std::min(world, devices_per_node) : world;
  const int nodes = (world + nproc - 1) / nproc;
  if (t.tp > 1 && nodes > 1)  // DeepSpeed's runner.py: EXPORT_ENVS and DEEPSPEED_ENVIRONMENT_NAME
    out +=
        "# the deepspeed launcher passes only NCCL, PYTHON, UCX and MLFLOW variables, and those "
        "of .deepspeed_env, to the other nodes\n"
        "grep -qx 'CUDA_DEVICE_MAX_CONNECTIONS=1' .deepspeed_env 2>/dev/null || echo "
        "'CUDA_DEVICE_MAX_CONNECTIONS=1' >> .deepspeed_env\n";
  out += "cat > ds_config.json <<'EOF'\n";
  out += deepspeed_config(t, t.recompute == Recompute::kFull ? split.front() : 0).dump(2);
  out += "\nEOF\n";
  if (t.tp > 1) out += "CUDA_DEVICE_MAX_CONNECTIONS=1 ";
  out += fmt::format("deepspeed --num_nodes {} --num_gpus {} pretrain_gpt.py \\\n", nodes, nproc);
  auto arg = [&](const std::string& flag, const std::string& value = {}) {
    out += value.empty() ? flag : fmt::format("{} {}", flag, value);
    out += " \\\n";
  };
  auto num = [](auto v) { return fmt::format("{}", v); };
  arg("--num-layers", num(m.num_layers));
  arg("--hidden-size", num(m.hidden_size));
  arg("--num-attention-heads", num(m.num_attention_heads));
  if (m.num_kv_heads != m.num_attention_heads) arg("--num-key-value-heads", num(m.num_kv_heads));
  if (m.head_dim * m.num_attention_heads != m.hidden_size) arg("--kv-channels", num(m.head_dim));
  arg("--ffn-hidden-size", num(m.ffn_hidden_size));
  if (m.gated_mlp) arg("--swiglu");
  if (!m.biases) arg("--normalization", "rmsnorm");
  if (!m.tied_embeddings) arg("--untie-embeddings-and-output-weights");
  if (!m.learned_positions) {
    arg("--use-rotary-position-embeddings");
    arg("--no-position-embedding");
    if (m.rotary_base > 0) arg("--rotary-position-embeddings-theta", num(m.rotary_base));
    if (m.partial_rotary != 1) arg("--rotary-percent", num(m.partial_rotary));
  }
  if (!m.biases) arg("--disable-bias-linear");
  arg("--tokenizer-type", "NullTokenizer");
  arg("--vocab-size", num(m.vocab_size));
  if (!(t.dropout && m.dropout)) {
    arg("--attention-dropout", "0.0");
    arg("--hidden-dropout", "0.0");
  }
  arg("--seq-length", num(t.seq_len));
  arg("--max-position-embeddings", num(std::max<std::int64_t>(t.seq_len, m.max_positions)));
  arg("--micro-batch-size", num(t.micro_batch));
  arg("--global-batch-size", num(t.global_batch));
  arg("--tensor-model-parallel-size", num(t.tp));
  arg("--pipeline-model-parallel-size", num(t.pp));
  if (t.pp == 1) arg("--no-pipeline-parallel");
  if (t.sequence_parallel) arg("--sequence-parallel");
  if (t.recompute == Recompute::kSelective) arg("--recompute-granularity", "selective");
  if (t.recompute == Recompute::kFull) {
    arg("--checkpoint-activations");
    arg("--deepspeed-activation-checkpointing");
  }
  if (t.attention == Attention::kFlash) arg("--use-flash-attn-v2");
  arg("--bf16");
  arg("--zero-stage", num(t.zero_stage));
  arg("--deepspeed");
  arg("--deepspeed_config", "ds_config.json");
  out.resize(out.size() - 3);
  out += "\n";
  return out;
}

}  // namespace paraplan::engines
