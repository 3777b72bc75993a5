// The evaluate subcommand.
#include "cli/evaluate_command.h"

#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "cost/analytic.h"
#include "ir/error.h"
#include "ir/units.h"
#include "cli/transformer_common.h"

namespace paraplan::cli {
namespace {

struct EvaluateArgs {
  std::string model;
  std::string cluster = "dgx-a100";
  int devices = 0;
  std::int64_t batch = 0;
  std::int64_t seq_len = 2048;
  std::int64_t micro_batch = 1;
  int tp = 1, pp = 1, dp = 0;
  std::string recompute = "full";
  bool sequence_parallel = false;
  int zero = 0;
  bool json = false;
  std::string export_to;
};

[[noreturn]] void usage(const std::string& message) { throw Error(ErrorKind::kUsage, "", message); }

int run(const EvaluateArgs& a) {
  TransformerConfig model = load_transformer(a.model);
  if (a.tp < 1 || a.pp < 1 || a.dp < 0) usage("--tp, --pp and --dp must be at least 1");
  int devices = a.devices > 0 ? a.devices : a.tp * a.pp * std::max(a.dp, 1);
  int dp = a.dp;
  if (dp == 0) {
    if (devices % (a.tp * a.pp))
      usage(fmt::format("--devices {}: must be divisible by tp × pp = {} × {}", devices, a.tp, a.pp));
    dp = devices / (a.tp * a.pp);
  }
  if (a.tp * a.pp * dp != devices)
    usage(fmt::format("--devices {} is not tp × pp × dp = {} × {} × {} = {}", devices, a.tp, a.pp,
                      dp, a.tp * a.pp * dp));
  const Cluster cluster = load_cluster_preset(a.cluster, devices);
  TrainingConfig t;
  t.seq_len = a.seq_len;
  t.micro_batch = a.micro_batch;
  t.global_batch = a.batch > 0 ? a.batch : a.micro_batch * dp;
  t.tp = a.tp;
  t.pp = a.pp;
  t.dp = dp;
  t.recompute = parse_recompute(a.recompute);
  t.sequence_parallel = a.sequence_parallel;
  t.zero_stage = a.zero;
  AnalyticCostModel cost(model, cluster, default_calibration(cluster.device_types[0].name));
  AnalyticResult r = cost.evaluate(t);
  if (!a.export_to.empty()) {
    std::cout << engine_export(a.export_to, model, t);
    return 0;
  }
  const MemoryBreakdown& m = r.memory;
  if (a.json) {
    io::Json j = priced_json(t, r, devices);
    j["model"] = model.name;
    j["cluster"] = a.cluster;
    j["memory"]["device_memory_bytes"] = cluster.device_types[0].memory_bytes;
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  std::cout << fmt::format("{} on {} × {} ({}), batch {} × {} tokens, micro-batch {}, tp {} pp {} dp {}, "
                           "recompute {}{}, ZeRO {}\n",
                           model.name, devices, cluster.device_types[0].name, a.cluster,
                           t.global_batch, t.seq_len, t.micro_batch, t.tp, t.pp, t.dp, a.recompute,
                           t.sequence_parallel ? ", sequence parallel" : "", t.zero_stage)
            << fmt::format("iteration time: {:.4f} s   tokens/s: {:.0f}   TFLOP/s per device: {:.1f}   MFU: {:.1f}%\n",
                           r.iteration_time_s, r.tokens_per_s, r.tflops_per_device, 100 * r.mfu)
            << fmt::format("  pipeline {:.4f} s (bubble {:.4f} s), data-parallel all-reduce {:.4f} s, optimizer {:.4f} s\n",
                           r.pipeline_s, r.bubble_s, r.dp_allreduce_s, r.optimizer_s)
            << fmt::format("memory per device: {} of {} — {}\n", format_bytes(m.peak_bytes),
                           format_bytes(cluster.device_types[0].memory_bytes),
                           r.fits ? "fits" : "OUT OF MEMORY")
            << fmt::format("  weights {}, gradients {}, optimizer {}, activations {}, buffers {}\n",
                           format_bytes(m.weights_bytes), format_bytes(m.gradients_bytes),
                           format_bytes(m.optimizer_bytes), format_bytes(m.activations_bytes),
                           format_bytes(m.buffers_bytes));
  return 0;
}

}  // namespace

void add_evaluate_command(CLI::App& app, int& exit_code) {
  auto a = std::make_shared<EvaluateArgs>();
  CLI::App* cmd = app.add_subcommand(
      "evaluate", "Price one transformer training configuration: iteration time, tokens/s, "
                  "TFLOP/s per device, MFU and memory per device");
  cmd->add_option("--model", a->model, "Built-in transformer (gpt3-175b, llama3-405b, ...) or a config.json")
      ->required();
  cmd->add_option("--cluster", a->cluster, "Cluster preset: dgx-a100, dgx-h100, h200, vtrain-a100");
  cmd->add_option("--devices", a->devices, "GPUs (default tp × pp × dp)")->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--batch", a->batch, "Global batch in sequences (default micro-batch × dp)")
      ->check(CLI::Range(1, 1 << 30));
  cmd->add_option("--seq-len", a->seq_len, "Sequence length in tokens (default 2048)")
      ->check(CLI::Range(1, 1 << 24));
  cmd->add_option("--micro-batch", a->micro_batch, "Sequences per micro-batch (default 1)")
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--tp", a->tp, "Tensor-parallel size")->check(CLI::Range(1, 1 << 16));
  cmd->add_option("--pp", a->pp, "Pipeline-parallel size")->check(CLI::Range(1, 1 << 16));
  cmd->add_option("--dp", a->dp, "Data-parallel size (default devices ÷ (tp × pp))")
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--recompute", a->recompute, "Activation recomputation: none, selective, full (default)");
  cmd->add_flag("--sequence-parallel", a->sequence_parallel, "Megatron sequence parallelism");
  cmd->add_option("--zero", a->zero, "ZeRO stage / distributed optimizer: 0-3")->check(CLI::Range(0, 3));
  cmd->add_flag("--json", a->json, "Print JSON");
  cmd->add_option("--export", a->export_to,
                  "Print the configuration for a training engine instead: megatron (Megatron-LM "
                  "arguments) or deepspeed (DeepSpeed JSON config)");
  cmd->callback([a, &exit_code] { exit_code = run(*a); });
}

}  // namespace paraplan::cli
