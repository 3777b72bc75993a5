// Keys, defaults and the stage split: torchtitan torchtitan/config/job_config.py and
// torchtitan/distributed/pipeline_parallel.py at 238fa99 (2026-02-23, the last TOML version).
#include "engines/torchtitan_config.h"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>
#include <set>

#include "engines/engine_export.h"
#include "engines/keyed_config.h"
#include "engines/torchtitan_flavors.h"
#include "engines/torchtitan_recipe.h"
#include "ir/engine_rules.h"
#include "ir/error.h"

namespace paraplan::engines {

using io::Json;
namespace {

const std::set<std::string> kSectionsRead = {
    "model",   "training",  "parallelism", "activation_checkpoint",
    "compile", "optimizer", "quantize"};
const std::set<std::string> kSectionsIgnored = {
    "job",  "profiling",         "metrics",         "lr_scheduler", "checkpoint", "validation",
    "comm", "memory_estimation", "fault_tolerance", "experimental", "debug"};
const std::set<std::string> kModelRead = {"name", "flavor", "converters"};
const std::set<std::string> kModelIgnored = {"hf_assets_path", "tokenizer_path",
                                             "print_after_conversion"};
const std::set<std::string> kTrainingRead = {
    "local_batch_size",      "global_batch_size",      "seq_len",           "dtype", "batch_size",
    "mixed_precision_param", "mixed_precision_reduce", "enable_cpu_offload"};
const std::set<std::string> kTrainingIgnored = {"dataset",
                                                "dataset_path",
                                                "max_norm",
                                                "steps",
                                                "gc_freq",
                                                "gc_debug",
                                                "seed",
                                                "deterministic",
                                                "dataloader",
                                                "warmup_steps",
                                                "debug_moe_force_load_balance"};
const std::set<std::string> kParallelismRead = {"data_parallel_replicate_degree",
                                                "data_parallel_shard_degree",
                                                "fsdp_reshard_after_forward",
                                                "tensor_parallel_degree",
                                                "enable_async_tensor_parallel",
                                                "pipeline_parallel_degree",
                                                "module_fqns_per_model_part",
                                                "pipeline_parallel_first_stage_less_layers",
                                                "pipeline_parallel_last_stage_less_layers",
                                                "pipeline_parallel_layers_per_stage",
                                                "pipeline_parallel_schedule",
                                                "pipeline_parallel_schedule_csv",
                                                "pipeline_parallel_microbatch_size",
                                                "pipeline_parallel_split_points",
                                                "context_parallel_degree",
                                                "expert_parallel_degree",
                                                "expert_tensor_parallel_degree",
                                                "expert_parallel_comm_backend",
                                                "enable_compiled_autograd"};
const std::set<std::string> kParallelismIgnored = {
    "disable_loss_parallel", "context_parallel_rotate_method", "context_parallel_load_balancer",
    "pipeline_parallel_expert_parallel_overlap"};
const std::set<std::string> kAcRead = {"mode", "selective_ac_option", "memory_budget"};
const std::set<std::string> kAcIgnored = {"per_op_sac_force_recompute_mm_shapes_by_fqns",
                                          "early_stop",
                                          "visualize_memory_budget_pareto",
                                          "preserve_rng_state",
                                          "determinism_check",
                                          "debug"};
const std::set<std::string> kCompileRead = {"enable", "components"};
// quantize.linear.float8 (Float8Linear); MX and the grouped GEMMs' settings matter only with
// their converters, which model.converters refuses.
const std::set<std::string> kQuantizeRead = {"linear"}, kQuantizeIgnored = {"grouped_mm"};
const std::set<std::string> kLinearRead = {"float8"}, kLinearIgnored = {"mx"};
const std::set<std::string> kFloat8Read = {"enable_fsdp_float8_all_gather", "recipe_name",
                                           "filter_fqns", "emulate"};
const std::set<std::string> kFloat8Ignored = {"precompute_float8_dynamic_scale_for_fsdp"};
const std::set<std::string> kCompileIgnored = {"backend"};
const std::set<std::string> kOptimizerRead = {"name", "early_step_in_backward"};
const std::set<std::string> kOptimizerIgnored = {"lr",    "eps",   "weight_decay",
                                                 "beta1", "beta2", "implementation"};

// Our zoo's models as torchtitan names them (torchtitan/models/llama3/__init__.py).
Json to_json(const toml::node& node) {
  if (const toml::table* t = node.as_table()) {
    Json out = Json::object();
    for (const auto& [key, value] : *t) out[std::string(key.str())] = to_json(value);
    return out;
  }
  if (const toml::array* a = node.as_array()) {
    Json out = Json::array();
    for (const toml::node& value : *a) out.push_back(to_json(value));
    return out;
  }
  if (auto v = node.value_exact<std::string>()) return *v;
  if (auto v = node.value_exact<std::int64_t>()) return *v;
  if (auto v = node.value_exact<double>()) return *v;
  if (auto v = node.value_exact<bool>()) return *v;
  std::string text;  // dates and times: no effect on time or memory
  if (auto v = node.value<std::string>()) text = *v;
  return text;
}

std::vector<std::string> strings(const KeyedConfig& c, const std::string& key) {
  std::vector<std::string> out;
  const Json v = c.get(key);
  if (v.is_null()) return out;
  if (!v.is_array() ||
      !std::all_of(v.begin(), v.end(), [](const Json& s) { return s.is_string(); })) {
    c.refuse(key, "expected a list of strings");
    return out;
  }
  for (const Json& s : v) out.push_back(s.get<std::string>());
  return out;
}

void read_model(const KeyedConfig& c, LaunchConfig& out) {
  const std::string name = c.text("model.name", "llama3"), flavor = c.text("model.flavor", "");
  bool known = false;
  if (const TorchtitanFlavor* f = find_torchtitan_flavor(name, flavor)) {
    known = true;
    if (f->builtin != nullptr) {
      out.model_name = f->builtin;
    } else {
      out.model = torchtitan_flavor_model(*f);
      out.model_from_engine = true;
    }
  }
  if (!known) out.model_unknown = fmt::format("torchtitan's {} flavor \"{}\"", name, flavor);
  for (const std::string& converter : strings(c, "model.converters")) {
    if (converter == "float8" || converter == "quantize.linear.float8")
      out.training.fp8 = true;
    else
      c.refuse(
          "model.converters",
          fmt::format("\"{}\" is not priced (paraplan prices float8 linear layers)", converter));
  }
}

// torchao's float8 linear layers as torchtitan configures them: tensorwise or rowwise scaling
// (the same bytes and FP8 rate), the FSDP all-gather of float8 weights (tensorwise only, as
// torchao has it); a weight gradient in high precision, emulation and layers left out (but the
// LM head and the MoE router, priced in bf16 anyway) are not priced. Without the float8
// converter the section is inert, as torchtitan leaves it.
void read_float8(const KeyedConfig& c, TrainingConfig& t) {
  if (!t.fp8) return;
  const std::string recipe = c.text("quantize.linear.float8.recipe_name", "tensorwise");
  if (recipe != "tensorwise" && recipe != "rowwise")
    c.refuse("quantize.linear.float8.recipe_name",
             fmt::format("\"{}\" is not priced; expected tensorwise or rowwise", recipe));
  if (c.boolean("quantize.linear.float8.emulate", false))
    c.refuse("quantize.linear.float8.emulate", "emulated FP8 is not priced; expected false");
  for (const std::string& fqn : strings(c, "quantize.linear.float8.filter_fqns"))
    if (fqn != "output" && fqn != "router.gate")
      c.refuse("quantize.linear.float8.filter_fqns",
               fmt::format("\"{}\": layers kept in bf16 are not priced; expected output or "
                           "router.gate (the LM head and the MoE router, in bf16 anyway)",
                           fqn));
  t.fp8_param_gather = c.boolean("quantize.linear.float8.enable_fsdp_float8_all_gather", false);
  if (t.fp8_param_gather && recipe != "tensorwise")
    c.refuse("quantize.linear.float8.enable_fsdp_float8_all_gather",
             "gathers float8 weights with tensorwise scaling only (torchao); expected false with "
             "rowwise");
}

void read_precision(const KeyedConfig& c, TrainingConfig& t) {
  if (c.boolean("training.enable_cpu_offload", false))
    c.refuse("training.enable_cpu_offload", "offloading to the CPU is not priced; expected false");
  if (c.text("training.mixed_precision_param", "bfloat16") != "bfloat16")
    c.refuse("training.mixed_precision_param", "paraplan prices bf16 training; expected bfloat16");
  if (c.text("training.mixed_precision_reduce", "float32") != "float32")
    c.refuse("training.mixed_precision_reduce", "expected float32");
  const std::string dtype = c.text("training.dtype", "float32");
  if (dtype != "float32" && dtype != "bfloat16")
    c.refuse("training.dtype", "expected float32 (mixed precision) or bfloat16 (pure bf16)");
  // Pure bf16: parameters, gradients and their reduction in bf16, the loss on bf16 logits.
  t.bf16_gradient_reduction = dtype == "bfloat16";
  t.fp32_loss = dtype != "bfloat16";
  const std::string optimizer = c.text("optimizer.name", "AdamW");
  if (optimizer != "AdamW" && optimizer != "Adam")
    c.refuse("optimizer.name", fmt::format("paraplan prices Adam's state; expected AdamW or Adam, "
                                           "got \"{}\"",
                                           optimizer));
  if (c.boolean("optimizer.early_step_in_backward", false))
    c.refuse("optimizer.early_step_in_backward", "is not priced; expected false");
}

void read_parallelism(const KeyedConfig& c, LaunchConfig& out) {
  TrainingConfig& t = out.training;
  TorchtitanChoices& tt = *out.torchtitan;
  tt.dp_replicate = static_cast<int>(c.integer("parallelism.data_parallel_replicate_degree", 1, 1));
  tt.dp_shard = static_cast<int>(c.integer("parallelism.data_parallel_shard_degree", -1, -1));
  if (tt.dp_shard == 0) c.refuse("parallelism.data_parallel_shard_degree", "expected -1 or >= 1");
  tt.reshard = c.text("parallelism.fsdp_reshard_after_forward", "default");
  if (tt.reshard != "default" && tt.reshard != "always" && tt.reshard != "never")
    c.refuse("parallelism.fsdp_reshard_after_forward", "expected default, always or never");
  t.tp = static_cast<int>(c.integer("parallelism.tensor_parallel_degree", 1, 1));
  t.pp = static_cast<int>(c.integer("parallelism.pipeline_parallel_degree", 1, 1));
  t.cp = static_cast<int>(c.integer("parallelism.context_parallel_degree", 1, 1));
  t.ep = static_cast<int>(c.integer("parallelism.expert_parallel_degree", 1, 1));
  // Async tensor parallelism: the TP all-gathers and reduce-scatters pipelined with the
  // matrix products (SymmetricMemory), priced as Megatron's overlap of the same collectives.
  t.tp_comm_overlap = c.boolean("parallelism.enable_async_tensor_parallel", false);
  if (t.tp_comm_overlap && t.tp < 2)
    c.refuse("parallelism.enable_async_tensor_parallel", "needs tensor_parallel_degree 2 or more");
  if (c.boolean("parallelism.enable_compiled_autograd", false))
    c.refuse("parallelism.enable_compiled_autograd", "is not priced; expected false");
  const std::int64_t etp = c.integer("parallelism.expert_tensor_parallel_degree", 1, 1);
  if (etp != 1 && etp != t.tp)
    c.refuse("parallelism.expert_tensor_parallel_degree",
             "paraplan prices experts whole or split as the dense layers");
  if (c.text("parallelism.expert_parallel_comm_backend", "standard") != "standard")
    c.refuse("parallelism.expert_parallel_comm_backend", "is not priced; expected standard");
  for (const char* refused :
       {"parallelism.pipeline_parallel_schedule_csv", "parallelism.pipeline_parallel_split_points"})
    if (c.has(refused) && !(c.get(refused).is_string() && c.text(refused, "").empty()) &&
        !(c.get(refused).is_array() && c.get(refused).empty()))
      c.refuse(refused, "is not priced; give module_fqns_per_model_part");
  tt.pp_microbatch = c.integer("parallelism.pipeline_parallel_microbatch_size", 1, 1);
  const std::string schedule = c.text("parallelism.pipeline_parallel_schedule", "1F1B");
  if (schedule == "Interleaved1F1B")
    tt.stages_per_rank = 2;
  else if (schedule != "1F1B")
    c.refuse("parallelism.pipeline_parallel_schedule",
             fmt::format("paraplan prices 1F1B and Interleaved1F1B, not \"{}\"", schedule));
  tt.layers_per_stage =
      static_cast<int>(c.integer("parallelism.pipeline_parallel_layers_per_stage", 0, 1));
  tt.first_less =
      static_cast<int>(c.integer("parallelism.pipeline_parallel_first_stage_less_layers", 1, 0));
  tt.last_less =
      static_cast<int>(c.integer("parallelism.pipeline_parallel_last_stage_less_layers", 1, 0));
  const Json parts = c.get("parallelism.module_fqns_per_model_part");
  if (!parts.is_null()) {
    const bool lists = parts.is_array() && std::all_of(parts.begin(), parts.end(),
                                                       [](const Json& p) { return p.is_array(); });
    if (!lists) c.refuse("parallelism.module_fqns_per_model_part", "expected lists");
    for (const Json& part : lists ? parts : Json::array()) {
      int layers = 0;
      for (const Json& fqn : part)
        if (fqn.is_string() && fqn.get<std::string>().rfind("layers.", 0) == 0) ++layers;
      tt.parts.push_back(layers);
    }
    if (lists && (tt.parts.empty() || tt.parts.size() % static_cast<std::size_t>(t.pp)))
      c.refuse("parallelism.module_fqns_per_model_part",
               fmt::format("{} model parts are not a multiple of {} pipeline ranks",
                           tt.parts.size(), t.pp));
  }
  // torchtitan's tensor parallelism shards the norms' and the residual's sequence too.
  t.sequence_parallel = true;
  // With every degree given, they say the world size.
  if (tt.dp_shard > 0) out.world_size = tt.dp_replicate * tt.dp_shard * t.tp * t.pp * t.cp;
}

void read_checkpointing(const KeyedConfig& c, LaunchConfig& out) {
  TrainingConfig& t = out.training;
  const std::string mode = c.text("activation_checkpoint.mode", "selective");
  t.recompute_layers = 0;
  if (mode == "none") {
    t.recompute = Recompute::kNone;
  } else if (mode == "full") {
    t.recompute = Recompute::kFull;
  } else if (mode == "selective") {
    const std::string option = c.text("activation_checkpoint.selective_ac_option", "2");
    const bool digits =
        !option.empty() && option.size() < 6 &&
        std::all_of(option.begin(), option.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
    if (option == "op") {
      t.recompute = Recompute::kSelective;  // the cheap operations again, the matmuls kept
    } else if (digits) {
      out.torchtitan->ac_every = std::stoi(option);
      t.recompute = out.torchtitan->ac_every > 0 ? Recompute::kFull : Recompute::kNone;
    } else {
      c.refuse("activation_checkpoint.selective_ac_option",
               fmt::format("expected \"op\" or a layer frequency, got \"{}\"", option));
    }
  } else {
    c.refuse("activation_checkpoint.mode",
             fmt::format("paraplan prices none, selective and full, not \"{}\"", mode));
  }
  const bool compile = c.boolean("compile.enable", false);
  const std::vector<std::string> parts = strings(c, "compile.components");
  t.fused_elementwise =
      compile && (parts.empty() || std::find(parts.begin(), parts.end(), "model") != parts.end());
}

}  // namespace

LaunchConfig read_torchtitan_config(const std::string& text, const std::string& source) {
  Json root;
  try {
    root = to_json(toml::parse(text, source));
  } catch (const toml::parse_error& e) {
    throw Error(ErrorKind::kUsage, fmt::format("{}:{}", source, e.source().begin.line),
                std::string(e.description()));
  }
  const KeyedConfig c(root, source, "a torchtitan job");
  LaunchConfig out;
  out.format = "torchtitan";
  out.source = source;
  out.torchtitan.emplace();
  c.classify("", kSectionsRead, kSectionsIgnored, out);
  c.classify("model", kModelRead, kModelIgnored, out);
  c.classify("training", kTrainingRead, kTrainingIgnored, out);
  c.classify("parallelism", kParallelismRead, kParallelismIgnored, out);
  c.classify("activation_checkpoint", kAcRead, kAcIgnored, out);
  c.classify("compile", kCompileRead, kCompileIgnored, out);
  c.classify("quantize", kQuantizeRead, kQuantizeIgnored, out);
  c.classify("quantize.linear", kLinearRead, kLinearIgnored, out);
  c.classify("quantize.linear.float8", kFloat8Read, kFloat8Ignored, out);
  c.classify("optimizer", kOptimizerRead, kOptimizerIgnored, out);
  TrainingConfig& t = out.training;
  t.stack = Stack::kFsdp;
  t.dp = 0;
  t.dropout = false;             // torchtitan's models have no dropout
  t.overlap_grad_reduce = true;  // FSDP's reduce-scatter and DDP's all-reduce overlap the backward
  read_model(c, out);
  read_precision(c, t);
  read_float8(c, t);
  read_parallelism(c, out);
  read_checkpointing(c, out);
  TorchtitanChoices& tt = *out.torchtitan;
  tt.local_batch =
      c.integer("training.local_batch_size", c.integer("training.batch_size", 8, 1), 1);
  tt.global_batch = c.integer("training.global_batch_size", -1, -1);
  if (tt.global_batch == 0) c.refuse("training.global_batch_size", "expected -1 or >= 1");
  t.seq_len = c.integer("training.seq_len", 2048, 1);
  c.done();  // every refusal at once
  return out;
}

std::vector<int> torchtitan_split(std::int64_t layers, int stages, int first_less, int last_less) {
  if (stages == 1) return {static_cast<int>(layers)};
  const std::int64_t effective = layers + first_less + last_less;
  std::vector<int> out;
  std::int64_t left = layers;
  for (int i = 0; i < stages; ++i) {
    std::int64_t n = effective / stages + (i < effective % stages ? 1 : 0);
    if (i == 0) n -= first_less;
    if (i == stages - 1) n -= last_less;
    n = std::clamp<std::int64_t>(n, 0, left);
    out.push_back(static_cast<int>(n));
    left -= n;
  }
  return out;
}

std::pair<int, int> torchtitan_degrees(const TrainingConfig& t) {
  if (t.zero_stage < 2) return {t.dp, 1};
  if (t.shard_group == 0 || t.shard_group == t.dp * t.cp) return {1, t.dp};
  const int shard = t.shard_group / t.cp;  // torchtitan's FSDP mesh is shard × cp
  return {t.dp / shard, shard};
}

TrainingConfig complete_torchtitan(const LaunchConfig& launch, std::int64_t layers, int world) {
  const TorchtitanChoices& tt = *launch.torchtitan;
  TrainingConfig t = launch.training;
  auto fail = [&](const std::string& key, const std::string& message) {
    throw Error(ErrorKind::kUsage, fmt::format("{}: {}", launch.source, key), message);
  };
  const int inner = t.tp * t.pp * t.cp * tt.dp_replicate;
  if (world % inner)
    fail("parallelism", fmt::format("replicate × tensor × pipeline × context = {} does not divide "
                                    "the world size {}",
                                    inner, world));
  const int shard = tt.dp_shard > 0 ? tt.dp_shard : world / inner;
  if (inner * shard != world)
    fail("parallelism",
         fmt::format("the degrees multiply to {}, not the world size {}", inner * shard, world));
  t.dp = tt.dp_replicate * shard;
  t.zero_stage = 0;
  if (shard > 1)  // "default" reshards after the forward unless pipelined
    t.zero_stage = tt.reshard == "never" || (tt.reshard == "default" && t.pp > 1) ? 2 : 3;
  if (tt.dp_replicate > 1 && shard > 1) {  // HSDP: FSDP over shard × cp, replicated
    if (t.zero_stage != 3)
      fail("parallelism.fsdp_reshard_after_forward",
           "HSDP without resharding after the forward (ZeRO 2 over replicated groups) is not "
           "priced; reshard (\"always\") or shard over every data-parallel rank");
    t.shard_group = shard * t.cp;
  }
  // The batch: local per data-parallel rank; micro-batches of the pipeline, or the local batch.
  const std::int64_t global = tt.global_batch > 0 ? tt.global_batch : tt.local_batch * t.dp;
  t.micro_batch = t.pp > 1 ? tt.pp_microbatch : tt.local_batch;
  if (t.pp > 1 && tt.local_batch % tt.pp_microbatch)
    fail("parallelism.pipeline_parallel_microbatch_size",
         fmt::format("{} does not divide training.local_batch_size {}", tt.pp_microbatch,
                     tt.local_batch));
  if (global % (tt.local_batch * t.dp)) {
    if (launch.format == kTorchtitanRecipe)  // the batch in tokens (torchtitan b5bcd76)
      fail("training.num_tokens_per_train_step",
           fmt::format("{} tokens are not a multiple of num_tokens_per_microbatch_per_dp_rank "
                       "× num_pp_microbatches × data-parallel ranks = {} × {} × {}",
                       global * t.seq_len, tt.pp_microbatch * t.seq_len,
                       tt.local_batch / tt.pp_microbatch, t.dp));
    fail("training.global_batch_size",
         fmt::format("{} is not a multiple of local_batch_size × data-parallel ranks = {} × {}",
                     global, tt.local_batch, t.dp));
  }
  t.global_batch = global;
  // The stages: the model parts given, or torchtitan's split.
  std::vector<int> stages = tt.parts;
  if (stages.empty() && t.pp > 1) {
    int count = t.pp * tt.stages_per_rank;
    if (tt.layers_per_stage > 0)
      count = static_cast<int>((layers + tt.first_less + tt.last_less + tt.layers_per_stage - 1) /
                               tt.layers_per_stage);
    if (count % t.pp)
      fail("parallelism.pipeline_parallel_layers_per_stage",
           fmt::format("{} stages are not a multiple of {} pipeline ranks", count, t.pp));
    stages = torchtitan_split(layers, count, tt.first_less, tt.last_less);
  }
  if (!stages.empty()) {
    std::int64_t sum = 0;
    for (int n : stages) sum += n;
    if (sum != layers)
      fail("parallelism.module_fqns_per_model_part",
           fmt::format("the parts hold {} layers, the model {}", sum, layers));
    t.vpp = static_cast<int>(stages.size()) / t.pp;
    if (t.vpp == 1) {
      t.stage_layers = stages;
    } else if (!std::all_of(stages.begin(), stages.end(), [&](int n) { return n == stages[0]; })) {
      // Interleaved (a loop schedule): rank r runs stages r, r + pp, ...; its layers and, unless
      // they are the default split of those, each stage's.
      t.stage_layers.assign(static_cast<std::size_t>(t.pp), 0);
      for (std::size_t i = 0; i < stages.size(); ++i)
        t.stage_layers[i % static_cast<std::size_t>(t.pp)] += stages[i];
      if (virtual_split(t, static_cast<int>(layers)) != stages) t.virtual_stage_layers = stages;
    }
  }
  // Selective AC of every N-th layer: each rank counts its own layers.
  if (tt.ac_every > 0) {
    const std::int64_t per_rank =
        stages.empty()           ? layers
        : t.stage_layers.empty() ? *std::max_element(stages.begin(), stages.end()) * t.vpp
                                 : *std::max_element(t.stage_layers.begin(), t.stage_layers.end());
    const std::int64_t recomputed = per_rank / tt.ac_every;
    t.recompute = recomputed > 0 ? Recompute::kFull : Recompute::kNone;
    t.recompute_layers = recomputed >= per_rank ? 0 : static_cast<int>(recomputed);
  }
  return t;
}

std::string torchtitan_parts_lines(const std::vector<int>& stages, const std::string& output,
                                   const std::string& indent) {
  std::string out;
  std::int64_t next = 0;
  for (std::size_t i = 0; i < stages.size(); ++i) {
    std::vector<std::string> names;
    if (i == 0) names.emplace_back("\"tok_embeddings\"");
    for (int k = 0; k < stages[i]; ++k) names.push_back(fmt::format("\"layers.{}\"", next++));
    if (i + 1 == stages.size()) {
      names.emplace_back("\"norm\"");
      names.push_back("\"" + output + "\"");
    }
    out += indent + "[";
    for (std::size_t k = 0; k < names.size(); ++k) out += (k ? ", " : "") + names[k];
    out += "],\n";
  }
  return out;
}

std::string torchtitan_config(const TransformerConfig& model, const TrainingConfig& t) {
  auto refuse = [](const std::string& why) { throw FieldError("export", " torchtitan: " + why); };
  // What torchtitan does not run: its rules (ir/engine_rules.h), the ones the search keeps to.
  if (const auto v =
          rules::engine(engine_rules(Engine::kTorchtitan), t, static_cast<int>(model.num_layers)))
    throw RuleViolation(*v);
  // torchtitan builds a model by its name and flavor; with neither it trains its debug model.
  const TorchtitanFlavor* flavor = torchtitan_flavor_of(model);
  if (flavor == nullptr)
    refuse(fmt::format(
        "{} is none of the torchtitan models paraplan writes (llama3 8B, 70B, 405B and its "
        "debug model, deepseek_v3's 16B and debug model, qwen3 0.6B to 32B and 30B-A3B: "
        "torchtitan 238fa99 builds a model by name and flavor, and without one trains its "
        "debug model); export it for megatron",
        model.name));
  if (t.zero_stage > 0 && t.dp == 1) refuse("ZeRO needs data-parallel ranks to shard over");
  if (!t.fp32_loss && !t.bf16_gradient_reduction)
    refuse("a bf16 loss comes with bf16 gradients (training.dtype = \"bfloat16\")");
  std::vector<int> stages;
  if (t.pp > 1) stages = virtual_split(t, static_cast<int>(model.num_layers));
  std::string out;
  auto yes = [](bool b) { return std::string(b ? "true" : "false"); };
  out += fmt::format("# {} on {} GPUs as paraplan planned it (torchtitan)\n\n", model.name,
                     t.devices());
  out += "[model]\n";
  out += fmt::format("name = \"{}\"\nflavor = \"{}\"\n", flavor->name, flavor->flavor);
  // The converter as torchtitan 238fa99 registers it (ModelConvertersContainer: a KeyError for
  // "float8").
  if (t.fp8) out += "converters = [\"quantize.linear.float8\"]\n";
  if (t.fp8_param_gather)
    out +=
        "\n[quantize.linear.float8]\nenable_fsdp_float8_all_gather = true\n"
        "precompute_float8_dynamic_scale_for_fsdp = true\n";
  const auto [replicate, shard] = torchtitan_degrees(t);
  // One optimizer step per iteration: a pipeline takes all its micro-batches in one local
  // batch; without one, the local batch is the micro-batch and the rest is accumulation.
  const std::int64_t local = t.pp > 1 ? t.micro_batch * t.microbatches() : t.micro_batch;
  out += "\n[training]\n";
  out += fmt::format("local_batch_size = {}\nglobal_batch_size = {}\nseq_len = {}\n", local,
                     t.global_batch, t.seq_len);
  out += fmt::format("dtype = \"{}\"\nmixed_precision_param = \"bfloat16\"\n",
                     t.bf16_gradient_reduction && !t.fp32_loss ? "bfloat16" : "float32");
  out += "\n[parallelism]\n";
  out += fmt::format("data_parallel_replicate_degree = {}\ndata_parallel_shard_degree = {}\n",
                     replicate, shard);
  out +=
      fmt::format("fsdp_reshard_after_forward = \"{}\"\n", t.zero_stage == 2 ? "never" : "always");
  out += fmt::format("tensor_parallel_degree = {}\npipeline_parallel_degree = {}\n", t.tp, t.pp);
  if (t.tp_comm_overlap) out += "enable_async_tensor_parallel = true\n";
  out += fmt::format("context_parallel_degree = {}\nexpert_parallel_degree = {}\n", t.cp, t.ep);
  if (t.pp > 1) {
    out += fmt::format("pipeline_parallel_schedule = \"{}\"\n",
                       t.vpp > 1 ? "Interleaved1F1B" : "1F1B");
    out += fmt::format("pipeline_parallel_microbatch_size = {}\n", t.micro_batch);
    // The split as planned, one model part per (virtual) stage.
    out +=
        "module_fqns_per_model_part = [\n" + torchtitan_parts_lines(stages, "output", "  ") + "]\n";
  }
  out += "\n[activation_checkpoint]\n";
  if (t.recompute == Recompute::kNone) {
    out += "mode = \"none\"\n";
  } else if (t.recompute == Recompute::kSelective) {
    out += "mode = \"selective\"\nselective_ac_option = \"op\"\n";
  } else if (t.recompute_layers == 0) {
    out += "mode = \"full\"\n";
  } else {
    // Every N-th layer of a rank's layers: N with ⌊layers ÷ N⌋ the layers recomputed.
    const std::vector<int> split =
        t.pp > 1 ? stage_split(model, t) : std::vector<int>{static_cast<int>(model.num_layers)};
    const std::int64_t per_rank = *std::max_element(split.begin(), split.end());
    const std::int64_t every = per_rank / t.recompute_layers;
    if (every < 1 || per_rank / every != t.recompute_layers)
      refuse(fmt::format("no layer frequency recomputes {} of {} layers", t.recompute_layers,
                         per_rank));
    out += fmt::format("mode = \"selective\"\nselective_ac_option = \"{}\"\n", every);
  }
  out += fmt::format("\n[compile]\nenable = {}\ncomponents = [\"model\", \"loss\"]\n",
                     yes(t.fused_elementwise));
  return out;
}

std::vector<std::pair<std::string, std::string>> torchtitan_searched_options(
    const TrainingConfig& t) {
  auto num = [](auto v) { return fmt::format("{}", v); };
  std::vector<std::pair<std::string, std::string>> out;
  const auto [replicate, shard] = torchtitan_degrees(t);
  out.emplace_back(spelled(Knob::kZero, Engine::kTorchtitan), num(shard));
  out.emplace_back(spelled(Knob::kDp, Engine::kTorchtitan), num(replicate));
  out.emplace_back("parallelism.fsdp_reshard_after_forward",
                   t.zero_stage == 2 ? "\"never\"" : "\"always\"");
  out.emplace_back(spelled(Knob::kTp, Engine::kTorchtitan), num(t.tp));
  out.emplace_back(spelled(Knob::kPp, Engine::kTorchtitan), num(t.pp));
  out.emplace_back(spelled(Knob::kCp, Engine::kTorchtitan), num(t.cp));
  out.emplace_back(spelled(Knob::kEp, Engine::kTorchtitan), num(t.ep));
  if (t.pp > 1) {
    out.emplace_back(spelled(Knob::kVpp, Engine::kTorchtitan),
                     t.vpp > 1 ? "\"Interleaved1F1B\"" : "\"1F1B\"");
    out.emplace_back("parallelism.pipeline_parallel_microbatch_size", num(t.micro_batch));
  } else {
    out.emplace_back(spelled(Knob::kMicroBatch, Engine::kTorchtitan), num(t.micro_batch));
  }
  out.emplace_back(spelled(Knob::kRecompute, Engine::kTorchtitan),
                   t.recompute == Recompute::kNone                              ? "\"none\""
                   : t.recompute == Recompute::kFull && t.recompute_layers == 0 ? "\"full\""
                                                                                : "\"selective\"");
  return out;
}

}  // namespace paraplan::engines
