// Key names and defaults: DeepSpeed docs/_pages/config-json.md (0.15–0.16).
#include "engines/deepspeed_config.h"

#include <fmt/format.h>

#include <map>
#include <optional>
#include <set>

#include "engines/keyed_config.h"
#include "engines/megatron_args.h"
#include "engines/shell_script.h"
#include "io/json_fields.h"
#include "ir/error.h"

namespace paraplan::engines {

using io::Json;
using io::parse_json_text;
namespace {

const std::set<std::string> kTopRead = {"train_batch_size",
                                        "train_micro_batch_size_per_gpu",
                                        "gradient_accumulation_steps",
                                        "bf16",
                                        "fp16",
                                        "zero_optimization",
                                        "activation_checkpointing",
                                        "optimizer",
                                        "communication_data_type",
                                        "amp",
                                        "elasticity",
                                        "sparse_attention"};
const std::set<std::string> kTopIgnored = {"gradient_clipping",
                                           "scheduler",
                                           "steps_per_print",
                                           "wall_clock_breakdown",
                                           "prescale_gradients",
                                           "gradient_predivide_factor",
                                           "zero_allow_untested_optimizer",
                                           "tensorboard",
                                           "wandb",
                                           "csv_monitor",
                                           "comet",
                                           "flops_profiler",
                                           "comms_logger",
                                           "data_efficiency",
                                           "checkpoint",
                                           "dump_state",
                                           "memory_breakdown",
                                           "seed",
                                           "seq_parallel_communication_data_type",
                                           "data_types",
                                           "aio",
                                           "autotuning",
                                           "compression_training",
                                           "pipeline",
                                           "zero_force_ds_cpu_optimizer",
                                           "disable_allgather",
                                           "graph_harvesting",
                                           "use_data_before_expert_parallelism"};
const std::set<std::string> kZeroRead = {"stage",
                                         "overlap_comm",
                                         "offload_optimizer",
                                         "offload_param",
                                         "zero_hpz_partition_size",
                                         "zero_quantized_weights",
                                         "zero_quantized_gradients",
                                         "mics_shard_size",
                                         "mics_hierarchical_params_gather"};
const std::set<std::string> kZeroIgnored = {"contiguous_gradients",
                                            "reduce_bucket_size",
                                            "allgather_bucket_size",
                                            "reduce_scatter",
                                            "allgather_partitions",
                                            "round_robin_gradients",
                                            "sub_group_size",
                                            "stage3_max_live_parameters",
                                            "stage3_max_reuse_distance",
                                            "stage3_prefetch_bucket_size",
                                            "stage3_param_persistence_threshold",
                                            "stage3_gather_16bit_weights_on_model_save",
                                            "stage3_gather_fp16_weights_on_model_save",
                                            "elastic_checkpoint",
                                            "ignore_unused_parameters",
                                            "load_from_fp32_weights",
                                            "cpu_offload",
                                            "memory_efficient_linear",
                                            "use_multi_rank_bucket_allreduce",
                                            "legacy_stage1",
                                            "round_robin_gradients"};

LaunchConfig read_json(const std::string& text, const std::string& source) {
  const Json root = parse_json_text(text, source);
  if (!root.is_object()) throw Error(ErrorKind::kUsage, source, "expected a JSON object");
  const KeyedConfig c(root, source, "a DeepSpeed configuration");
  LaunchConfig out;
  out.format = "deepspeed";
  out.source = source;
  c.classify("", kTopRead, kTopIgnored, out);
  c.classify("zero_optimization", kZeroRead, kZeroIgnored, out);
  TrainingConfig& t = out.training;
  t.stack = Stack::kDeepSpeed;
  t.tp = t.pp = t.cp = t.ep = t.vpp = 1;
  t.dp = 0;
  t.seq_len = 0;  // not in the file
  // fp16 mixed precision: bf16's bytes and tensor-core rate (its loss scaling a check per
  // step), priced as bf16.
  const bool fp16 = c.boolean("fp16.enabled", false);
  if (fp16 && c.boolean("bf16.enabled", false))
    c.refuse("fp16.enabled", "and bf16.enabled both true; DeepSpeed takes one");
  if (!fp16 && !c.boolean("bf16.enabled", false))
    c.refuse("bf16",
             "without bf16.enabled DeepSpeed trains in fp32, which paraplan does not price");
  for (const char* refused : {"amp.enabled", "elasticity.enabled"})
    if (c.boolean(refused, false)) c.refuse(refused, "is not priced; expected false");
  if (!c.get("sparse_attention").is_null()) c.refuse("sparse_attention", "is not priced");
  for (const char* offload :
       {"zero_optimization.offload_optimizer.device", "zero_optimization.offload_param.device"})
    if (c.text(offload, "none") != "none")
      c.refuse(offload, "offloading to the CPU or NVMe is not priced; expected \"none\"");
  if (c.integer("zero_optimization.zero_hpz_partition_size", 1, 1) != 1 ||
      c.boolean("zero_optimization.zero_quantized_weights", false) ||
      c.boolean("zero_optimization.zero_quantized_gradients", false))
    c.refuse("zero_optimization", "ZeRO++ (hpZ, quantized weights or gradients) is not priced");
  // MiCS: ZeRO 3 sharded within groups of this many ranks, the groups replicas (HSDP).
  const std::int64_t mics = c.integer("zero_optimization.mics_shard_size", -1, -1);
  if (mics == 0) c.refuse("zero_optimization.mics_shard_size", "expected -1 (off) or >= 1");
  if (mics > 0) t.shard_group = static_cast<int>(mics);
  if (c.boolean("zero_optimization.mics_hierarchical_params_gather", false))
    c.refuse("zero_optimization.mics_hierarchical_params_gather",
             "a two-level gather across nodes is not priced; expected false");
  const std::string optimizer = c.text("optimizer.type", "AdamW");
  if (optimizer != "Adam" && optimizer != "AdamW" && optimizer != "FusedAdam")
    c.refuse("optimizer.type", fmt::format("paraplan prices Adam's state; expected Adam, AdamW or "
                                           "FusedAdam, got \"{}\"",
                                           optimizer));
  t.zero_stage = static_cast<int>(c.integer("zero_optimization.stage", 0, 0));
  if (t.zero_stage > 3) {
    c.refuse("zero_optimization.stage", "expected 0, 1, 2 or 3");
    t.zero_stage = 0;
  }
  // DeepSpeed overlaps the reduction by default only at stage 3.
  t.overlap_grad_reduce = c.boolean("zero_optimization.overlap_comm", t.zero_stage == 3);
  const std::string reduce = c.text("communication_data_type", "bf16");
  if (reduce != "bf16" && reduce != "fp32" && reduce != "fp16")
    c.refuse("communication_data_type", "expected bf16 or fp32");
  t.bf16_gradient_reduction = reduce != "fp32";
  if (!c.get("activation_checkpointing").is_null()) {
    if (c.boolean("activation_checkpointing.cpu_checkpointing", false))
      c.refuse("activation_checkpointing.cpu_checkpointing", "is not priced; expected false");
    t.recompute = Recompute::kFull;  // every layer, as Megatron-DeepSpeed checkpoints them
    t.recompute_layers = 0;
  } else {
    t.recompute = Recompute::kNone;
  }
  // The batch keys, any of them absent or "auto": resolved once the world size is known.
  auto batch_key = [&](const char* key) {
    return c.is_auto(key) ? DeepSpeedBatch::kAuto : c.integer(key, 0, 1);
  };
  const DeepSpeedBatch batch{batch_key("train_batch_size"),
                             batch_key("train_micro_batch_size_per_gpu"),
                             batch_key("gradient_accumulation_steps")};
  out.deepspeed_batch = batch;
  const std::int64_t train = std::max<std::int64_t>(batch.train, 0);
  const std::int64_t micro = std::max<std::int64_t>(batch.micro, 0);
  const std::int64_t accumulation = std::max<std::int64_t>(batch.accumulation, 0);
  t.micro_batch = micro;  // 0: resolved with the world size
  if (train > 0 && micro > 0 && accumulation > 0) {
    if (train % (micro * accumulation))
      c.refuse("train_batch_size",
               fmt::format("{} is not micro-batch × accumulation × GPUs ({} × {} × n)", train,
                           micro, accumulation));
    out.world_size = static_cast<int>(train / (micro * accumulation));
  }
  t.global_batch = train;  // 0: micro-batch × accumulation × dp, once dp is known
  out.accumulation = static_cast<int>(accumulation);
  c.done();  // every refusal at once
  return out;
}

// A script's `cat > FILE <<'EOF'` … `EOF` block: the file's name, its text and the lines it spans.
struct HereDocument {
  std::string file, text;
  std::size_t first_line = 0, last_line = 0;  ///< 0-based, the cat line and the EOF line
};

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  for (std::size_t end; (end = text.find('\n', start)) != std::string::npos; start = end + 1)
    lines.push_back(text.substr(start, end - start));
  if (start < text.size()) lines.push_back(text.substr(start));
  return lines;
}

std::optional<HereDocument> here_document(const std::vector<std::string>& lines,
                                          const std::string& source) {
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string& l = lines[i];
    const std::size_t cat = l.find("cat >"), marker = l.find("<<");
    if (cat == std::string::npos || marker == std::string::npos) continue;
    std::string word = l.substr(marker + 2), file = l.substr(cat + 5, marker - cat - 5);
    auto trim = [](std::string s) {
      const char* space = " \t'\"-";
      s.erase(0, s.find_first_not_of(space));
      s.erase(s.find_last_not_of(space) + 1);
      return s;
    };
    word = trim(word);
    file = trim(file);
    HereDocument doc{file, "", i, 0};
    for (std::size_t j = i + 1; j < lines.size(); ++j) {
      if (trim(lines[j]) == word) {
        doc.last_line = j;
        return doc;
      }
      doc.text += lines[j] + "\n";
    }
    throw Error(ErrorKind::kUsage, fmt::format("{}:{}", source, i + 1),
                fmt::format("the here-document is not closed by a line \"{}\"", word));
  }
  return std::nullopt;
}

}  // namespace

// Megatron-DeepSpeed's --zero-stage (its default 1).
template <typename Fail>
std::int64_t zero_stage_of(const std::map<std::string, std::string>& deepspeed, Fail fail) {
  const auto it = deepspeed.find("--zero-stage");
  if (it == deepspeed.end()) return 1;
  if (it->second.size() != 1 || it->second[0] < '0' || it->second[0] > '3')
    fail("--zero-stage", fmt::format("expected 0, 1, 2 or 3, got \"{}\"", it->second));
  return it->second[0] - '0';
}

LaunchConfig read_deepspeed_config(const std::string& text, const std::string& source) {
  const std::size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos || text[first] == '{') return read_json(text, source);
  // A Megatron-DeepSpeed launch: the script writing ds_config.json, then pretrain_gpt.py's line.
  std::vector<std::string> lines = lines_of(text);
  std::optional<HereDocument> doc = here_document(lines, source);
  std::string rest;
  if (const auto launch = launch_command(text, source); launch && !launch->files.empty()) {
    // A script as Megatron-DeepSpeed's examples write it: variables, the configuration written
    // through them (cat <<EOT > $DS_CONFIG), the launch: read as bash runs it.
    std::string config;
    for (std::size_t i = 0; i < launch->words.size(); ++i) {
      const std::string& w = launch->words[i].text;
      if (w.rfind("--deepspeed_config=", 0) == 0) config = w.substr(19);
      if (w == "--deepspeed_config" && i + 1 < launch->words.size())
        config = launch->words[i + 1].text;
    }
    if (const auto it = launch->files.find(config); it != launch->files.end()) {
      doc = HereDocument{config, it->second, 0, 0};
      for (const ShellWord& w : launch->words) {  // the launch, quoted word by word
        std::string quoted = "'";
        for (char c : w.text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
        rest += quoted + "' ";
      }
    }
  }
  if (!doc)
    throw Error(ErrorKind::kUsage, source,
                "neither a DeepSpeed JSON configuration nor a script writing one (cat > "
                "ds_config.json <<'EOF' ... EOF) before Megatron-DeepSpeed's pretrain_gpt.py");
  LaunchConfig out = read_json(doc->text, fmt::format("{} ({})", source, doc->file));
  if (rest.empty()) {
    for (std::size_t i = doc->first_line; i <= doc->last_line; ++i) lines[i].clear();
    for (const std::string& l : lines) rest += l + "\n";
  }
  std::map<std::string, std::string> deepspeed;
  LaunchConfig args = read_megatron_deepspeed_args(rest, source, deepspeed);
  auto fail = [&](const std::string& what, const std::string& message) {
    throw Error(ErrorKind::kUsage, fmt::format("{}: {}", source, what), message);
  };
  if (!deepspeed.count("--deepspeed")) fail("--deepspeed", "is missing (DeepSpeed is not used)");
  if (deepspeed["--deepspeed_config"] != doc->file)
    fail("--deepspeed_config", fmt::format("names \"{}\", the script writes \"{}\"",
                                           deepspeed["--deepspeed_config"], doc->file));
  TrainingConfig& t = out.training;
  const TrainingConfig& a = args.training;
  const std::pair<const char*, std::pair<std::int64_t, std::int64_t>> agree[] = {
      {"--micro-batch-size", {a.micro_batch, t.micro_batch}},
      {"--global-batch-size", {a.global_batch, t.global_batch}},
      {"--zero-stage", {zero_stage_of(deepspeed, fail), t.zero_stage}}};
  for (const auto& [flag, values] : agree)
    if (values.second > 0 && values.first != values.second)
      fail(flag,
           fmt::format("{} in the arguments, {} in {}", values.first, values.second, doc->file));
  // What the JSON leaves out (or to "auto"), the arguments say.
  if (t.micro_batch == 0) t.micro_batch = a.micro_batch;
  if (t.global_batch == 0) t.global_batch = a.global_batch;
  const bool checkpointed = deepspeed.count("--checkpoint-activations") > 0;
  if (checkpointed != (t.recompute == Recompute::kFull))
    fail("--checkpoint-activations",
         fmt::format("{} in the arguments, activation_checkpointing {} in {}",
                     checkpointed ? "given" : "not given", checkpointed ? "absent" : "present",
                     doc->file));
  if (a.recompute == Recompute::kSelective) t.recompute = Recompute::kSelective;
  if (deepspeed.count("--no-pipeline-parallel") && a.pp > 1)
    fail("--no-pipeline-parallel", "contradicts --pipeline-model-parallel-size > 1");
  if (!a.stage_layers.empty() || a.vpp > 1 || args.layers_per_virtual_stage > 0 || a.cp > 1 ||
      a.ep > 1)
    fail("--pipeline-model-parallel-size",
         "paraplan prices Megatron-DeepSpeed with tensor, pipeline (even stages) and data "
         "parallelism only");
  t.tp = a.tp;
  t.pp = a.pp;
  t.seq_len = a.seq_len;
  t.sequence_parallel = a.sequence_parallel;
  t.dropout = a.dropout;
  t.attention = deepspeed.count("--use-flash-attn-v2") ? Attention::kFlash : Attention::kStandard;
  if (out.world_size > 0 && args.world_size > 0 && out.world_size * t.tp * t.pp != args.world_size)
    fail("train_batch_size", fmt::format("{} data-parallel ranks × tp {} × pp {} is not the {} "
                                         "processes launched",
                                         out.world_size, t.tp, t.pp, args.world_size));
  out.world_size = args.world_size;
  out.model = args.model;
  out.environment = args.environment;
  out.vocab_multiple = args.vocab_multiple;
  out.read.insert(out.read.end(), args.read.begin(), args.read.end());
  out.ignored.insert(out.ignored.end(), args.ignored.begin(), args.ignored.end());
  return out;
}

std::vector<std::pair<std::string, std::string>> deepspeed_searched_options(
    const TrainingConfig& t) {
  auto yes = [](bool b) { return std::string(b ? "true" : "false"); };
  return {
      {spelled(Knob::kTp, Engine::kMegatronDeepSpeed), fmt::format("{}", t.tp)},
      {spelled(Knob::kPp, Engine::kMegatronDeepSpeed), fmt::format("{}", t.pp)},
      {spelled(Knob::kSequenceParallel, Engine::kMegatronDeepSpeed), yes(t.sequence_parallel)},
      {spelled(Knob::kMicroBatch, Engine::kMegatronDeepSpeed), fmt::format("{}", t.micro_batch)},
      {"gradient_accumulation_steps", fmt::format("{}", t.microbatches())},
      {spelled(Knob::kZero, Engine::kMegatronDeepSpeed), fmt::format("{}", t.zero_stage)},
      {spelled(Knob::kOverlapGradReduce, Engine::kMegatronDeepSpeed), yes(t.overlap_grad_reduce)},
      {spelled(Knob::kRecompute, Engine::kMegatronDeepSpeed),
       t.recompute == Recompute::kNone ? "absent" : "present"}};
}

}  // namespace paraplan::engines
