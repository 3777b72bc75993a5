// The typed fields of a Megatron-Bridge launch and what they price
// (engines/megatron_bridge_fields.h).
#include "engines/megatron_bridge_fields.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "engines/megatron_bridge.h"
#include "engines/megatron_layout.h"
#include "engines/shell_script.h"
#include "ir/error.h"

namespace paraplan::engines {
namespace {

// Uneven stages without a layout: the first and last stages' layers, or the embedding and loss
// counted as layers (Megatron-Core's get_num_layers_to_build), split once the model's layers
// are known (a recipe's model is its Hugging Face config's).
void read_bridge_stage_split(const BridgeFields& f, LaunchConfig& out) {
  auto given = [&](const char* k) { return f.has(k) && !f.null(k); };
  PendingSplit split;
  if (given("model.num_layers_in_first_pipeline_stage"))
    split.first = static_cast<int>(f.integer("model.num_layers_in_first_pipeline_stage", 0, 0));
  if (given("model.num_layers_in_last_pipeline_stage"))
    split.last = static_cast<int>(f.integer("model.num_layers_in_last_pipeline_stage", 0, 0));
  split.embedding = f.boolean("model.account_for_embedding_in_pipeline_split", false);
  split.loss = f.boolean("model.account_for_loss_in_pipeline_split", false);
  if (split.first < 0 && split.last < 0 && !split.embedding && !split.loss) return;
  split.key = split.first >= 0  ? "model.num_layers_in_first_pipeline_stage"
              : split.last >= 0 ? "model.num_layers_in_last_pipeline_stage"
              : split.embedding ? "model.account_for_embedding_in_pipeline_split"
                                : "model.account_for_loss_in_pipeline_split";
  if (given("model.pipeline_model_parallel_layout"))
    return f.fail(split.key,
                  "a layout gives the stages itself; leave it out beside "
                  "model.pipeline_model_parallel_layout");
  out.pending_split = split;
}

// What a recipe or an override sets that paraplan does not price: refused unless at its default
// (the value the price assumes).
void refuse_unpriced(const BridgeFields& f, const TrainingConfig& t) {
  auto is = [&](const char* k, const char* fallback) {
    return !f.has(k) || f.null(k) || f.text(k, fallback) == fallback;
  };
  if (!is("model.cuda_graph_impl", "none"))
    f.fail("model.cuda_graph_impl",
           "CUDA graphs change launch overheads and memory pools paraplan does not price; "
           "expected none");
  if (f.has("model.microbatch_group_size_per_vp_stage") &&
      !f.null("model.microbatch_group_size_per_vp_stage") &&
      f.integer("model.microbatch_group_size_per_vp_stage", t.pp) != t.pp)
    f.fail("model.microbatch_group_size_per_vp_stage",
           fmt::format("regroups the interleaved schedule's micro-batches, which paraplan prices "
                       "in groups of the pipeline size; expected null or {}",
                       t.pp));
  if (!is("model.cp_comm_type", "p2p"))
    f.fail("model.cp_comm_type",
           "paraplan prices context parallelism's ring of point-to-point exchanges; expected "
           "p2p");
  if (f.boolean("model.fine_grained_activation_offloading", false))
    f.fail("model.fine_grained_activation_offloading",
           "offloading to the host is not priced; expected false");
  for (const char* k :
       {"comm_overlap.delay_wgrad_compute", "comm_overlap.overlap_moe_expert_parallel_comm"})
    if (f.boolean(k, false))
      f.fail(k,
             "overlaps the expert-parallel all-to-all with deferred weight gradients, which "
             "paraplan does not price; expected false");
  // Megatron-Core's recompute_modules apply with selective granularity; paraplan prices its
  // default (the attention core).
  const std::string modules = f.text("model.recompute_modules", "null");
  if (t.recompute == Recompute::kSelective && modules != "null" && modules != "[]" &&
      modules != "[core_attn]")
    f.fail("model.recompute_modules",
           fmt::format("recomputes {}, another set of modules than paraplan prices (the "
                       "attention core, Megatron-Core's selective default); expected null",
                       modules));
}

// The mixed precision — one of Bridge's recipes by name (bf16_mixed, ...), or a recipe's own
// MixedPrecisionConfig (DeepSeek-V3's) — with the fields a recipe sets on it (Qwen3-30B-A3B's
// bf16_mixed() with grad_reduce_in_fp32 = False: gradients reduced in bf16, which Bridge sets over
// the DDP configuration); and the optimizer's dtypes.
void read_bridge_precision(const BridgeFields& f, TrainingConfig& t) {
  const std::string precision = f.text("mixed_precision", "bf16_mixed");
  const bool custom = precision == "MixedPrecisionConfig";  // the dataclass's defaults: no bf16
  if (!custom) {
    f.choice("mixed_precision", "bf16_mixed",
             {"bf16_mixed", "bf16-mixed", "bf16_with_fp8_delayed_scaling_mixed",
              "bf16-with-fp8-delayed-scaling-mixed", "bf16_with_fp8_current_scaling_mixed",
              "bf16-with-fp8-current-scaling-mixed"});
    // The FP8 recipes of Bridge gather FP8 parameters (fp8_param_gather).
    t.fp8 = precision.find("fp8") != std::string::npos;
    t.fp8_param_gather = t.fp8;
  }
  if (f.has("mixed_precision.fp8_param_gather") && !f.null("mixed_precision.fp8_param_gather")) {
    t.fp8_param_gather = f.boolean("mixed_precision.fp8_param_gather", t.fp8);
    if (t.fp8_param_gather && !t.fp8)
      f.fail("mixed_precision.fp8_param_gather",
             "FP8 parameters need an FP8 mixed precision (bf16_with_fp8_*_mixed); expected false");
  }
  if (!f.boolean("mixed_precision.bf16", !custom))
    f.fail("mixed_precision.bf16", "paraplan prices bf16 training; expected true");
  for (const char* dtype : {"mixed_precision.params_dtype", "mixed_precision.pipeline_dtype"})
    if (f.has(dtype) && !f.null(dtype) && optimizer_dtype_name(f.text(dtype, "")) != "bf16")
      f.fail(dtype, "paraplan prices bf16 weights and activations; expected torch.bfloat16");
  if (f.boolean("mixed_precision.autocast_enabled", false))
    f.fail("mixed_precision.autocast_enabled",
           "autocast over the bf16 weights is not priced; expected false");
  t.bf16_gradient_reduction = !f.boolean("mixed_precision.grad_reduce_in_fp32", true);
  OptimizerDtypes d;
  d.precision_aware = f.boolean("optimizer.use_precision_aware_optimizer", false);
  const char* keys[] = {"optimizer.exp_avg_dtype", "optimizer.exp_avg_sq_dtype",
                        "optimizer.main_params_dtype", "optimizer.main_grads_dtype"};
  std::string* values[] = {&d.exp_avg, &d.exp_avg_sq, &d.main_params, &d.main_grads};
  for (int i = 0; i < 4; ++i) {
    if (!f.has(keys[i]) || f.null(keys[i])) continue;
    const std::string name = optimizer_dtype_name(f.text(keys[i], ""));
    if (name.empty())
      f.fail(keys[i], fmt::format("expected a torch dtype (torch.float32, torch.bfloat16, bf16, "
                                  "...), got \"{}\"",
                                  f.text(keys[i], "")));
    else
      *values[i] = name;
  }
  for (const auto& [field, why] : read_optimizer_dtypes(d, t))
    f.fail(keys[static_cast<int>(field)], why);
}

}  // namespace

void BridgeFields::fail(const std::string& k, const std::string& what) const {
  refusals_.add_at(fmt::format("{}:{}", source_, has(k) ? v_.at(k).line : 1), k + ": " + what);
}

std::string BridgeFields::text(const std::string& k, const std::string& fallback) const {
  return has(k) ? unquoted(v_.at(k).text) : fallback;
}

std::int64_t BridgeFields::integer(const std::string& k, std::int64_t fallback,
                                   std::int64_t least) const {
  if (!has(k) || null(k)) return fallback;
  const std::string v = text(k, "");
  const bool digits = !v.empty() && v.size() <= 12 &&
                      std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (!digits || std::stoll(v) < least) {
    fail(k, fmt::format("expected an integer >= {}, got \"{}\"", least, v));
    return std::max(fallback, least);
  }
  return std::stoll(v);
}

double BridgeFields::number(const std::string& k, double fallback) const {
  if (!has(k) || null(k)) return fallback;
  const std::string v = text(k, "");
  try {
    std::size_t used = 0;
    const double x = std::stod(v, &used);
    if (used == v.size() && x >= 0) return x;
  } catch (const std::exception&) {
  }
  fail(k, fmt::format("expected a number >= 0, got \"{}\"", v));
  return fallback;
}

bool BridgeFields::boolean(const std::string& k, bool fallback) const {
  if (!has(k) || null(k)) return fallback;
  std::string v = text(k, "");
  std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return std::tolower(c); });
  if (v == "true") return true;
  if (v == "false") return false;
  fail(k, fmt::format("expected true or false, got \"{}\"", text(k, "")));
  return fallback;
}

std::string BridgeFields::choice(const std::string& k, const std::string& fallback,
                                 const std::vector<std::string>& valid) const {
  const std::string v = has(k) && !null(k) ? text(k, "") : fallback;
  if (std::find(valid.begin(), valid.end(), v) == valid.end()) {
    std::string list;
    for (const auto& x : valid) list += (list.empty() ? "" : ", ") + x;
    fail(k, fmt::format("expected one of {}, got \"{}\"", list, v));
    return fallback;
  }
  return v;
}

// The vanilla GPT recipe's model (GPTModelProvider's defaults) under the overrides.
TransformerConfig bridge_model(const BridgeFields& f, LaunchConfig& out) {
  TransformerConfig m;
  m.name = "megatron-bridge";
  m.num_layers = f.integer("model.num_layers", 0);
  m.hidden_size = f.integer("model.hidden_size", 0);
  m.num_attention_heads = f.integer("model.num_attention_heads", 0);
  bool whole = true;
  for (const char* k : {"model.num_layers", "model.hidden_size", "model.num_attention_heads"})
    if (!f.has(k)) {
      f.fail(k,
             "missing: the vanilla GPT recipe builds no model of its own (GPTModelProvider's "
             "0); give the model's shape");
      whole = false;
    }
  if (!whole) return m;
  m.num_kv_heads = f.integer("model.num_query_groups", m.num_attention_heads);
  m.head_dim = f.integer("model.kv_channels", m.hidden_size / m.num_attention_heads);
  m.gated_mlp = f.boolean("model.gated_linear_unit", false);
  const std::string activation =
      f.choice("model.activation_func", "gelu", {"gelu", "silu", "fast_gelu", "quick_gelu"});
  if (m.gated_mlp != (activation == "silu") && f.has("model.activation_func"))
    f.fail("model.activation_func",
           "paraplan prices SwiGLU (gated_linear_unit with silu) or an "
           "ungated GELU MLP");
  m.ffn_hidden_size = f.integer("model.ffn_hidden_size", 4 * m.hidden_size);
  m.tied_embeddings = f.boolean("model.share_embeddings_and_output_weights", true);
  const std::string positions =
      f.choice("model.position_embedding_type", "learned_absolute", {"learned_absolute", "rope"});
  m.learned_positions = positions == "learned_absolute";
  if (!m.learned_positions) m.rotary_base = f.integer("model.rotary_base", 10000);
  m.partial_rotary = f.number("model.rotary_percent", 1.0);
  m.biases = f.boolean("model.add_bias_linear", true);
  const std::string norm = f.choice("model.normalization", "LayerNorm", {"LayerNorm", "RMSNorm"});
  if ((norm == "RMSNorm") == m.biases && f.has("model.normalization"))
    f.fail("model.normalization",
           "paraplan prices RMSNorm without linear biases (Llama's "
           "family) or LayerNorm with them (GPT's)");
  m.attention_bias = f.boolean("model.add_qkv_bias", false) || m.biases;
  m.qk_norm = f.boolean("model.qk_layernorm", false);
  m.mtp_layers = f.integer("model.mtp_num_layers", 0, 0);
  m.dropout =
      f.number("model.hidden_dropout", 0.1) > 0 || f.number("model.attention_dropout", 0.1) > 0;
  if (f.text("tokenizer.tokenizer_type", "NullTokenizer") != "NullTokenizer" &&
      !f.has("tokenizer.vocab_size") && !f.has("model.vocab_size"))
    f.fail("tokenizer.tokenizer_type",
           "its vocabulary is in the tokenizer's files; give "
           "tokenizer.vocab_size or model.vocab_size");
  m.vocab_size = f.integer("model.vocab_size", f.integer("tokenizer.vocab_size", 32000));
  // An explicit model.vocab_size is taken as it is; the tokenizer's is padded.
  out.vocab_multiple = f.has("model.vocab_size") && !f.null("model.vocab_size")
                           ? 1
                           : static_cast<int>(f.integer("model.make_vocab_size_divisible_by", 128));
  m.max_positions = 0;
  m.num_experts = f.integer("model.num_moe_experts", 0, 0);
  if (m.num_experts > 0) {
    m.experts_per_token = f.integer("model.moe_router_topk", 2);
    m.expert_ffn_hidden_size = f.integer("model.moe_ffn_hidden_size", m.ffn_hidden_size);
    m.shared_expert_ffn_hidden_size = f.integer("model.moe_shared_expert_intermediate_size", 0, 0);
    m.shared_experts = m.shared_expert_ffn_hidden_size > 0 ? 1 : 0;
    const std::string freq = f.text("model.moe_layer_freq", "1");
    std::string error;
    if (freq.find('[') != std::string::npos) {
      if (!read_moe_list(freq, m, error)) f.fail("model.moe_layer_freq", error);
    } else {
      m.moe_every = f.integer("model.moe_layer_freq", 1);
    }
    if (!f.boolean("model.moe_grouped_gemm", false))
      f.fail("model.moe_grouped_gemm", "paraplan prices grouped expert GEMMs; set it true");
    // DeepEP's and HybridEP's dispatch (flex, as apply_flex_dispatcher_backend sets it on
    // Hopper and Blackwell) is priced as the all-to-all it replaces: the same routed tokens over
    // the same links (HybridEP's sending a token once per node, not per expert, not counted: an
    // over-estimate across nodes).
    if (f.choice("model.moe_token_dispatcher_type", "allgather",
                 {"allgather", "alltoall", "flex"}) == "allgather")
      f.fail("model.moe_token_dispatcher_type",
             "paraplan prices the all-to-all token dispatch (or DeepEP's and HybridEP's flex "
             "one); set it alltoall");
  }
  return m;
}

TrainingConfig bridge_training(const BridgeFields& f, LaunchConfig& out, double dropout) {
  TrainingConfig t;
  t.stack = Stack::kMegatron;
  // The vanilla recipe's batch and sequence, Megatron-Core's sizes.
  t.micro_batch = f.integer("train.micro_batch_size", 2);
  t.global_batch = f.integer("train.global_batch_size", 32);
  // run_recipe.py sets model.seq_length to the dataset's.
  t.seq_len = f.integer("dataset.seq_length", f.integer("model.seq_length", 1024));
  t.tp = static_cast<int>(f.integer("model.tensor_model_parallel_size", 1));
  t.pp = static_cast<int>(f.integer("model.pipeline_model_parallel_size", 1));
  t.cp = static_cast<int>(f.integer("model.context_parallel_size", 1));
  t.ep = static_cast<int>(f.integer("model.expert_model_parallel_size", 1));
  if (f.has("model.expert_tensor_parallel_size") && !f.null("model.expert_tensor_parallel_size")) {
    const int etp = static_cast<int>(f.integer("model.expert_tensor_parallel_size", 1));
    t.etp = etp == t.tp ? 0 : etp;
  }
  t.dp = 0;
  t.vpp = static_cast<int>(f.integer("model.virtual_pipeline_model_parallel_size", 1));
  if (f.has("model.pipeline_model_parallel_layout") &&
      !f.null("model.pipeline_model_parallel_layout")) {
    std::string error;
    if (t.vpp > 1)
      f.fail("model.pipeline_model_parallel_layout",
             "a layout gives the virtual stages itself; leave "
             "model.virtual_pipeline_model_parallel_size out");
    else if (!read_layout(f.text("model.pipeline_model_parallel_layout", ""), t, error))
      f.fail("model.pipeline_model_parallel_layout", error);
  }
  read_bridge_stage_split(f, out);
  t.sequence_parallel = f.boolean("model.sequence_parallel", false);
  const std::string granularity =
      f.null("model.recompute_granularity")
          ? "none"
          : f.choice("model.recompute_granularity", "none", {"none", "full", "selective"});
  t.recompute = granularity == "full"        ? Recompute::kFull
                : granularity == "selective" ? Recompute::kSelective
                                             : Recompute::kNone;
  if (t.recompute == Recompute::kFull) {
    const std::string method = f.choice("model.recompute_method", "uniform", {"uniform", "block"});
    t.recompute_layers =
        method == "block" ? static_cast<int>(f.integer("model.recompute_num_layers", 1)) : 0;
  }
  // The vanilla recipe's optimizer is distributed: Bridge turns it on for both sections.
  t.zero_stage = f.boolean("ddp.use_distributed_optimizer", false) ||
                         f.boolean("optimizer.use_distributed_optimizer", true)
                     ? 1
                     : 0;
  t.overlap_grad_reduce = f.boolean("ddp.overlap_grad_reduce", false);
  t.overlap_param_gather = f.boolean("ddp.overlap_param_gather", false) ||
                           f.boolean("optimizer.overlap_param_gather", false);
  t.tp_comm_overlap = f.boolean("model.tp_comm_overlap", false);
  t.moe_shared_expert_overlap = f.boolean("model.moe_shared_expert_overlap", false);
  t.overlap_p2p_comm = f.boolean("model.overlap_p2p_comm", false);
  if (f.has("comm_overlap")) {
    // A recipe's CommOverlapConfig (training/comm_overlap.py): the tensor-parallel overlap it
    // asks for only with tp >= 2 and sequence parallelism; pipeline sends overlapped, not
    // batched, when interleaved.
    if (!f.has("model.tp_comm_overlap"))
      t.tp_comm_overlap =
          f.boolean("comm_overlap.tp_comm_overlap", false) && t.tp >= 2 && t.sequence_parallel;
    if (t.pp > 1 && t.vpp > 1) t.overlap_p2p_comm = true;  // and batch_p2p_comm off
  }
  if (t.overlap_p2p_comm && !f.has("comm_overlap") && f.boolean("model.batch_p2p_comm", true))
    f.fail("model.batch_p2p_comm",
           "Megatron-Core does not batch overlapped p2p sends; set it "
           "false with model.overlap_p2p_comm");
  const std::string backend =
      f.choice("model.attention_backend", "auto", {"auto", "flash", "fused", "unfused", "local"});
  t.attention =
      backend == "unfused" || backend == "local" ? Attention::kStandard : Attention::kFlash;
  // Transformer Engine's own switches, which are what the backend comes down to.
  for (const std::string& e : out.environment)
    if (e == "NVTE_UNFUSED_ATTN=1") t.attention = Attention::kStandard;
  read_bridge_precision(f, t);
  t.moe_capacity_factor = f.number("model.moe_expert_capacity_factor", 0);
  t.dropout = f.number("model.hidden_dropout", dropout) > 0 ||
              f.number("model.attention_dropout", dropout) > 0;
  refuse_unpriced(f, t);
  return t;
}

}  // namespace paraplan::engines
