// torchtitan b5bcd76's configurations read back: a Python recipe (paraplan's export, or a user's
// function in the same style), the launch script that writes and runs one, or one of
// torchtitan's own configuration functions by name. The values a Trainer.Config ends with
// (engines/python_config, with torchtitan's functions from engines/torchtitan_registry) are
// mapped onto the same TorchtitanChoices the TOML reader fills, so complete_torchtitan resolves
// both alike.
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "engines/keyed_config.h"
#include "engines/python_config.h"
#include "engines/shell_script.h"
#include "engines/torchtitan_flavors.h"
#include "engines/torchtitan_recipe.h"
#include "engines/torchtitan_registry.h"
#include "ir/error.h"

namespace paraplan::engines {
namespace {

const std::set<std::string> kModules = {"llama3", "qwen3", "deepseek_v3"};

// What changes neither time nor memory, or is priced as the rest of the stack (with why).
const std::set<std::string> kRecipeTrainingIgnored = {"training.steps", "training.max_norm",
                                                      "training.gc_freq", "training.gc_debug"};
const std::set<std::string> kRecipeParallelismIgnored = {
    "parallelism.spmd_backend", "parallelism.context_parallel_load_balancer",
    "parallelism.context_parallel_ptrr_mask_key", "parallelism.enable_fsdp_symm_mem"};

std::optional<ConfigRows> registry_rows(const std::string& module, const std::string& function) {
  ConfigRows rows;
  for (const TorchtitanRegistryRow& r : torchtitan_registry_rows())
    if (module == r.module && function == r.function) rows[r.key] = Json::parse(r.value);
  if (rows.empty()) return std::nullopt;
  if (rows.count("model_spec") && rows["model_spec"].is_object())
    rows["model_spec"]["module"] = module;
  return rows;
}

// A dotted path naming one of torchtitan's configuration functions
// (torchtitan.models.llama3.config_registry.llama3_8b).
std::optional<ConfigRows> registry_path(const std::string& path) {
  const std::string prefix = "torchtitan.models.", middle = ".config_registry.";
  if (path.rfind(prefix, 0) != 0) return std::nullopt;
  const std::size_t m = path.find(middle);
  if (m == std::string::npos) return std::nullopt;
  return registry_rows(path.substr(prefix.size(), m - prefix.size()),
                       path.substr(m + middle.size()));
}

// The configuration's values, read by key; every refusal is kept (the read goes on with the
// default) and all are reported at once by done().
class Rows {
 public:
  Rows(ConfigRows rows, std::string source)
      : rows_(std::move(rows)), source_(std::move(source)), refusals_(source_) {}
  void fail(const std::string& key, const std::string& message) { refusals_.add(key, message); }
  const Json* get(const std::string& key) {
    const auto it = rows_.find(key);
    if (it == rows_.end()) return nullptr;
    read_.push_back(key);
    if (it->second == Json("?")) {
      fail(key, "set by an expression paraplan does not follow; write the value");
      return nullptr;
    }
    return &it->second;
  }
  std::int64_t integer(const std::string& key, std::int64_t fallback, std::int64_t min) {
    const Json* v = get(key);
    if (v == nullptr) return fallback;
    if (!v->is_number_integer() || v->get<std::int64_t>() < min) {
      fail(key, fmt::format("expected an integer of at least {}, got {}", min, shown(*v)));
      return fallback;
    }
    return v->get<std::int64_t>();
  }
  bool boolean(const std::string& key, bool fallback) {
    const Json* v = get(key);
    if (v == nullptr) return fallback;
    if (!v->is_boolean()) {
      fail(key, fmt::format("expected True or False, got {}", shown(*v)));
      return fallback;
    }
    return v->get<bool>();
  }
  std::string text(const std::string& key, const std::string& fallback) {
    const Json* v = get(key);
    if (v == nullptr || v->is_null()) return fallback;
    if (!v->is_string()) {
      fail(key, fmt::format("expected a string, got {}", shown(*v)));
      return fallback;
    }
    return v->get<std::string>();
  }
  // Every refusal, at once: one at its key, several listed.
  void done() const { refusals_.raise(); }
  // Every key not read: ignored by name, or refused when it is a field that matters.
  void classify(LaunchConfig& out) {
    for (const auto& [key, value] : rows_) {
      if (std::find(read_.begin(), read_.end(), key) != read_.end()) continue;
      const std::string section = key.substr(0, key.find('.'));
      if (value == Json("?") && (section == "training" || section == "parallelism" ||
                                 section == "compile" || section == "model_spec")) {
        fail(key, "set by an expression paraplan does not follow; write the value");
        continue;
      }
      const bool matters =
          section == "training" || section == "parallelism" || section == "compile";
      if (matters && !kRecipeTrainingIgnored.count(key) && !kRecipeParallelismIgnored.count(key)) {
        fail(key, "is not priced");
        continue;
      }
      out.ignored.push_back(key);
    }
    out.read.insert(out.read.end(), read_.begin(), read_.end());
  }

 private:
  ConfigRows rows_;
  std::string source_;
  std::vector<std::string> read_;
  Refusals refusals_;
};

void read_recipe_model(Rows& r, LaunchConfig& out) {
  const Json* spec = r.get("model_spec");
  if (spec == nullptr || !spec->is_object() || spec->value("class", "") != "model_registry") {
    r.fail("model_spec", "expected model_registry(FLAVOR, ...) of llama3, qwen3 or deepseek_v3");
    return;
  }
  const std::string module = spec->value("module", ""), flavor = spec->value("flavor", "?");
  if (const TorchtitanFlavor* f = find_torchtitan_flavor(module, flavor)) {
    if (f->builtin != nullptr) {
      out.model_name = f->builtin;
    } else {
      out.model = torchtitan_flavor_model(*f);
      out.model_from_engine = true;
    }
  } else {
    out.model_unknown = fmt::format("torchtitan's {} flavor \"{}\"", module, flavor);
  }
  for (const auto& [key, value] : spec->items()) {
    if (key == "attn_backend") {
      // FlexAttention's kernels: priced as the flash attention of the stack.
      if (!value.is_string() || (value != "flex" && value != "flex_flash" && value != "varlen"))
        r.fail("model_spec.attn_backend",
               fmt::format("expected flex, flex_flash or varlen, got {}", shown(value)));
    } else if (key == "converters") {
      if (!value.is_array()) {
        r.fail("model_spec.converters", "expected a list of converters");
        continue;
      }
      for (const Json& c : value) {
        const std::string cls = c.is_object() ? c.value("class", "?") : "?";
        if (cls != "Float8LinearConverter.Config") {
          r.fail("model_spec.converters",
                 fmt::format("{} is not priced (paraplan prices float8 linear layers: "
                             "Float8LinearConverter)",
                             cls));
          continue;
        }
        out.training.fp8 = true;
        if (c.value("emulate", false))
          r.fail("model_spec.converters", "emulated float8 is not priced; expected emulate=False");
        for (const Json& fqn : c.value("filter_fqns", Json::array()))
          if (fqn != "lm_head" && fqn != "router.gate" && fqn != "auto_filter_small_kn")
            r.fail("model_spec.converters",
                   fmt::format("filter_fqns {}: layers kept in bf16 are not priced; expected "
                               "lm_head or router.gate (in bf16 anyway)",
                               shown(fqn)));
      }
    } else if (key != "class" && key != "flavor" && key != "module" && key != "tp_gemm_backend") {
      r.fail("model_spec." + key, "is not priced");
    }
  }
}

void read_training(Rows& r, LaunchConfig& out) {
  TrainingConfig& t = out.training;
  TorchtitanChoices& tt = *out.torchtitan;
  if (r.boolean("training.enable_cpu_offload", false))
    r.fail("training.enable_cpu_offload", "offloading to the CPU is not priced; expected False");
  if (r.text("training.mixed_precision_param", "bfloat16") != "bfloat16")
    r.fail("training.mixed_precision_param", "paraplan prices bf16 training; expected bfloat16");
  if (r.text("training.mixed_precision_reduce", "float32") != "float32")
    r.fail("training.mixed_precision_reduce", "expected float32");
  const std::string dtype = r.text("training.dtype", "float32");
  if (dtype != "float32" && dtype != "bfloat16")
    r.fail("training.dtype", "expected float32 (mixed precision) or bfloat16 (pure bf16)");
  t.bf16_gradient_reduction = dtype == "bfloat16";
  t.fp32_loss = dtype != "bfloat16";
  r.boolean("training.disable_cuda_graphs", false);  // priced without CUDA graphs either way
  t.seq_len = r.integer("training.max_context_length", 2048, 1);
  const std::int64_t tokens = r.integer("training.num_tokens_per_microbatch_per_dp_rank", 16384, 1);
  if (tokens % t.seq_len || tokens < t.seq_len)
    r.fail("training.num_tokens_per_microbatch_per_dp_rank",
           fmt::format("{} tokens are not whole sequences of max_context_length {}", tokens,
                       t.seq_len));
  tt.pp_microbatch = std::max<std::int64_t>(1, tokens / t.seq_len);
  const std::int64_t step = r.integer("training.num_tokens_per_train_step", -1, -1);
  if (step == 0 || (step > 0 && step % t.seq_len))
    r.fail("training.num_tokens_per_train_step",
           fmt::format("expected -1 or whole sequences of max_context_length {}", t.seq_len));
  tt.global_batch = step > 0 ? step / t.seq_len : -1;
}

void read_recipe_parallelism(Rows& r, LaunchConfig& out) {
  TrainingConfig& t = out.training;
  TorchtitanChoices& tt = *out.torchtitan;
  tt.dp_replicate = static_cast<int>(r.integer("parallelism.data_parallel_replicate_degree", 1, 1));
  tt.dp_shard = static_cast<int>(r.integer("parallelism.data_parallel_shard_degree", -1, -1));
  if (tt.dp_shard == 0) {
    r.fail("parallelism.data_parallel_shard_degree", "expected -1 or >= 1");
    tt.dp_shard = -1;
  }
  tt.reshard = r.text("parallelism.fsdp_reshard_after_forward", "default");
  if (tt.reshard != "default" && tt.reshard != "always" && tt.reshard != "never")
    r.fail("parallelism.fsdp_reshard_after_forward", "expected default, always or never");
  t.tp = static_cast<int>(r.integer("parallelism.tensor_parallel_degree", 1, 1));
  t.pp = static_cast<int>(r.integer("parallelism.pipeline_parallel_degree", 1, 1));
  t.cp = static_cast<int>(r.integer("parallelism.context_parallel_degree", 1, 1));
  t.ep = static_cast<int>(r.integer("parallelism.expert_parallel_degree", 1, 1));
  if (!r.boolean("parallelism.enable_sequence_parallel", true) && t.tp > 1)
    r.fail("parallelism.enable_sequence_parallel",
           "tensor parallelism without sequence parallelism is not priced; expected True");
  t.sequence_parallel = true;
  if (!r.text("parallelism.pipeline_parallel_schedule_csv", "").empty())
    r.fail("parallelism.pipeline_parallel_schedule_csv", "is not priced; expected \"\"");
  const std::string schedule = r.text("parallelism.pipeline_parallel_schedule", "1F1B");
  if (schedule == "Interleaved1F1B")
    tt.stages_per_rank = 2;
  else if (schedule != "1F1B")
    r.fail("parallelism.pipeline_parallel_schedule",
           fmt::format("paraplan prices 1F1B and Interleaved1F1B, not \"{}\"", schedule));
  const std::int64_t pp_microbatches = r.integer("parallelism.num_pp_microbatches", 1, 1);
  // One forward per micro-batch of tokens; a pipeline takes num_pp_microbatches of them per
  // accumulation step (as 238fa99's local batch over its pipeline micro-batch size).
  tt.local_batch = tt.pp_microbatch * (t.pp > 1 ? pp_microbatches : 1);
  const Json* lps = r.get("parallelism.pipeline_parallel_layers_per_stage");
  if (lps != nullptr && !lps->is_null()) {
    if (!lps->is_number_integer() || lps->get<std::int64_t>() < 1 ||
        lps->get<std::int64_t>() > (1 << 20))
      r.fail("parallelism.pipeline_parallel_layers_per_stage", "expected a positive integer");
    else
      tt.layers_per_stage = lps->get<int>();
  }
  tt.first_less =
      static_cast<int>(r.integer("parallelism.pipeline_parallel_first_stage_less_layers", 1, 0));
  tt.last_less =
      static_cast<int>(r.integer("parallelism.pipeline_parallel_last_stage_less_layers", 1, 0));
  const Json* parts = r.get("parallelism.module_fqns_per_model_part");
  if (parts != nullptr && !parts->is_null()) {
    const bool lists = parts->is_array() && std::all_of(parts->begin(), parts->end(),
                                                        [](const Json& p) { return p.is_array(); });
    if (!lists) {
      r.fail("parallelism.module_fqns_per_model_part", "expected lists");
      return;
    }
    for (const Json& part : *parts) {
      int layers = 0;
      for (const Json& fqn : part)
        if (fqn.is_string() && fqn.get<std::string>().rfind("layers.", 0) == 0) ++layers;
      tt.parts.push_back(layers);
    }
    if (tt.parts.empty() || tt.parts.size() % static_cast<std::size_t>(t.pp)) {
      r.fail("parallelism.module_fqns_per_model_part",
             fmt::format("{} model parts are not a multiple of {} pipeline ranks", tt.parts.size(),
                         t.pp));
      tt.parts.clear();
    }
  }
  if (tt.dp_shard > 0) out.world_size = tt.dp_replicate * tt.dp_shard * t.tp * t.pp * t.cp;
}

void read_checkpointing_and_compile(Rows& r, LaunchConfig& out) {
  TrainingConfig& t = out.training;
  // Trainer.Config's default is SelectiveAC.
  const Json* ac = r.get("activation_checkpoint");
  const std::string cls = ac == nullptr     ? "SelectiveAC.Config"
                          : ac->is_null()   ? "None"
                          : ac->is_string() ? ac->get<std::string>()
                                            : shown(*ac);
  t.recompute_layers = 0;
  if (cls == "None")
    t.recompute = Recompute::kNone;
  else if (cls == "FullAC.Config")
    t.recompute = Recompute::kFull;
  else if (cls == "SelectiveAC.Config")
    t.recompute = Recompute::kSelective;  // per-op: every second matmul and the cheap work again
  else
    r.fail("activation_checkpoint",
           fmt::format("paraplan prices None, SelectiveAC and FullAC, not {}", cls));
  const bool compile = r.boolean("compile.enable", false);
  std::vector<std::string> components = {"model", "loss"};
  if (const Json* c = r.get("compile.components"); c != nullptr) {
    if (!c->is_array()) {
      r.fail("compile.components", "expected a list of strings");
    } else {
      components.clear();
      for (const Json& s : *c)
        if (s.is_string()) components.push_back(s.get<std::string>());
    }
  }
  r.text("compile.backend", "inductor");
  t.fused_elementwise =
      compile && std::find(components.begin(), components.end(), "model") != components.end();
  t.tp_comm_overlap = r.boolean("compile.enable_async_tensor_parallel", false);
  if (t.tp_comm_overlap && (t.tp < 2 || !t.fused_elementwise))
    r.fail("compile.enable_async_tensor_parallel",
           "needs tensor_parallel_degree 2 or more and the model compiled");
}

LaunchConfig from_rows(ConfigRows rows, const std::string& source, int world_size) {
  LaunchConfig out;
  out.format = kTorchtitanRecipe;
  out.source = source;
  out.world_size = world_size;
  out.torchtitan.emplace();
  TrainingConfig& t = out.training;
  t.stack = Stack::kFsdp;
  t.dp = 0;
  t.dropout = false;
  t.overlap_grad_reduce = true;
  if (rows.count("?"))
    throw Error(ErrorKind::kUsage, source,
                "a statement or value paraplan does not follow sets the configuration (a "
                "return of something else than Trainer.Config(...) or config, an assignment "
                "to another object)");
  std::string optimizer;
  if (const auto it = rows.find("optimizer"); it != rows.end() && it->second.is_object())
    optimizer = it->second.value("class", "?");
  Rows r(std::move(rows), source);
  // Adam's state is what paraplan prices (torchtitan's default_adamw).
  std::string lower = optimizer;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (!optimizer.empty() && lower.find("adam") == std::string::npos)
    r.fail(
        "optimizer",
        fmt::format("{} is not priced; paraplan prices Adam's state (default_adamw)", optimizer));
  read_recipe_model(r, out);
  read_training(r, out);
  read_recipe_parallelism(r, out);
  read_checkpointing_and_compile(r, out);
  r.classify(out);
  if (world_size > 0 && out.world_size != world_size && out.torchtitan->dp_shard > 0)
    r.fail("parallelism", fmt::format("the degrees multiply to {}, and the launch runs {} "
                                      "processes",
                                      out.world_size, world_size));
  r.done();
  out.world_size = world_size > 0 ? world_size : out.world_size;
  return out;
}

// The function a Python file is read at: the one named, else paraplan_plan, else its only one.
std::string function_of(const PythonConfig& py, const std::string& named,
                        const std::string& source) {
  std::vector<std::string> names;
  for (const PythonFunction& f : py.functions()) names.push_back(f.name);
  if (!named.empty()) {
    if (std::find(names.begin(), names.end(), named) == names.end())
      throw Error(
          ErrorKind::kUsage, source,
          fmt::format("no function {} here (its functions: {})", named, fmt::join(names, ", ")));
    return named;
  }
  if (std::find(names.begin(), names.end(), "paraplan_plan") != names.end()) return "paraplan_plan";
  if (names.size() == 1) return names.front();
  throw Error(ErrorKind::kUsage, source,
              fmt::format("{} configuration functions ({}); name one as FILE:FUNCTION",
                          names.size(), fmt::join(names, ", ")));
}

LaunchConfig from_python(const std::string& text, const std::string& source,
                         const std::string& function, int world_size) {
  const PythonConfig py(text, source);
  const std::string name = function_of(py, function, source);
  ConfigRows rows = py.rows(name, registry_path);
  // model_registry's model: the module it is imported from.
  if (rows.count("model_spec") && rows["model_spec"].is_object() &&
      !rows["model_spec"].contains("module")) {
    const auto it = py.imports().find("model_registry");
    const std::string path = it == py.imports().end() ? "" : it->second;
    const std::string prefix = "torchtitan.models.";
    if (path.rfind(prefix, 0) == 0)
      rows["model_spec"]["module"] = path.substr(prefix.size(), path.rfind('.') - prefix.size());
  }
  return from_rows(std::move(rows), fmt::format("{} ({})", source, name), world_size);
}

std::string flag_value(const std::vector<ShellWord>& words, std::size_t& i,
                       const std::string& flag) {
  const std::string& w = words[i].text;
  if (w == flag && i + 1 < words.size()) return words[++i].text;
  if (w.rfind(flag + "=", 0) == 0) return w.substr(flag.size() + 1);
  return "";
}

}  // namespace

LaunchConfig read_torchtitan_recipe(const std::string& text, const std::string& source) {
  // torchtitan's own configuration by name: MODULE:FUNCTION.
  if (text.empty()) {
    const std::size_t colon = source.find(':');
    if (colon != std::string::npos && kModules.count(source.substr(0, colon)))
      if (auto rows = registry_rows(source.substr(0, colon), source.substr(colon + 1)))
        return from_rows(std::move(*rows), source, 0);
    throw Error(ErrorKind::kUsage, source,
                "not a file, nor one of torchtitan's configuration functions as MODULE:FUNCTION "
                "(llama3:llama3_8b, qwen3:qwen3_30b_a3b, deepseek_v3:deepseek_v3_16b, ...)");
  }
  // A Python file (FILE or FILE:FUNCTION, the function given by the caller in `source`).
  const bool script =
      text.rfind("#!", 0) == 0 || text.find("torchtitan.train") != std::string::npos;
  if (!script) {
    std::string function;
    if (const std::size_t colon = source.rfind(':');
        colon != std::string::npos && source.find(".py:") != std::string::npos)
      function = source.substr(colon + 1);
    return from_python(text, source, function, 0);
  }
  // A launch: torchrun ... -m torchtitan.train --module M --config F, after the here-document
  // that wrote M.py, or naming one of torchtitan's modules.
  const auto launch = launch_command(text, source);
  if (!launch)
    throw Error(ErrorKind::kUsage, source,
                "no launch found (expected torchrun or python -m torchtitan.train --module M "
                "--config F)");
  const std::vector<ShellWord>& w = launch->words;
  std::string module, config;
  std::size_t program = w.size();  // -m torchtitan.train: the launcher's options come before
  for (std::size_t i = 0; i < w.size(); ++i) {
    if (w[i].text == "-m" && program == w.size()) program = i;
    std::string v;
    if (!(v = flag_value(w, i, "--module")).empty()) module = v;
    if (!(v = flag_value(w, i, "--config")).empty()) config = v;
  }
  if (module.empty() || config.empty())
    throw Error(ErrorKind::kUsage, fmt::format("{}:{}", source, w.front().line),
                "the launch names no --module and --config");
  const int world = launcher_world_size(w, 0, program, source);
  for (const auto& [path, body] : launch->files)
    if (path == module + ".py" || (path.size() > module.size() + 4 &&
                                   path.compare(path.size() - module.size() - 4, module.size() + 4,
                                                "/" + module + ".py") == 0))
      return from_python(body, fmt::format("{}: {}", source, path), config, world);
  if (auto rows = registry_rows(module, config))
    return from_rows(std::move(*rows), fmt::format("{}: {}.{}", source, module, config), world);
  throw Error(ErrorKind::kUsage, fmt::format("{}:{}", source, w.front().line),
              fmt::format("--module {} --config {}: neither written by the script nor one of "
                          "torchtitan's configuration functions",
                          module, config));
}

}  // namespace paraplan::engines
