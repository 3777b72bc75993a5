// The launch job: read, price as it is, search the best plan on the same devices and batch, diff.
#include "api/launch.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>

#include "api/evaluate.h"
#include "api/inputs.h"
#include "api/knobs.h"
#include "api/plan.h"
#include "api/plan_job.h"
#include "api/plan_text.h"
#include "api/results_json.h"
#include "engines/deepspeed_config.h"
#include "engines/megatron_args.h"
#include "engines/megatron_bridge.h"
#include "engines/megatron_layout.h"
#include "engines/nemo_recipe.h"
#include "engines/torchtitan_config.h"
#include "engines/torchtitan_recipe.h"
#include "io/json_fields.h"
#include "ir/error.h"
#include "zoo/llm_models.h"

namespace paraplan::api {
namespace {

const std::vector<std::string> kLaunchFields = {"from",        "model",   "cluster",
                                                "devices",     "memory",  "memory_headroom",
                                                "calibration", "explain", "export"};
// A DeepSpeed configuration does not say the sequence length, and may leave its batch to "auto".
const std::vector<std::string> kDeepSpeedFields = {
    "from",        "model",   "cluster", "devices", "memory",      "memory_headroom",
    "calibration", "explain", "export",  "seq_len", "micro_batch", "batch"};

// The launch's world size, from its launcher or the user; FieldError("devices") otherwise.
int world_size(const engines::LaunchConfig& launch, int devices) {
  if (launch.world_size > 0 && devices > 0 && launch.world_size != devices)
    throw FieldError("devices", fmt::format(" {}: the launch runs {} processes ({})", devices,
                                            launch.world_size, launch.source));
  if (launch.world_size > 0) return launch.world_size;
  if (devices > 0) return devices;
  throw FieldError("devices", fmt::format(": {} does not say how many GPUs the job runs on (no "
                                          "torchrun line); give them",
                                          launch.source));
}

// dp from the world size, vpp from layers per virtual stage, the global batch's default; the
// engine's own checks, placed at the file.
TrainingConfig completed(const engines::LaunchConfig& launch, const TransformerConfig& model,
                         int world) {
  if (launch.torchtitan) return engines::complete_torchtitan(launch, model.num_layers, world);
  TrainingConfig t = launch.training;
  const int inner = t.tp * t.cp * t.pp;
  if (world % inner)
    throw Error(ErrorKind::kUsage, launch.source,
                fmt::format("tensor × pipeline × context parallel = {} × {} × {} = {} does not "
                            "divide the world size {}",
                            t.tp, t.pp, t.cp, inner, world));
  t.dp = world / inner;
  if (launch.layers_per_virtual_stage > 0) {
    const std::int64_t per_rank = static_cast<std::int64_t>(t.pp) * launch.layers_per_virtual_stage;
    if (model.num_layers % per_rank)
      throw Error(ErrorKind::kUsage, launch.source,
                  fmt::format("--num-layers-per-virtual-pipeline-stage {}: {} layers are not a "
                              "multiple of it × {} stages",
                              launch.layers_per_virtual_stage, model.num_layers, t.pp));
    t.vpp = static_cast<int>(model.num_layers / per_rank);
  }
  if (const auto& split = launch.pending_split) {  // Megatron-Core's uneven split, now
    std::string error;
    if (!engines::uneven_split(model.num_layers, split->first, split->last, split->embedding,
                               split->loss, t, error))
      throw Error(ErrorKind::kUsage, launch.source + ": " + split->key,
                  fmt::format("{} ({} layers over {} stages)", error, model.num_layers, t.pp));
  }
  if (launch.format == "deepspeed")  // DeepSpeed's pipeline engine splits the layers itself
    apply_engine_split(engine_rules(Engine::kMegatronDeepSpeed), t,
                       static_cast<int>(model.num_layers));
  // Megatron overlaps pipeline sends only in the interleaved schedule, and shared experts only
  // where the model has them (moe_layer.py builds no side stream otherwise).
  t.overlap_p2p_comm = t.overlap_p2p_comm && t.pp > 1 && t.vpp > 1;
  t.moe_shared_expert_overlap = t.moe_shared_expert_overlap && model.shared_experts > 0;
  if (t.global_batch == 0) t.global_batch = t.micro_batch * t.dp;
  if (t.global_batch % (t.micro_batch * t.dp))
    throw Error(ErrorKind::kUsage, launch.source,
                fmt::format("--global-batch-size {} is not a multiple of micro-batch × data "
                            "parallel = {} × {}",
                            t.global_batch, t.micro_batch, t.dp));
  return t;
}

// DeepSpeed's batch as DeepSpeed resolves it against the data-parallel ranks
// (deepspeed/runtime/config.py, _set_batch_related_parameters: of the global batch, the
// micro-batch and the accumulation steps, the missing ones follow from the others, the
// accumulation 1 when two are missing); a key left to "auto" (the Hugging Face Trainer's) or
// out is --micro-batch or --batch, and neither may restate a number the file gives.
void resolve_deepspeed_batch(engines::LaunchConfig& launch, int world, std::int64_t micro_flag,
                             std::int64_t batch_flag) {
  using engines::DeepSpeedBatch;
  const DeepSpeedBatch& b = *launch.deepspeed_batch;
  TrainingConfig& t = launch.training;
  auto value = [&](std::int64_t file, std::int64_t known, std::int64_t flag, const char* key,
                   const char* field, const char* flag_name) -> std::int64_t {
    if (flag > 0 && (file > 0 || known > 0))
      throw FieldError(field,
                       fmt::format(": {} gives it ({} {}); leave it out", launch.source,
                                   file > 0 ? key : "its arguments:", file > 0 ? file : known));
    if (flag > 0) return flag;
    if (file == DeepSpeedBatch::kAuto)
      throw Error(ErrorKind::kUsage, fmt::format("{}: {}", launch.source, key),
                  fmt::format("is \"auto\" (the Hugging Face Trainer fills it from its "
                              "arguments); give the value it runs with ({})",
                              flag_name));
    return known;
  };
  std::int64_t micro = value(b.micro, t.micro_batch, micro_flag, "train_micro_batch_size_per_gpu",
                             "micro_batch", "--micro-batch");
  std::int64_t train =
      value(b.train, t.global_batch, batch_flag, "train_batch_size", "batch", "--batch");
  std::int64_t steps = b.accumulation > 0 ? b.accumulation : 0;
  const int inner = t.tp * t.cp * t.pp;
  const std::int64_t dp = world % inner == 0 ? world / inner : 0;
  auto fail = [&](const std::string& message) {
    throw Error(ErrorKind::kUsage, launch.source, message);
  };
  if (dp == 0) return;  // completed() names the indivisible world
  if (train == 0 && micro == 0)
    fail(
        "gives neither train_batch_size nor train_micro_batch_size_per_gpu; DeepSpeed needs one "
        "(or give --micro-batch or --batch)");
  if (steps == 0) {
    if (train > 0 && micro > 0) {
      if (train % (micro * dp))
        fail(
            fmt::format("train_batch_size {} is not micro-batch {} × {} data-parallel ranks × "
                        "accumulation steps",
                        train, micro, dp));
      steps = train / (micro * dp);
    } else {
      steps = 1;
    }
  }
  if (micro == 0) {
    if (train % (steps * dp))
      fail(
          fmt::format("train_batch_size {} is not accumulation steps {} × {} data-parallel "
                      "ranks × a micro-batch",
                      train, steps, dp));
    micro = train / (steps * dp);
  }
  if (train == 0) train = micro * steps * dp;
  if (train != micro * steps * dp)
    fail(
        fmt::format("train_batch_size {} is not micro-batch × accumulation steps × data-parallel "
                    "ranks = {} × {} × {}",
                    train, micro, steps, dp));
  t.micro_batch = micro;
  t.global_batch = train;
}

std::string explanation(const engines::LaunchConfig& launch) {
  auto join = [](const std::vector<std::string>& keys) {
    std::string out;
    for (const std::string& k : keys) out += (out.empty() ? "" : " ") + k;
    return out.empty() ? "(none)" : out;
  };
  return fmt::format("read from {} ({}): {}\nignored (no effect on time or memory): {}\n",
                     launch.source, launch.format, join(launch.read), join(launch.ignored));
}

}  // namespace

std::vector<std::string> launch_diff(const std::string& format, const TransformerConfig& model,
                                     const TrainingConfig& from, const TrainingConfig& to) {
  const bool nemo = format == "nemo", deepspeed = format == "deepspeed",
             torchtitan = format == "torchtitan", bridge = format == "bridge",
             recipe = format == engines::kTorchtitanRecipe;
  auto options = [&](const TrainingConfig& t) {
    return recipe       ? engines::torchtitan_recipe_searched_options(t)
           : deepspeed  ? engines::deepspeed_searched_options(t)
           : nemo       ? engines::nemo_searched_options(model, t)
           : torchtitan ? engines::torchtitan_searched_options(t)
           : bridge     ? engines::megatron_bridge_searched_options(model, t)
                        : engines::megatron_searched_options(model, t);
  };
  const auto before = options(from), after = options(to);
  std::vector<std::string> order;
  for (const auto* side : {&before, &after})
    for (const auto& [flag, value] : *side)
      if (std::find(order.begin(), order.end(), flag) == order.end()) order.push_back(flag);
  std::map<std::string, std::string> a(before.begin(), before.end()), b(after.begin(), after.end());
  std::vector<std::string> out;
  auto line = [&](char sign, const std::string& flag, const std::string& value) {
    if (torchtitan || recipe) return fmt::format("{} {} = {}", sign, flag, value);
    if (bridge) return fmt::format("{} {}={}", sign, flag, value);
    if (nemo || deepspeed) return fmt::format("{} {}: {}", sign, flag, value);
    return fmt::format("{} {}{}", sign, flag, value.empty() ? "" : " " + value);
  };
  for (const std::string& flag : order) {
    const bool in_a = a.count(flag) > 0, in_b = b.count(flag) > 0;
    if (in_a && in_b && a[flag] == b[flag]) continue;
    if (in_a) out.push_back(line('-', flag, a[flag]));
    if (in_b) out.push_back(line('+', flag, b[flag]));
  }
  return out;
}

namespace {

// The model a launch trains: the shape it gives, the built-in it names, or --model (one of
// them); a shape read from Megatron's arguments is named after its file
// (megatron_llama3_8b.sh → its stem), an engine's named model keeps its name.
TransformerConfig launch_model(const engines::LaunchConfig& launch, const LaunchOptions& o) {
  if ((launch.model || !launch.model_name.empty()) && !o.model.empty())
    throw FieldError("model", fmt::format(": {} gives the model ({}); leave it out", launch.source,
                                          launch.model ? "its shape" : launch.model_name));
  if (!launch.model && launch.model_name.empty() && o.model.empty())
    throw FieldError(
        "model", launch.model_unknown.empty()
                     ? fmt::format(": {} does not give the model's shape; give it", launch.source)
                     : fmt::format(": {} names {}, whose shape paraplan does not know; give it "
                                   "(its config.json, or a built-in of the same shape)",
                                   launch.source, launch.model_unknown));
  TransformerConfig model = launch.model                 ? *launch.model
                            : !launch.model_name.empty() ? load_transformer(launch.model_name)
                                                         : load_transformer(o.model);
  if (launch.model && !launch.model_from_engine && o.file != "-") {
    std::string stem = o.file.substr(o.file.find_last_of('/') + 1);
    if (const std::size_t dot = stem.find('.'); dot != std::string::npos && dot > 0)
      stem.resize(dot);
    if (!stem.empty()) model.name = stem;
  }
  return model;
}

// The launch file read in its format (the format checked, and against --export); torchtitan's
// own configuration functions by name (llama3:llama3_70b) need no file, FILE.py:FUNCTION names
// one of the file's.
engines::LaunchConfig read_launch(const LaunchOptions& o) {
  const bool deepspeed = o.format == "deepspeed";
  const bool recipe = o.format == engines::kTorchtitanRecipe;
  const bool torchtitan = o.format == "torchtitan" || recipe, bridge = o.format == "bridge";
  if (o.format != "megatron" && o.format != "nemo" && !deepspeed && !torchtitan && !bridge)
    throw FieldError("from", fmt::format(" {}: expected megatron (Megatron-LM's pretrain_gpt.py "
                                         "arguments), nemo (a NeMo GPT recipe's YAML), "
                                         "deepspeed (a ds_config.json), torchtitan (a job "
                                         "TOML), torchtitan-recipe (a torchtitan Python "
                                         "configuration, its launch, or MODULE:FUNCTION) or "
                                         "bridge (a Megatron-Bridge run_recipe.py launch)",
                                         o.format));
  // The best plan is searched among what the launch's engine runs: exported for that engine
  // (Megatron-LM, NeMo and Megatron-Bridge run the same Megatron-Core).
  const auto family = [](const std::string& f) {
    return f == "nemo" || f == "bridge"      ? std::string("megatron")
           : f == engines::kTorchtitanRecipe ? std::string("torchtitan")
                                             : f;
  };
  if (!o.export_to.empty() && family(o.export_to) != family(o.format))
    throw FieldError("export", fmt::format(" {}: the plan is searched for the launch's engine "
                                           "({}); export it as {}, or plan the model for {} "
                                           "with --model",
                                           o.export_to, o.format, o.format, o.export_to));
  // torchtitan's own configuration functions by name (llama3:llama3_70b): no file.
  const bool registry_name = recipe && o.file != "-" && !std::filesystem::exists(o.file) &&
                             o.file.find(".py") == std::string::npos &&
                             o.file.find(':') != std::string::npos;
  // FILE.py:FUNCTION: the file without the function.
  std::string path = o.file;
  if (recipe && !std::filesystem::exists(path) && path.find(".py:") != std::string::npos)
    path = path.substr(0, path.rfind(':'));
  const std::string text = o.file == "-"   ? o.text
                           : registry_name ? std::string()
                                           : io::read_text_file(path);
  const std::string source = o.file == "-" ? "standard input" : o.file;
  return o.format == "nemo" ? engines::read_nemo_recipe(text, source)
         : deepspeed        ? engines::read_deepspeed_config(text, source)
         : recipe           ? engines::read_torchtitan_recipe(text, source)
         : torchtitan       ? engines::read_torchtitan_config(text, source)
         : bridge           ? engines::read_megatron_bridge_launch(text, source)
                            : engines::read_megatron_args(text, source);
}

}  // namespace

JobOutcome launch_job(const LaunchOptions& o) {
  const bool deepspeed = o.format == "deepspeed";
  refuse_fields(o.given, deepspeed ? kDeepSpeedFields : kLaunchFields,
                "a launch configuration (--from)");
  const bool recipe = o.format == engines::kTorchtitanRecipe;
  const bool torchtitan = o.format == "torchtitan" || recipe, bridge = o.format == "bridge";
  engines::LaunchConfig launch = read_launch(o);
  const std::string source = o.file == "-" ? "standard input" : o.file;
  // A DeepSpeed JSON alone says neither the sequence length nor the model; Megatron-DeepSpeed's
  // launch script does.
  const bool deepspeed_script = deepspeed && launch.model.has_value();
  if (deepspeed && !deepspeed_script) {
    if (o.knobs.seq_len <= 0)
      throw FieldError("seq_len", fmt::format(": {} (a DeepSpeed configuration) does not say the "
                                              "sequence length; give it",
                                              source));
    launch.training.seq_len = o.knobs.seq_len;
  } else if (deepspeed && o.knobs.seq_len > 0) {
    throw FieldError("seq_len", fmt::format(": {} gives it (--seq-length); leave it out", source));
  }
  const int world = world_size(launch, o.devices);
  if (launch.deepspeed_batch) resolve_deepspeed_batch(launch, world, o.knobs.micro_batch, o.batch);
  // A model the launch names by an id paraplan has no shape for (a Megatron-Bridge recipe's
  // Hugging Face model): its shape is asked for.
  if (!launch.model_name.empty() && !zoo::llm_model(launch.model_name)) {
    launch.model_unknown = launch.model_name;
    launch.model_name.clear();
  }
  TransformerConfig model = launch_model(launch, o);
  const TrainingConfig as_is = completed(launch, model, world);
  if (launch.vocab_size > 0) model.vocab_size = launch.vocab_size;  // the launch's tokenizer's
  if ((launch.model && !launch.model_from_engine) || launch.vocab_size > 0) {
    // Megatron pads the vocabulary to a multiple of its divisor × tp.
    const std::int64_t multiple = static_cast<std::int64_t>(launch.vocab_multiple) * as_is.tp;
    model.vocab_size = (model.vocab_size + multiple - 1) / multiple * multiple;
  }
  Cluster cluster = one_device_type(load_cluster(o.cluster, world), world, "the launch");
  apply_memory_knobs(o.knobs, cluster);
  const Calibration calibration = load_calibration(o.knobs.calibration, cluster);
  const AnalyticResult priced = evaluate({model, cluster, calibration, as_is});

  TransformerPlanRequest request;
  request.model = model;
  request.cluster = cluster;
  request.cluster_name = o.cluster;
  request.calibration = calibration;
  // What the launch's engine runs (ir/engine_rules.h); DeepSpeed beside a Hugging Face model is
  // searched below as data parallelism only.
  request.engine = deepspeed    ? Engine::kMegatronDeepSpeed
                   : torchtitan ? Engine::kTorchtitan
                   : bridge     ? Engine::kMegatronBridge
                                : Engine::kMegatronLm;
  LlmSearchSettings& s = request.settings;
  s.devices = world;
  s.global_batch = as_is.global_batch;
  s.seq_len = as_is.seq_len;
  s.fp8 = as_is.fp8;
  s.attention = as_is.attention;
  s.moe_capacity_factor = as_is.moe_capacity_factor;
  s.stack = as_is.stack;
  // The precision and compilation the job chose stay (torchtitan's dtype and torch.compile).
  s.stack_choices.bf16_gradient_reduction = as_is.bf16_gradient_reduction;
  s.stack_choices.fp32_loss = as_is.fp32_loss;
  s.stack_choices.fused_loss = as_is.fused_loss;
  s.stack_choices.optimizer_moments = as_is.optimizer_moments;
  s.stack_choices.precision_aware_optimizer = as_is.precision_aware_optimizer;
  // A Bridge recipe's own MixedPrecisionConfig reduces in bf16, which the recipe keeps.
  s.recipe_sets_precision = bridge && as_is.bf16_gradient_reduction;
  if (torchtitan) s.stack_choices.fused_elementwise = as_is.fused_elementwise;
  if (launch.format == engines::kTorchtitanRecipe) keep_to_torchtitan_recipe(s);
  s.top_k = 1;
  std::optional<LlmCandidate> found;
  for (const Recompute recompute : {Recompute::kNone, Recompute::kFull}) {
    if (deepspeed && !deepspeed_script) {
      s.tp = s.cp = s.pp = s.ep = s.vpp = 1;
      s.recompute = recompute;
      s.recompute_layers = 0;
    }
    try {
      const LlmCandidate c = plan_transformer(request).search.top.front();
      if (!found || c.result.iteration_time_s < found->result.iteration_time_s) found = c;
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::kInfeasible) throw;
    }
    if (!deepspeed) break;
  }
  if (!found)
    throw Error(ErrorKind::kInfeasible, source,
                fmt::format("no plan of {} fits on these {} devices", model.name, world));
  const LlmCandidate& best = *found;
  const double speedup = priced.iteration_time_s / best.result.iteration_time_s;
  const std::vector<std::string> diff = launch_diff(launch.format, model, as_is, best.config);

  JobOutcome out;
  if (!o.export_to.empty())
    out.exported = export_plan(o.export_to, model, best.config, devices_per_node(cluster),
                               cluster.device_types[0].name);
  const DeviceType& device = cluster.device_types[0];
  out.document = {{"from",
                   {{"format", launch.format},
                    {"source", launch.source},
                    {"world_size", world},
                    {"read", launch.read},
                    {"ignored", launch.ignored}}},
                  {"as_is", evaluate_json(as_is, priced, model.name, o.cluster, device)},
                  {"best", evaluate_json(best.config, best.result, model.name, o.cluster, device)},
                  {"speedup", speedup},
                  {"diff", diff}};
  if (!out.exported.empty()) out.document["export"] = out.exported;
  if (!o.words) return out;
  if (o.explain) out.words += explanation(launch);
  out.words += fmt::format("your job, as {} launches it:\n", launch.source);
  out.words += evaluate_words(model, o.cluster, device, as_is, priced);
  if (diff.empty()) {
    out.words += "\nit is already the best plan paraplan finds on these devices and batch\n";
    return out;
  }
  out.words +=
      fmt::format("\nthe best plan on the same {} GPUs, batch and sequence length:\n", world);
  out.words += evaluate_words(model, o.cluster, device, best.config, best.result);
  out.words += fmt::format("\nthe change ({:.2f}× the speed{}):\n", speedup,
                           priced.fits ? "" : "; your job does not fit in memory");
  for (const std::string& line : diff) out.words += line + "\n";
  const bool connections = std::find(launch.environment.begin(), launch.environment.end(),
                                     "CUDA_DEVICE_MAX_CONNECTIONS=1") != launch.environment.end();
  if (launch.format == "megatron" && (best.config.tp > 1 || best.config.cp > 1) && !connections)
    out.words +=
        "+ CUDA_DEVICE_MAX_CONNECTIONS=1 in the environment (Megatron-LM needs it with "
        "tensor or context parallelism)\n";
  return out;
}

}  // namespace paraplan::api
