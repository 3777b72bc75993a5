// Key names and defaults: DeepSpeed docs/_pages/config-json.md (0.15–0.16).
#include "io/deepspeed_config.h"

#include <fmt/format.h>

#include <set>

#include "io/json_fields.h"
#include "io/keyed_config.h"
#include "ir/error.h"

namespace paraplan::io {
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
                                         "zero_quantized_gradients"};
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
                                            "mics_shard_size",
                                            "mics_hierarchical_params_gather",
                                            "use_multi_rank_bucket_allreduce",
                                            "legacy_stage1",
                                            "round_robin_gradients"};

}  // namespace

LaunchConfig read_deepspeed_config(const std::string& text, const std::string& source) {
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
  if (c.boolean("fp16.enabled", false))
    c.fail("fp16.enabled", "paraplan prices bf16 training; use \"bf16\": {\"enabled\": true}");
  if (!c.boolean("bf16.enabled", false))
    c.fail("bf16", "without bf16.enabled DeepSpeed trains in fp32, which paraplan does not price");
  for (const char* refused : {"amp.enabled", "elasticity.enabled"})
    if (c.boolean(refused, false)) c.fail(refused, "is not priced; expected false");
  if (!c.get("sparse_attention").is_null()) c.fail("sparse_attention", "is not priced");
  for (const char* offload :
       {"zero_optimization.offload_optimizer.device", "zero_optimization.offload_param.device"})
    if (c.text(offload, "none") != "none")
      c.fail(offload, "offloading to the CPU or NVMe is not priced; expected \"none\"");
  if (c.integer("zero_optimization.zero_hpz_partition_size", 1, 1) != 1 ||
      c.boolean("zero_optimization.zero_quantized_weights", false) ||
      c.boolean("zero_optimization.zero_quantized_gradients", false))
    c.fail("zero_optimization", "ZeRO++ (hpZ, quantized weights or gradients) is not priced");
  const std::string optimizer = c.text("optimizer.type", "AdamW");
  if (optimizer != "Adam" && optimizer != "AdamW" && optimizer != "FusedAdam")
    c.fail("optimizer.type", fmt::format("paraplan prices Adam's state; expected Adam, AdamW or "
                                         "FusedAdam, got \"{}\"",
                                         optimizer));
  t.zero_stage = static_cast<int>(c.integer("zero_optimization.stage", 0, 0));
  if (t.zero_stage > 3) c.fail("zero_optimization.stage", "expected 0, 1, 2 or 3");
  // DeepSpeed overlaps the reduction by default only at stage 3.
  t.overlap_grad_reduce = c.boolean("zero_optimization.overlap_comm", t.zero_stage == 3);
  const std::string reduce = c.text("communication_data_type", "bf16");
  if (reduce != "bf16" && reduce != "fp32" && reduce != "fp16")
    c.fail("communication_data_type", "expected bf16 or fp32");
  t.bf16_gradient_reduction = reduce != "fp32";
  if (!c.get("activation_checkpointing").is_null()) {
    if (c.boolean("activation_checkpointing.cpu_checkpointing", false))
      c.fail("activation_checkpointing.cpu_checkpointing", "is not priced; expected false");
    t.recompute = Recompute::kFull;  // every layer, as Megatron-DeepSpeed checkpoints them
    t.recompute_layers = 0;
  } else {
    t.recompute = Recompute::kNone;
  }
  const std::int64_t train = c.integer("train_batch_size", 0, 1);
  const std::int64_t micro = c.integer("train_micro_batch_size_per_gpu", 0, 1);
  const std::int64_t accumulation = c.integer("gradient_accumulation_steps", 0, 1);
  if (micro == 0)
    c.fail("train_micro_batch_size_per_gpu", "is missing (paraplan needs the micro-batch)");
  t.micro_batch = micro;
  if (train > 0 && accumulation > 0) {
    if (train % (micro * accumulation))
      c.fail("train_batch_size",
             fmt::format("{} is not micro-batch × accumulation × GPUs ({} × {} × n)", train, micro,
                         accumulation));
    out.world_size = static_cast<int>(train / (micro * accumulation));
  }
  t.global_batch = train;  // 0: micro-batch × accumulation × dp, once dp is known
  out.accumulation = static_cast<int>(accumulation);
  return out;
}

std::vector<std::pair<std::string, std::string>> deepspeed_searched_options(
    const TrainingConfig& t) {
  auto yes = [](bool b) { return std::string(b ? "true" : "false"); };
  return {{"train_micro_batch_size_per_gpu", fmt::format("{}", t.micro_batch)},
          {"gradient_accumulation_steps", fmt::format("{}", t.microbatches())},
          {"zero_optimization.stage", fmt::format("{}", t.zero_stage)},
          {"zero_optimization.overlap_comm", yes(t.overlap_grad_reduce)},
          {"activation_checkpointing", t.recompute == Recompute::kNone ? "absent" : "present"}};
}

}  // namespace paraplan::io
