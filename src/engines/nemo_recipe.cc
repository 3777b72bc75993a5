// Key names and defaults: NeMo examples/nlp/language_modeling/conf/megatron_gpt_config.yaml
// (NeMo 1.23 / 2.x's Megatron-Core GPT) and the Megatron-Core TransformerConfig they feed.
#include "engines/nemo_recipe.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "engines/keyed_config.h"
#include "engines/megatron_layout.h"
#include "io/yaml_json.h"
#include "ir/error.h"

namespace paraplan::engines {

using io::Json;
using io::parse_yaml_text;
namespace {

const std::set<std::string> kTrainerRead = {"devices", "num_nodes", "precision",
                                            "accumulate_grad_batches"};
const std::set<std::string> kTrainerIgnored = {"accelerator",
                                               "logger",
                                               "enable_checkpointing",
                                               "use_distributed_sampler",
                                               "max_epochs",
                                               "max_steps",
                                               "max_time",
                                               "log_every_n_steps",
                                               "val_check_interval",
                                               "limit_val_batches",
                                               "limit_test_batches",
                                               "gradient_clip_val",
                                               "benchmark",
                                               "enable_model_summary",
                                               "strategy",
                                               "callbacks",
                                               "num_sanity_val_steps",
                                               "check_val_every_n_epoch",
                                               "plugins",
                                               "enable_progress_bar",
                                               "deterministic"};
const std::set<std::string> kNemoModelRead = {
    "micro_batch_size",
    "global_batch_size",
    "rampup_batch_size",
    "tensor_model_parallel_size",
    "pipeline_model_parallel_size",
    "virtual_pipeline_model_parallel_size",
    "context_parallel_size",
    "expert_model_parallel_size",
    "encoder_seq_length",
    "max_position_embeddings",
    "num_layers",
    "hidden_size",
    "ffn_hidden_size",
    "num_attention_heads",
    "num_query_groups",
    "kv_channels",
    "hidden_dropout",
    "attention_dropout",
    "ffn_dropout",
    "normalization",
    "make_vocab_size_divisible_by",
    "bias",
    "activation",
    "position_embedding_type",
    "rotary_percentage",
    "rotary_base",
    "share_embeddings_and_output_weights",
    "overlap_p2p_comm",
    "num_moe_experts",
    "moe_router_topk",
    "moe_ffn_hidden_size",
    "moe_shared_expert_intermediate_size",
    "moe_layer_freq",
    "pipeline_model_parallel_layout",
    "num_layers_in_first_pipeline_stage",
    "num_layers_in_last_pipeline_stage",
    "activations_checkpoint_granularity",
    "activations_checkpoint_method",
    "activations_checkpoint_num_layers",
    "num_micro_batches_with_partial_activation_checkpoints",
    "sequence_parallel",
    "transformer_engine",
    "mcore_gpt",
    "fp8",
    "fp8_e4m3",
    "fp8_hybrid",
    "ub_tp_comm_overlap",
    "use_flash_attention",
    "cpu_offloading",
    "megatron_amp_O2",
    "fp8_params",
    "override_vocab_size",
    "fsdp",
    "drop_layers",
    "tokenizer",
    "optim",
    "qk_layernorm",
    "moe_expert_capacity_factor"};
const std::set<std::string> kNemoModelIgnored = {
    "data", "nsys_profile", "peft", "init_method_std", "use_scaled_init_method",
    "layernorm_epsilon", "do_layer_norm_weight_decay", "pre_process", "post_process",
    "persist_layer_norm", "headscale", "transformer_block_type", "openai_gelu",
    "normalize_attention_scores", "attention_type", "native_amp_init_scale",
    "native_amp_growth_interval", "hysteresis", "fp32_residual_connection", "fp16_lm_cross_entropy",
    "grad_allreduce_chunk_size_mb", "grad_div_ar_fusion", "gradient_accumulation_fusion",
    "bias_activation_fusion", "bias_dropout_add_fusion", "masked_softmax_fusion",
    "get_attention_mask_from_fusion", "apply_rope_fusion", "seed", "resume_from_checkpoint",
    "use_cpu_initialization", "onnx_safe", "apex_transformer_log_level", "gradient_as_bucket_view",
    "sync_batch_comm", "activations_checkpoint_layers_per_pipeline", "fp8_margin", "fp8_interval",
    "fp8_amax_history_len", "fp8_amax_compute_algo", "reduce_amax", "use_emha",
    "ub_tp_comm_overlap_cfg", "cpu_offloading_num_layers", "cpu_offloading_activations",
    "cpu_offloading_weights", "sharp", "batch_p2p_comm", "dist_ckpt_format",
    "dist_ckpt_load_on_device", "dist_ckpt_parallel_save", "dist_ckpt_parallel_save_within_dp",
    "dist_ckpt_parallel_load", "dist_ckpt_torch_dist_multiproc",
    "dist_ckpt_assume_constant_structure", "dist_ckpt_load_strictness", "deterministic_mode",
    "seq_len_interpolation_factor", "num_layers_in_first_pipeline_stage_unused",
    "moe_router_load_balancing_type", "moe_aux_loss_coeff", "moe_z_loss_coeff",
    "moe_token_dispatcher_type", "moe_grouped_gemm", "moe_router_pre_softmax", "use_te_rng_tracker",
    "mcore_customization_config", "enable_cuda_graph", "gc_interval", "precision", "name",
    "restore_from_path", "tokenizer_model", "label_smoothing",
    // NeMo's stock megatron_gpt_config.yaml: numerics,
    // logging, checkpoints and FSDP's own settings
    // (read only with fsdp, which is refused).
    "apply_query_key_layer_scaling", "scale_positional_embedding", "dist_ckpt_parallel_dist_opt",
    "enable_megatron_timers", "megatron_timer_kwargs", "nccl_communicator_config_path", "reset_lr",
    "reset_lr_steps", "restore_from_ckpt", "skip_train", "validation_param_sync_overlap",
    "fsdp_grad_reduce_dtype", "fsdp_sharded_checkpoint", "fsdp_sharding_strategy"};
const std::set<std::string> kOptimRead = {"name", "overlap_grad_sync", "overlap_param_sync",
                                          "grad_sync_dtype"};
const std::set<std::string> kOptimIgnored = {"lr",
                                             "weight_decay",
                                             "betas",
                                             "eps",
                                             "sched",
                                             "bucket_cap_mb",
                                             "contiguous_grad_buffer",
                                             "contiguous_param_buffer",
                                             "overlap_grad_sync_chunk",
                                             "ddp_bucket_size",
                                             "momentum",
                                             "distribute_within_nodes",
                                             "nccl_ub",
                                             "fsdp_shard_strategy"};

std::string path_of(const std::string& section, const std::string& key) {
  return section.empty() ? key : section + "." + key;
}

// One section of the recipe: typed reads of its keys, placed at "SOURCE: section.key". What is
// refused is kept (the read goes on with the default) and reported with the rest at the end.
class Section {
 public:
  Section(const Json& root, const Json& node, std::string name, Refusals& refusals)
      : root_(root), node_(node), name_(std::move(name)), refusals_(refusals) {}

  void refuse(const std::string& key, const std::string& message) const {
    refusals_.add(path_of(name_, key), message);
  }
  // The value, with ${.key} / ${section.key} resolved; null when absent.
  Json get(const std::string& key) const {
    if (!node_.is_object() || !node_.contains(key)) return nullptr;
    Json v = node_[key];
    for (int hops = 0; v.is_string() && hops < 8; ++hops) {
      const std::string s = v.get<std::string>();
      if (s.find("${") == std::string::npos) break;
      if (s.size() < 4 || s.rfind("${", 0) != 0 || s.back() != '}') {
        refuse(key, fmt::format("\"{}\": only a whole-value ${{...}} reference is resolved", s));
        return nullptr;
      }
      const std::string ref = s.substr(2, s.size() - 3);
      const Json* at = &root_;
      std::string rest = ref;
      if (!ref.empty() && ref[0] == '.') {
        at = &node_;
        rest = ref.substr(1);
      }
      for (std::size_t start = 0; start <= rest.size();) {
        const std::size_t dot = std::min(rest.find('.', start), rest.size());
        const std::string part = rest.substr(start, dot - start);
        if (!at->is_object() || !at->contains(part)) {
          refuse(key, fmt::format("\"{}\" refers to a key the recipe does not have", s));
          return nullptr;
        }
        at = &(*at)[part];
        start = dot + 1;
      }
      v = *at;
    }
    return v;
  }
  bool has(const std::string& key) const { return !get(key).is_null(); }
  std::int64_t integer(const std::string& key, std::int64_t fallback,
                       std::int64_t least = 1) const {
    const Json v = get(key);
    if (v.is_null()) return fallback;
    if (!v.is_number_integer() || v.get<std::int64_t>() < least) {
      refuse(key, fmt::format("expected an integer >= {}, got {}", least, shown(v)));
      return std::max(fallback, least);
    }
    return v.get<std::int64_t>();
  }
  double number(const std::string& key, double fallback) const {
    const Json v = get(key);
    if (v.is_null()) return fallback;
    if (!v.is_number() || v.get<double>() < 0) {
      refuse(key, fmt::format("expected a number >= 0, got {}", shown(v)));
      return fallback;
    }
    return v.get<double>();
  }
  bool boolean(const std::string& key, bool fallback) const {
    const Json v = get(key);
    if (v.is_null()) return fallback;
    if (!v.is_boolean()) {
      refuse(key, fmt::format("expected true or false, got {}", shown(v)));
      return fallback;
    }
    return v.get<bool>();
  }
  std::string text(const std::string& key, const std::string& fallback) const {
    const Json v = get(key);
    if (v.is_null()) return fallback;
    if (v.is_number_integer()) return std::to_string(v.get<std::int64_t>());
    if (!v.is_string()) {
      refuse(key, fmt::format("expected a string, got {}", shown(v)));
      return fallback;
    }
    return v.get<std::string>();
  }
  std::string choice(const std::string& key, const std::string& fallback,
                     const std::vector<std::string>& valid) const {
    const std::string v = text(key, fallback);
    if (std::find(valid.begin(), valid.end(), v) == valid.end()) {
      std::string list;
      for (const auto& x : valid) list += (list.empty() ? "" : ", ") + x;
      refuse(key, fmt::format("expected one of {}, got \"{}\"", list, v));
      return fallback;
    }
    return v;
  }
  // Every key read, ignored or refused (unknown); the read and ignored ones recorded.
  void classify(const std::set<std::string>& read, const std::set<std::string>& ignored,
                LaunchConfig& out) const {
    if (node_.is_null()) return;
    if (!node_.is_object()) {
      refusals_.add(name_, "expected a mapping of keys");
      return;
    }
    for (const auto& [key, value] : node_.items()) {
      if (read.count(key))
        out.read.push_back(path_of(name_, key));
      else if (ignored.count(key))
        out.ignored.push_back(path_of(name_, key));
      else
        refuse(key,
               "not a key paraplan knows in this section of a NeMo GPT recipe (a typo? keys "
               "that change time or memory are read, the others listed as ignored)");
    }
  }
  const Json& node() const { return node_; }
  Refusals& refusals() const { return refusals_; }

 private:
  const Json& root_;
  const Json& node_;
  std::string name_;
  Refusals& refusals_;
};

TransformerConfig nemo_model_of(const Section& m) {
  TransformerConfig c;
  c.name = "nemo-recipe";
  c.num_layers = m.integer("num_layers", 0);
  c.hidden_size = m.integer("hidden_size", 0);
  c.num_attention_heads = m.integer("num_attention_heads", 0);
  if (c.hidden_size % c.num_attention_heads && !m.has("kv_channels"))
    m.refuse("hidden_size", "is not divisible by num_attention_heads; give kv_channels");
  c.head_dim = m.integer("kv_channels", c.hidden_size / c.num_attention_heads);
  c.num_kv_heads = m.integer("num_query_groups", c.num_attention_heads);
  const std::string activation = m.choice(
      "activation", "gelu",
      {"gelu", "geglu", "swiglu", "fast-swiglu", "fast-geglu", "reglu", "squared-relu", "relu"});
  c.gated_mlp = activation.find("glu") != std::string::npos;
  c.ffn_hidden_size = m.integer("ffn_hidden_size", 4 * c.hidden_size);
  c.tied_embeddings = m.boolean("share_embeddings_and_output_weights", true);
  c.learned_positions = m.choice("position_embedding_type", "learned_absolute",
                                 {"learned_absolute", "rope", "alibi", "kerple", "xpos", "sandwich",
                                  "none"}) == "learned_absolute";
  c.max_positions = m.integer("max_position_embeddings", 0);
  c.partial_rotary = m.number("rotary_percentage", 1.0);
  if (!c.learned_positions) {  // NeMo's recipes write it as an integer or a float
    const double base = m.number("rotary_base", 10000);
    if (!(base >= 1 && base < 1e15)) m.refuse("rotary_base", "must be at least 1");
    c.rotary_base = static_cast<std::int64_t>(base);
  }
  c.biases = m.boolean("bias", true);
  c.attention_bias = c.biases;
  c.qk_norm = m.boolean("qk_layernorm", false);
  c.dropout = m.number("hidden_dropout", 0.1) > 0 || m.number("attention_dropout", 0.1) > 0;
  const Json tokenizer_node = m.get("tokenizer");
  const Section tokenizer(m.node(), tokenizer_node, "model.tokenizer", m.refusals());
  // NeMo sizes the embedding by override_vocab_size when given, else by its tokenizer.
  std::int64_t vocab = m.has("override_vocab_size") ? m.integer("override_vocab_size", 0, 1)
                       : tokenizer.node().is_object() && tokenizer.node().contains("vocab_size")
                           ? tokenizer.integer("vocab_size", 0)
                           : 0;
  if (vocab == 0 && tokenizer.node().is_object() &&
      tokenizer.text("type", "") == "GPT2BPETokenizer")
    vocab = 50257;
  if (vocab == 0)
    m.refuse("tokenizer",
             "the vocabulary size is not in the recipe; add model.tokenizer.vocab_size, "
             "or give the model with --model instead");
  c.vocab_size = vocab;
  c.num_experts = m.integer("num_moe_experts", 0, 0);
  if (c.num_experts > 0) {
    c.experts_per_token = m.integer("moe_router_topk", 2);
    c.expert_ffn_hidden_size = m.integer("moe_ffn_hidden_size", c.ffn_hidden_size);
    c.shared_expert_ffn_hidden_size = m.integer("moe_shared_expert_intermediate_size", 0, 0);
    c.shared_experts = c.shared_expert_ffn_hidden_size > 0 ? 1 : 0;
    // Megatron-Core's moe_layer_freq: every N-th layer, or one 0/1 entry per layer.
    // Megatron-Core's field is an int or a list; a pattern string is Megatron-LM's flag's.
    const Json listed = m.get("moe_layer_freq");
    const std::string freq = listed.is_array() ? listed.dump() : m.text("moe_layer_freq", "1");
    if (freq.find('[') != std::string::npos) {
      if (std::string error; !read_moe_list(freq, c, error)) m.refuse("moe_layer_freq", error);
    } else {
      c.moe_every = m.integer("moe_layer_freq", 1);
    }
  }
  m.choice("normalization", "layernorm", {"layernorm", "rmsnorm", "layernorm1p"});
  return c;
}

// Uneven stages: Megatron-Core's layout, or the first and last stages' layers (the rest even).
void read_split(const Section& m, TrainingConfig& t) {
  if (m.has("pipeline_model_parallel_layout")) {
    if (t.vpp > 1)
      m.refuse("pipeline_model_parallel_layout",
               "the layout says the virtual stages; leave virtual_pipeline_model_parallel_size "
               "null");
    else if (std::string error;
             !read_layout(m.text("pipeline_model_parallel_layout", ""), t, error))
      m.refuse("pipeline_model_parallel_layout", error);
    return;
  }
  const bool first = m.has("num_layers_in_first_pipeline_stage"),
             last = m.has("num_layers_in_last_pipeline_stage");
  if (!first && !last) return;
  const char* key =
      first ? "num_layers_in_first_pipeline_stage" : "num_layers_in_last_pipeline_stage";
  const std::int64_t layers = m.integer("num_layers", 0, 0);
  if (layers == 0) return m.refuse(key, "needs model.num_layers");
  std::string error;
  if (!uneven_split(
          layers, first ? static_cast<int>(m.integer("num_layers_in_first_pipeline_stage", 1)) : -1,
          last ? static_cast<int>(m.integer("num_layers_in_last_pipeline_stage", 1)) : -1, false,
          false, t, error))
    m.refuse(key, error);
}

TrainingConfig nemo_training_of(const Section& trainer, const Section& m, const Section& optim,
                                LaunchConfig& out) {
  TrainingConfig t;
  t.stack = Stack::kMegatron;
  if (m.boolean("fsdp", false))
    m.refuse("fsdp",
             "NeMo's PyTorch-FSDP path is not priced as NeMo runs it; for FSDP, plan with "
             "--stack fsdp (or read a torchtitan job)");
  if (const Json drop = m.get("drop_layers"); !drop.is_null() && !(drop.is_array() && drop.empty()))
    m.refuse("drop_layers", "dropping layers changes the model; give the layers it trains");
  const std::string precision = trainer.text("precision", "32");
  if (precision != "bf16" && precision != "bf16-mixed")
    trainer.refuse("precision", fmt::format("paraplan prices bf16 training (bf16 or bf16-mixed), "
                                            "got \"{}\"",
                                            precision));
  if (trainer.integer("accumulate_grad_batches", 1) != 1)
    trainer.refuse("accumulate_grad_batches",
                   "NeMo takes the accumulation from the global batch; "
                   "expected 1");
  if (trainer.has("devices"))
    out.world_size =
        static_cast<int>(trainer.integer("devices", 1) * trainer.integer("num_nodes", 1));
  if (m.has("rampup_batch_size")) m.refuse("rampup_batch_size", "is not priced; leave it null");
  if (m.boolean("cpu_offloading", false))
    m.refuse("cpu_offloading", "is not priced; expected false");
  if (m.has("num_micro_batches_with_partial_activation_checkpoints"))
    m.refuse("num_micro_batches_with_partial_activation_checkpoints",
             "is not priced; leave it null");
  if (m.has("mcore_gpt") && !m.boolean("mcore_gpt", true))
    m.refuse("mcore_gpt", "paraplan prices Megatron-Core's GPT; expected true");
  t.tp = static_cast<int>(m.integer("tensor_model_parallel_size", 1));
  t.pp = static_cast<int>(m.integer("pipeline_model_parallel_size", 1));
  t.cp = static_cast<int>(m.integer("context_parallel_size", 1));
  t.ep = static_cast<int>(m.integer("expert_model_parallel_size", 1));
  t.vpp = static_cast<int>(m.integer("virtual_pipeline_model_parallel_size", 1));
  t.dp = 0;
  t.micro_batch = m.integer("micro_batch_size", 1);
  t.global_batch = m.integer("global_batch_size", 0, 0);
  if (!m.has("encoder_seq_length"))
    m.refuse("encoder_seq_length", "is missing (the sequence length)");
  t.seq_len = m.integer("encoder_seq_length", 2048);
  t.sequence_parallel = m.boolean("sequence_parallel", false);
  const std::string granularity =
      m.has("activations_checkpoint_granularity")
          ? m.choice("activations_checkpoint_granularity", "", {"selective", "full"})
          : "none";
  t.recompute = granularity == "full"        ? Recompute::kFull
                : granularity == "selective" ? Recompute::kSelective
                                             : Recompute::kNone;
  if (t.recompute == Recompute::kFull) {
    const std::string method =
        m.choice("activations_checkpoint_method", "uniform", {"uniform", "block"});
    t.recompute_layers =
        method == "block" ? static_cast<int>(m.integer("activations_checkpoint_num_layers", 1)) : 0;
  }
  const std::string optimizer =
      optim.choice("name", "fused_adam",
                   {"distributed_fused_adam", "fused_adam", "adam", "mcore_distributed_optim"});
  t.zero_stage =
      optimizer == "distributed_fused_adam" || optimizer == "mcore_distributed_optim" ? 1 : 0;
  t.overlap_grad_reduce = optim.boolean("overlap_grad_sync", false);
  t.overlap_param_gather = optim.boolean("overlap_param_sync", false);
  t.bf16_gradient_reduction = optim.choice("grad_sync_dtype", "fp32", {"fp32", "bf16"}) == "bf16";
  t.tp_comm_overlap = m.boolean("ub_tp_comm_overlap", false);
  t.overlap_p2p_comm = m.boolean("overlap_p2p_comm", false);
  t.fp8 = m.boolean("fp8", false);
  t.fp8_param_gather = m.boolean("fp8_params", false);
  if (t.fp8_param_gather && !t.fp8)
    m.refuse("fp8_params", "needs fp8: true (FP8 parameters are FP8 training's)");
  t.attention = m.boolean("use_flash_attention", true) || m.boolean("transformer_engine", true)
                    ? Attention::kFlash
                    : Attention::kStandard;
  t.moe_capacity_factor = m.number("moe_expert_capacity_factor", 0);
  t.dropout = m.number("hidden_dropout", 0.1) > 0 || m.number("attention_dropout", 0.1) > 0;
  read_split(m, t);
  out.vocab_multiple = static_cast<int>(m.integer("make_vocab_size_divisible_by", 128));
  return t;
}

}  // namespace

LaunchConfig read_nemo_recipe(const std::string& text, const std::string& source) {
  const Json root = parse_yaml_text(text, source);
  if (!root.is_object() || !root.contains("model") || !root["model"].is_object())
    throw Error(ErrorKind::kUsage, source, "not a NeMo GPT recipe: no `model` section");
  LaunchConfig out;
  out.format = "nemo";
  out.source = source;
  const Json none;
  Refusals refusals(source);
  const Section trainer(root, root.contains("trainer") ? root["trainer"] : none, "trainer",
                        refusals);
  const Section model(root, root["model"], "model", refusals);
  const Section optim(root, root["model"].contains("optim") ? root["model"]["optim"] : none,
                      "model.optim", refusals);
  trainer.classify(kTrainerRead, kTrainerIgnored, out);
  model.classify(kNemoModelRead, kNemoModelIgnored, out);
  optim.classify(kOptimRead, kOptimIgnored, out);
  for (const auto& [key, value] : root.items())
    if (key != "trainer" && key != "model") out.ignored.push_back(key);
  if (model.has("num_layers") || model.has("hidden_size") || model.has("num_attention_heads")) {
    bool whole = true;
    for (const char* needed : {"num_layers", "hidden_size", "num_attention_heads"})
      if (!model.has(needed)) {
        model.refuse(needed, "is missing (the recipe gives part of the model)");
        whole = false;
      }
    if (whole) out.model = nemo_model_of(model);
  }
  out.training = nemo_training_of(trainer, model, optim, out);
  refusals.raise();  // every refusal at once
  return out;
}

std::vector<std::pair<std::string, std::string>> nemo_searched_options(
    const TransformerConfig& model, const TrainingConfig& t) {
  std::vector<std::pair<std::string, std::string>> out;
  auto num = [](auto v) { return fmt::format("{}", v); };
  auto yes = [](bool b) { return std::string(b ? "true" : "false"); };
  out.emplace_back(spelled(Knob::kTp, Engine::kNemo), num(t.tp));
  out.emplace_back(spelled(Knob::kPp, Engine::kNemo), num(t.pp));
  out.emplace_back(spelled(Knob::kVpp, Engine::kNemo), t.vpp > 1 ? num(t.vpp) : "null");
  out.emplace_back(spelled(Knob::kCp, Engine::kNemo), num(t.cp));
  if (model.moe()) out.emplace_back(spelled(Knob::kEp, Engine::kNemo), num(t.ep));
  out.emplace_back(spelled(Knob::kMicroBatch, Engine::kNemo), num(t.micro_batch));
  out.emplace_back(spelled(Knob::kSequenceParallel, Engine::kNemo), yes(t.sequence_parallel));
  out.emplace_back(spelled(Knob::kRecompute, Engine::kNemo),
                   t.recompute == Recompute::kFull        ? "full"
                   : t.recompute == Recompute::kSelective ? "selective"
                                                          : "null");
  if (t.recompute == Recompute::kFull) {
    out.emplace_back("model.activations_checkpoint_method",
                     t.recompute_layers > 0 ? "block" : "uniform");
    out.emplace_back("model.activations_checkpoint_num_layers",
                     num(t.recompute_layers > 0 ? t.recompute_layers : 1));
  }
  out.emplace_back(spelled(Knob::kZero, Engine::kNemo),
                   t.zero_stage >= 1 ? "mcore_distributed_optim" : "fused_adam");
  out.emplace_back(spelled(Knob::kOverlapGradReduce, Engine::kNemo), yes(t.overlap_grad_reduce));
  out.emplace_back(spelled(Knob::kOverlapParamGather, Engine::kNemo), yes(t.overlap_param_gather));
  out.emplace_back(spelled(Knob::kTpCommOverlap, Engine::kNemo), yes(t.tp_comm_overlap));
  out.emplace_back(spelled(Knob::kOverlapP2pComm, Engine::kNemo), yes(t.overlap_p2p_comm));
  if (t.fp8)
    out.emplace_back(spelled(Knob::kFp8ParamGather, Engine::kNemo), yes(t.fp8_param_gather));
  return out;
}

}  // namespace paraplan::engines
