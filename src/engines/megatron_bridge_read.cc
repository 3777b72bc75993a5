// Reading a Megatron-Bridge launch (run_recipe.py with the vanilla GPT recipe): Bridge 067f987's
// scripts/training/run_recipe.py (its options, COMMON_OVERRIDE_FIELDS), the vanilla recipe's values
// (recipes/gpt/h100/vanilla_gpt.py: batch 32, micro-batch 2, 1,024 tokens, NullTokenizer of
// 32,000, the distributed optimizer on through its optimizer section) and GPTModelProvider's
// defaults (Megatron-LM pretrain_gpt.py's: LayerNorm, GELU, learned positions, tied embeddings,
// biases, dropout 0.1).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "engines/keyed_config.h"
#include "engines/megatron_bridge.h"
#include "engines/megatron_bridge_fields.h"
#include "engines/megatron_bridge_recipes.h"
#include "engines/megatron_layout.h"
#include "engines/shell_script.h"
#include "ir/error.h"

namespace paraplan::engines {
namespace {

constexpr const char* kEngine = "bridge";

// run_recipe.py's convenience options, as the overrides they stand for.
const std::map<std::string, std::string> kConvenience = {
    {"-ms", "train.train_iters"},
    {"--max_steps", "train.train_iters"},
    {"-gb", "train.global_batch_size"},
    {"--global_batch_size", "train.global_batch_size"},
    {"-mb", "train.micro_batch_size"},
    {"--micro_batch_size", "train.micro_batch_size"},
    {"-sl", "dataset.seq_length"},
    {"--seq_length", "dataset.seq_length"},
    {"-tp", "model.tensor_model_parallel_size"},
    {"--tensor_model_parallel_size", "model.tensor_model_parallel_size"},
    {"-pp", "model.pipeline_model_parallel_size"},
    {"--pipeline_model_parallel_size", "model.pipeline_model_parallel_size"},
    {"-cp", "model.context_parallel_size"},
    {"--context_parallel_size", "model.context_parallel_size"},
    {"-vp", "model.virtual_pipeline_model_parallel_size"},
    {"--virtual_pipeline_model_parallel_size", "model.virtual_pipeline_model_parallel_size"},
    {"-ep", "model.expert_model_parallel_size"},
    {"--expert_model_parallel_size", "model.expert_model_parallel_size"},
    {"-etp", "model.expert_tensor_parallel_size"},
    {"--expert_tensor_parallel_size", "model.expert_tensor_parallel_size"},
    {"--lr", "optimizer.lr"},
    {"--min_lr", "optimizer.min_lr"},
    {"--warmup_iters", "scheduler.lr_warmup_iters"},
    {"--pretrained_checkpoint", "checkpoint.pretrained_checkpoint"},
    {"--save_dir", "checkpoint.save"},
    {"--load_dir", "checkpoint.load"},
    {"--save_interval", "checkpoint.save_interval"}};
// run_recipe.py's options that change nothing priced, with a value or without.
const std::set<std::string> kRunnerValued = {"--mode", "--step-func", "--step_func", "--dataset"};
const std::set<std::string> kRunnerSwitches = {"--dry-run", "--dry_run", "--deterministic",
                                               "--dump-env", "--dump_env"};

// The model's shape: a named recipe takes it from its Hugging Face config.
const std::set<std::string> kShapeFields = {
    "model.num_layers",
    "model.hidden_size",
    "model.num_attention_heads",
    "model.num_query_groups",
    "model.kv_channels",
    "model.ffn_hidden_size",
    "model.gated_linear_unit",
    "model.activation_func",
    "model.normalization",
    "model.share_embeddings_and_output_weights",
    "model.position_embedding_type",
    "model.rotary_base",
    "model.rotary_percent",
    "model.add_bias_linear",
    "model.add_qkv_bias",
    "model.qk_layernorm",
    "model.num_moe_experts",
    "model.moe_router_topk",
    "model.moe_ffn_hidden_size",
    "model.moe_shared_expert_intermediate_size",
    "model.moe_layer_freq",
    "model.mtp_num_layers",
    "model.vocab_size",
};
// The fields read (they change time or memory, or the model): the shape and these.
const std::set<std::string> kRead = [] {
  std::set<std::string> read = kShapeFields;
  read.insert({
      "model.moe_grouped_gemm",
      "model.moe_token_dispatcher_type",
      "model.moe_expert_capacity_factor",
      "model.moe_pad_expert_input_to_capacity",
      "model.hidden_dropout",
      "model.attention_dropout",
      "model.make_vocab_size_divisible_by",
      "tokenizer.tokenizer_type",
      "tokenizer.vocab_size",
      "model.seq_length",
      "dataset.seq_length",
      "train.micro_batch_size",
      "train.global_batch_size",
      "model.tensor_model_parallel_size",
      "model.pipeline_model_parallel_size",
      "model.context_parallel_size",
      "model.expert_model_parallel_size",
      "model.expert_tensor_parallel_size",
      "model.virtual_pipeline_model_parallel_size",
      "model.pipeline_model_parallel_layout",
      "model.sequence_parallel",
      "model.recompute_granularity",
      "model.recompute_method",
      "model.recompute_num_layers",
      "ddp.use_distributed_optimizer",
      "optimizer.use_distributed_optimizer",
      "ddp.overlap_grad_reduce",
      "ddp.overlap_param_gather",
      "optimizer.overlap_param_gather",
      "model.tp_comm_overlap",
      "model.moe_shared_expert_overlap",
      "model.overlap_p2p_comm",
      "model.batch_p2p_comm",
      "model.attention_backend",
      "mixed_precision",
      "mixed_precision.bf16",
      "mixed_precision.params_dtype",
      "mixed_precision.pipeline_dtype",
      "mixed_precision.autocast_enabled",
      "mixed_precision.grad_reduce_in_fp32",
      "mixed_precision.fp8_param_gather",
      "optimizer.use_precision_aware_optimizer",
      "optimizer.exp_avg_dtype",
      "optimizer.exp_avg_sq_dtype",
      "optimizer.main_params_dtype",
      "optimizer.main_grads_dtype",
      // Uneven stages without a layout.
      "model.num_layers_in_first_pipeline_stage",
      "model.num_layers_in_last_pipeline_stage",
      "model.account_for_embedding_in_pipeline_split",
      "model.account_for_loss_in_pipeline_split",
      // Read to be refused unless at their defaults: each changes the step in a way paraplan
      // does not price (a recipe's value is checked as an override's is).
      "model.cuda_graph_impl",
      "model.microbatch_group_size_per_vp_stage",
      "model.cp_comm_type",
      "model.recompute_modules",
      "model.fine_grained_activation_offloading",
      "comm_overlap.delay_wgrad_compute",
      "comm_overlap.overlap_moe_expert_parallel_comm",
  });
  return read;
}();
// Fields paraplan prices at the values listed only (the first is Bridge's default); any other is
// refused naming why. A recipe's value is checked as an override's is.
struct AtDefault {
  std::vector<std::string> allowed;
  const char* why;
};
const std::map<std::string, AtDefault> kAtDefault = {
    {"ddp.use_megatron_fsdp",
     {{"false"},
      "Megatron-FSDP shards parameters, gradients and optimizer states its own way; paraplan "
      "prices Megatron-Core's distributed optimizer"}},
    {"mixed_precision.fp8_dot_product_attention",
     {{"false"}, "FP8 attention is not priced (paraplan prices the attention in bf16)"}},
    {"mixed_precision.reuse_grad_buf_for_mxfp8_param_ag",
     {{"false"}, "MXFP8 parameters are not priced"}},
    {"model.moe_a2a_overlap",
     {{"false"},
      "the expert-parallel all-to-all overlapped with another micro-batch's compute is not "
      "priced"}},
    {"model.moe_router_force_load_balancing",
     {{"false"},
      "forced balancing (a benchmark setting) is not priced: paraplan prices learned routing's "
      "imbalance"}},
    {"model.mtp_use_repeated_layer",
     {{"false"},
      "one MTP layer's weights shared over every depth is not priced (a layer each is)"}},
    {"model.offload_modules", {{"null", "[]"}, "activation offloading is not priced"}},
    {"model.quant_recipe",
     {{"null"}, "a per-module quantisation recipe is not priced (the mixed precision is)"}},
    {"model.transformer_impl",
     {{"transformer_engine"},
      "paraplan prices Transformer Engine's kernels, not Megatron-Core's local ones"}},
    {"model.use_fused_mhc", {{"false"}, "manifold-constrained hyper-connections are not priced"}},
    {"optimizer", {{}, "the recipe builds its own optimizer; paraplan prices Adam's"}},
    {"optimizer.optimizer", {{"adam"}, "paraplan prices Adam's states and step"}},
    {"optimizer.optimizer_cpu_offload", {{"false"}, "optimizer offloading is not priced"}},
    {"optimizer.optimizer_offload_fraction", {{"0.0", "0"}, "optimizer offloading is not priced"}},
    {"optimizer.store_param_remainders",
     {{"true"},
      "the precision-aware optimizer's main parameters are priced as the bf16 weights' 16-bit "
      "remainders, Megatron-Core's default"}},
};
// Sections and fields that change neither time nor memory: the update's values, the schedule,
// checkpoints, logs, seeds, evaluation, data sources, numerics of the same kernels.
const std::vector<std::string> kIgnoredSections = {
    "checkpoint.",          "logger.",        "scheduler.",      "rng.",
    "validation.",          "profiling.",     "dist.",           "ft.",
    "straggler.",           "env_vars.",      "nvrx_straggler.", "inprocess_restart.",
    "rerun_state_machine.", "tensor_inspect."};
const std::set<std::string> kIgnored = {
    "optimizer.lr", "optimizer.min_lr", "optimizer.weight_decay", "optimizer.clip_grad",
    "optimizer.adam_beta1", "optimizer.adam_beta2", "optimizer.adam_eps", "train.train_iters",
    "train.eval_iters", "train.eval_interval", "train.exit_interval", "train.exit_duration_in_mins",
    "train.manual_gc", "train.manual_gc_interval", "train.manual_gc_eval",
    "train.exit_signal_handler", "train.skip_train",
    "train.check_weight_hash_across_dp_replicas_interval", "dataset.blend",
    "dataset.blend_per_split", "dataset.split", "dataset.data_path", "dataset.mock",
    "dataset.num_workers", "dataset.random_seed", "dataset.path_to_cache",
    "dataset.reset_position_ids", "dataset.reset_attention_mask", "dataset.eod_mask_loss",
    "dataset.dataloader_type", "tokenizer.tokenizer_model", "tokenizer.vocab_file",
    "tokenizer.merge_file", "model.init_method_std", "model.layernorm_epsilon",
    "model.moe_aux_loss_coeff", "model.moe_router_load_balancing_type",
    "model.moe_router_pre_softmax", "model.moe_z_loss_coeff", "model.rotary_interleaved",
    "model.cross_entropy_loss_fusion", "model.gradient_accumulation_fusion",
    "model.bias_activation_fusion", "model.masked_softmax_fusion", "model.apply_rope_fusion",
    "model.persist_layer_norm", "model.bias_dropout_fusion", "ddp.check_for_nan_in_grad",
    "ddp.average_in_collective", "ddp.bucket_size", "ddp.check_for_large_grads",
    "optimizer.apply_wd_to_qk_layernorm", "scheduler", "env_vars", "dataset.data_sharding",
    "dataset.mmap_bin_files", "dataset.num_dataset_builder_threads",
    "dataset.skip_getting_attention_mask_from_dataset", "tokenizer.hf_tokenizer_kwargs",
    "tokenizer.rank",
    // The tokenizer's copies of the model's fields.
    "tokenizer.make_vocab_size_divisible_by", "tokenizer.tensor_model_parallel_size",
    "model.calculate_per_token_loss", "model.mtp_loss_scaling_factor",
    "model.rotary_scaling_factor", "model.use_te_rng_tracker",
    // Which kernels, fused how (the work is the same).
    "model.cross_entropy_fusion_impl", "model.moe_permute_fusion", "model.moe_router_fusion",
    "model.moe_router_padding_for_fp8", "model.moe_mlp_glu_interleave_size",
    "model.use_fused_weighted_squared_relu", "model.use_transformer_engine_op_fuser",
    "model.apply_dsa_kernel_fusion", "model.dsa_kernel_backend", "model.dsa_indexer_loss_coeff",
    "model.dsa_indexer_use_sparse_loss",
    // The MTP layer's numerics under FP8 (one layer).
    "model.keep_mtp_spec_in_bf16", "model.mtp_eval_in_bf16",
    // The dispatcher's implementation (priced as the
    // all-to-all it replaces) and its stream.
    "model.moe_flex_dispatcher_backend", "model.moe_flex_dispatcher_num_sms",
    "model.moe_hybridep_num_sms", "model.moe_hybridep_num_sms_preprocessing",
    "model.high_priority_a2a_comm_stream",
    // How the userbuffers of the tensor-parallel overlap are
    // set up.
    "comm_overlap.tp_comm_bootstrap_backend", "comm_overlap.tp_comm_overlap_cfg",
    // Read only with the features refused unless off:
    // CUDA graphs (model.cuda_graph_impl), Megatron-FSDP.
    "model.cuda_graph_scope", "model.cuda_graph_warmup_steps",
    "ddp.data_parallel_sharding_strategy",
    // Overwritten by the mixed precision's (Bridge's
    // MixedPrecisionConfig.setup copies its fields over the
    // model's, optimizer's and DDP's).
    "ddp.grad_reduce_in_fp32", "model.params_dtype", "model.pipeline_dtype",
    // The generator's step to the layout it builds.
    "model._pipeline_model_parallel_layout_builder"};

bool ignored_field(const std::string& key) {
  if (kIgnored.count(key)) return true;
  return std::any_of(kIgnoredSections.begin(), kIgnoredSections.end(),
                     [&](const std::string& s) { return key.rfind(s, 0) == 0; });
}

// The fields priced at their defaults only, each refused at its place when set otherwise.
void refuse_off_default(const std::map<std::string, BridgeValue>& fields, const std::string& source,
                        Refusals& refused) {
  for (const auto& [key, rule] : kAtDefault) {
    const auto it = fields.find(key);
    if (it == fields.end()) continue;
    const std::string& value = it->second.text;
    if (std::find(rule.allowed.begin(), rule.allowed.end(), value) != rule.allowed.end()) continue;
    const std::string place = fmt::format("{}:{}", source, it->second.line);
    if (value == "?")
      refused.add_at(place, fmt::format("{}: set by an expression: {}", key, rule.why));
    else if (rule.allowed.empty())
      refused.add_at(place, fmt::format("{}={}: {}", key, value, rule.why));
    else
      refused.add_at(place, fmt::format("{}={}: {}; expected {}", key, value, rule.why,
                                        fmt::join(rule.allowed, " or ")));
  }
}

// A named recipe's values under the launch's overrides: the fields read, the recipe's tensor
// overlap (CommOverlapConfig sets the model's), each value it sets by an expression the
// generator did not follow refused unless overridden, and the model's shape not overridable.
std::map<std::string, BridgeValue> recipe_fields(const BridgeRecipe& r,
                                                 std::map<std::string, BridgeValue> user,
                                                 const std::string& source, int line,
                                                 Refusals& refused, LaunchConfig& out) {
  std::map<std::string, BridgeValue> merged;
  bool overlap_config = false;
  for (const auto& [key, value] : r.values) {
    if (key == "comm_overlap") overlap_config = value == "set";
    const std::string& read = key;
    if (!kRead.count(read) && !kAtDefault.count(read) &&
        read != "tokenizer.use_tokenizer_vocab_size" && read != "comm_overlap.tp_comm_overlap") {
      if (read != "comm_overlap" && !ignored_field(read))  // comm_overlap: the marker read above
        refused.add_at(
            fmt::format("{}:{}", source, line),
            fmt::format("{}: set by the recipe {}, a field paraplan does not read", read, r.name));
      continue;
    }
    if (key == "comm_overlap.tp_comm_overlap" && !overlap_config) continue;
    if (value == "?" && !user.count(read) && !kAtDefault.count(read)) {
      refused.add_at(fmt::format("{}:{}", source, line),
                     fmt::format("{}: the recipe {} sets it by an expression paraplan "
                                 "does not follow; give {}=VALUE",
                                 read, r.name, read));
      continue;
    }
    merged[read] = {value, line};
  }
  for (auto& [key, value] : user) {
    if (kShapeFields.count(key)) {
      refused.add_at(
          fmt::format("{}:{}", source, value.line),
          fmt::format("{}: the recipe {} builds its model from {}'s Hugging Face config, which "
                      "paraplan reads as it is; for another shape use the vanilla GPT recipe ({})",
                      key, r.name, r.hf_id, kMegatronBridgeRecipe));
      continue;
    }
    merged[key] = value;
  }
  if (overlap_config) merged["comm_overlap"] = {"set", line};
  out.read.insert(out.read.begin(), "--recipe " + r.name);
  return merged;
}

}  // namespace

BridgeFieldUse megatron_bridge_field_use(const std::string& key) {
  if (kRead.count(key) || key == "tokenizer.use_tokenizer_vocab_size" || key == "comm_overlap" ||
      key == "comm_overlap.tp_comm_overlap")
    return BridgeFieldUse::kRead;
  if (kAtDefault.count(key)) return BridgeFieldUse::kAtDefault;
  if (ignored_field(key)) return BridgeFieldUse::kIgnored;
  return BridgeFieldUse::kUnknown;
}

LaunchConfig read_megatron_bridge_launch(const std::string& text, const std::string& source) {
  const auto launch = launch_command(text, source);
  if (!launch)
    throw Error(ErrorKind::kUsage, source,
                "no launch found (expected torchrun or python running scripts/training/"
                "run_recipe.py)");
  const std::vector<ShellWord>& words = launch->words;
  std::size_t script = words.size();
  for (std::size_t j = 0; j < words.size(); ++j)
    if (words[j].text.size() >= 13 &&
        words[j].text.compare(words[j].text.size() - 13, 13, "run_recipe.py") == 0) {
      script = j;
      break;
    }
  if (script == words.size())
    throw Error(ErrorKind::kUsage, source,
                "the launch does not run Megatron-Bridge's scripts/training/run_recipe.py");
  LaunchConfig out;
  out.format = kEngine;
  out.source = source;
  for (std::size_t j = 0; j < script; ++j)
    if (words[j].text.find('=') != std::string::npos && words[j].text.rfind("--", 0) != 0)
      out.environment.push_back(words[j].text);
  out.world_size = launcher_world_size(words, 0, script, source);
  std::map<std::string, BridgeValue> fields;
  Refusals refused(source, "overrides or options");  // every one, reported at once
  std::string recipe;
  int recipe_line = words[script].line;
  for (std::size_t i = script + 1; i < words.size(); ++i) {
    const std::string& w = words[i].text;
    const int line = words[i].line;
    auto value_of = [&](const std::string& option) {
      if (i + 1 >= words.size())
        throw Error(ErrorKind::kUsage, fmt::format("{}:{}", source, line),
                    option + " needs a value");
      return words[++i].text;
    };
    if (w == "--recipe" || w == "--model") {
      recipe = (w == "--model" ? "model " : "") + value_of(w);
      recipe_line = line;
    } else if (kConvenience.count(w)) {
      fields[kConvenience.at(w)] = {value_of(w), line};
    } else if (kRunnerValued.count(w)) {
      out.ignored.push_back(w);
      value_of(w);
    } else if (kRunnerSwitches.count(w)) {
      out.ignored.push_back(w);
    } else if (w.rfind("-", 0) == 0) {
      refused.add_at(
          fmt::format("{}:{}", source, line),
          fmt::format("{}: not an option of run_recipe.py ({})", w, kMegatronBridgeCommit));
    } else if (const std::size_t eq = w.find('='); eq != std::string::npos && eq > 0) {
      std::string key = w.substr(0, eq);
      key.erase(0, key.find_first_not_of("+~"));
      if (kRead.count(key) || kAtDefault.count(key)) {
        fields[key] = {w.substr(eq + 1), line};
        out.read.push_back(key);
      } else if (ignored_field(key)) {
        out.ignored.push_back(key);
      } else {
        refused.add_at(fmt::format("{}:{}", source, line),
                       fmt::format("{}: paraplan does not read it (it changes time, memory or "
                                   "the model in a way paraplan does not price, or it is not a "
                                   "field of Megatron-Bridge's ConfigContainer)",
                                   key));
      }
    } else {
      refused.add_at(fmt::format("{}:{}", source, line),
                     fmt::format("\"{}\": expected section.field=value or an option", w));
    }
  }
  const bool vanilla = recipe == kMegatronBridgeRecipe || recipe == "model vanilla_gpt";
  const BridgeRecipe* named = nullptr;
  if (!vanilla) {
    const std::string name =
        recipe.rfind("model ", 0) == 0 ? recipe.substr(6) + "_pretrain_config" : recipe;
    named = find_megatron_bridge_recipe(name);
    if (named)
      fields = recipe_fields(*named, std::move(fields), source, recipe_line, refused, out);
    else
      refused.add_at(fmt::format("{}:{}", source, recipe_line),
                     fmt::format("{}: not a pretraining recipe of Megatron-Bridge {} "
                                 "paraplan knows (its GPT recipe {} with the model as overrides, "
                                 "and NVIDIA's recipes whose functions set constants)",
                                 recipe.empty() ? "no --recipe" : "--recipe " + recipe,
                                 kMegatronBridgeCommit, kMegatronBridgeRecipe),
                     true);
  }
  if (!vanilla && named == nullptr) refused.raise();  // the recipe unknown: the rest is moot
  refuse_off_default(fields, source, refused);
  const BridgeFields f(std::move(fields), source, refused);
  if (named) {
    // The recipe's model is its Hugging Face config's (the api knows it by that id, or asks
    // for its shape); its vocabulary the tokenizer's where the recipe sizes it so.
    out.model_name = named->hf_id;
    const bool by_tokenizer =
        f.boolean("tokenizer.use_tokenizer_vocab_size", false) || f.has("tokenizer.vocab_size");
    if (by_tokenizer && f.text("tokenizer.tokenizer_type", "") == "NullTokenizer")
      out.vocab_size = f.integer("tokenizer.vocab_size", 32000);
    out.vocab_multiple = static_cast<int>(f.integer("model.make_vocab_size_divisible_by", 128));
  } else {
    out.model = bridge_model(f, out);
  }
  out.training = bridge_training(f, out, named ? 0.0 : 0.1);
  refused.raise();  // the overrides refused, and the values
  return out;
}

}  // namespace paraplan::engines
