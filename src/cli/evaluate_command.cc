// The evaluate subcommand.
#include "cli/evaluate_command.h"

#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "api/evaluate.h"
#include "api/inputs.h"
#include "api/results_json.h"
#include "cli/transformer_common.h"
#include "io/transformer_json.h"
#include "ir/error.h"
#include "ir/training_rules.h"
#include "ir/units.h"

namespace paraplan::cli {
namespace {

struct EvaluateArgs {
  std::string model;
  std::string cluster = "dgx-a100";
  int devices = 0;
  std::int64_t batch = 0;
  TransformerKnobs knobs;
  bool json = false;
  std::string export_to;
};

int run(const EvaluateArgs& a) {
  TransformerConfig model = api::load_transformer(a.model);
  const TransformerKnobs& k = a.knobs;
  const TrainingConfig t = api::training_config(k, a.devices, a.batch);
  const int devices = t.devices();
  Cluster cluster =
      api::one_device_type(api::load_cluster(a.cluster, devices), devices, "paraplan evaluate");
  api::apply_memory_knobs(k, cluster);
  const AnalyticResult r =
      api::evaluate({model, cluster, api::load_calibration(k.calibration, cluster), t});
  if (!a.export_to.empty()) {
    std::cout << api::export_plan(a.export_to, model, t);
    return 0;
  }
  const MemoryBreakdown& m = r.memory;
  const DeviceType& device = cluster.device_types[0];
  if (a.json) {
    std::cout << api::evaluate_json(t, r, model.name, a.cluster, device).dump(2) << "\n";
    return 0;
  }
  std::string layout;
  for (int n : r.stage_layers) layout += (layout.empty() ? "" : ",") + std::to_string(n);
  std::cout << fmt::format(
                   "{} on {} × {} ({}), batch {} × {} tokens, micro-batch {}, tp {} cp {} "
                   "pp {} dp {} ep {} vpp {}, recompute {}{}, ZeRO {}{}, {} attention\n",
                   model.name, devices, device.name, a.cluster, t.global_batch, t.seq_len,
                   t.micro_batch, t.tp, t.cp, t.pp, t.dp, t.ep, t.vpp, recompute_text(t),
                   t.sequence_parallel ? ", sequence parallel" : "", t.zero_stage,
                   t.overlap_grad_reduce ? ", overlapped gradient reduction" : "",
                   io::attention_text(t.attention))
            << fmt::format("stack: {}{}{}{}, gradients reduced in {}\n", stack_text(t.stack),
                           t.tp_comm_overlap ? ", tensor-parallel overlap" : "",
                           t.overlap_p2p_comm ? ", pipeline sends overlapped" : "",
                           t.overlap_param_gather ? ", parameter gather overlapped" : "",
                           t.bf16_gradient_reduction ? "bf16" : "fp32")
            << fmt::format(
                   "iteration time: {:.4f} s   tokens/s: {:.0f}   TFLOP/s per device: {:.1f}   "
                   "MFU: {:.1f}%\n",
                   r.iteration_time_s, r.tokens_per_s, r.tflops_per_device, 100 * r.mfu)
            << fmt::format(
                   "  pipeline {:.4f} s (bubble {:.4f} s), data-parallel gradient sync {:.4f} s, "
                   "optimizer {:.4f} s\n",
                   r.pipeline_s, r.bubble_s, r.dp_allreduce_s, r.optimizer_s)
            << fmt::format("  layers per stage: {}\n", layout)
            << fmt::format("memory per device (busiest stage): {} of {} ({:.1f} %{}) — {}\n",
                           format_bytes(m.peak_bytes), format_bytes(device.memory_bytes),
                           100 * m.peak_bytes / device.memory_bytes,
                           device.memory_headroom_bytes > 0
                               ? fmt::format("; limit {} after {} headroom",
                                             format_bytes(device.memory_limit_bytes()),
                                             format_bytes(device.memory_headroom_bytes))
                               : "",
                           r.fits ? "fits" : "OUT OF MEMORY")
            << fmt::format(
                   "  weights {}, gradients {}, optimizer {}, activations {}, buffers {}, "
                   "allocator fragmentation {}, runtime reserved {}\n",
                   format_bytes(m.weights_bytes), format_bytes(m.gradients_bytes),
                   format_bytes(m.optimizer_bytes), format_bytes(m.activations_bytes),
                   format_bytes(m.buffers_bytes), format_bytes(m.fragmentation_bytes),
                   format_bytes(m.reserved_bytes));
  return 0;
}

}  // namespace

void add_evaluate_command(CLI::App& app, int& exit_code) {
  auto a = std::make_shared<EvaluateArgs>();
  CLI::App* cmd =
      app.add_subcommand("evaluate",
                         "Price one transformer training configuration: iteration time, tokens/s, "
                         "TFLOP/s per device, MFU and memory per device");
  cmd->add_option("--model", a->model,
                  "Built-in transformer (gpt3-175b, llama3-405b, ...) or a config.json")
      ->required();
  cmd->add_option("--cluster", a->cluster,
                  "Cluster preset (dgx-a100, dgx-h100, h200, vtrain-a100) or a paraplan-cluster "
                  "file (.json, .yaml)");
  cmd->add_option("--devices", a->devices, "GPUs (default tp × cp × pp × dp)")
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--batch", a->batch, "Global batch in sequences (default micro-batch × dp)")
      ->check(CLI::Range(1, 1 << 30));
  add_transformer_knob_flags(cmd, a->knobs, false);
  cmd->add_flag("--json", a->json, "Print JSON");
  cmd->add_option("--export", a->export_to,
                  "Print the configuration for a training engine instead: megatron (Megatron-LM "
                  "arguments) or deepspeed (DeepSpeed JSON config)");
  cmd->callback([a, &exit_code] { exit_code = run(*a); });
}

}  // namespace paraplan::cli
