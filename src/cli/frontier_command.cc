// The frontier subcommand: its flags become an api::FrontierOptions; the answer is printed and
// the plot written.
#include "cli/frontier_command.h"

#include <iostream>
#include <memory>

#include "api/jobs.h"
#include "cli/flags.h"
#include "cli/progress.h"
#include "cli/transformer_common.h"
#include "io/native_json.h"

namespace paraplan::cli {
namespace {

struct FrontierArgs {
  api::FrontierOptions options;
  bool json = false, quiet = false;
  std::string svg;
};

int run(FrontierArgs& a, const std::vector<std::string>& given) {
  api::FrontierOptions& o = a.options;
  o.given = fields_of(given);
  o.words = !a.json;
  o.svg = !a.svg.empty();
  TerminalProgress progress(a.quiet);
  o.progress = progress.sink();
  const api::JobOutcome out = api::frontier_job(o);
  if (!a.svg.empty()) io::write_text_file(a.svg, out.svg);
  std::cout << (a.json ? out.document.dump(2) + "\n" : out.words);
  if (!a.json && !a.svg.empty()) std::cout << "plot written to " << a.svg << "\n";
  return 0;
}

}  // namespace

void add_frontier_command(CLI::App& app, int& exit_code) {
  auto a = std::make_shared<FrontierArgs>();
  CLI::App* cmd = app.add_subcommand(
      "frontier",
      "Every non-dominated plan over (time, peak memory per device, devices used) on up to "
      "--devices devices: a transformer's, a layer model's pipelines or an operator graph's "
      "per-layer shardings");
  cmd->add_option("INPUT", a->options.input,
                  "Layer model (Piper JSON, paraplan model JSON, DAPPLE profile): the pipeline "
                  "planner's frontier; an ONNX file: the intra-op frontier; default: the built-in "
                  "workload");
  cmd->add_option("--format", a->options.format,
                  "INPUT format: piper, dapple, native (default: detect)");
  cmd->add_option("--memory", a->options.memory,
                  "Memory per device, e.g. 16GiB (intra-op: leave out points above it)");
  cmd->add_option("--bandwidth", a->options.bandwidth,
                  "Pipeline and intra-op: bandwidth per device, e.g. 25GiB/s (intra-op default "
                  "16GB/s)");
  cmd->add_option("--microbatches", a->options.microbatches,
                  "Pipeline planner: micro-batches per batch N")
      ->check(CLI::Range(1, kMaxMicrobatches));
  cmd->add_option("--memory-step", a->options.memory_step,
                  "Pipeline planner: each next point at least this fraction leaner (default 0.01; "
                  "0: the exact frontier)")
      ->check(CLI::Range(0.0, kMaxMemoryStep));
  cmd->add_option(
         "--time-limit", a->options.time_limit_s,
         "Pipeline planner: stop after this many seconds with the points found (default 30)")
      ->check(CLI::Range(0.0, 1e6));
  cmd->add_option("--model", a->options.model,
                  "Built-in transformer (gpt3-175b, llama3-405b, ...) or a config.json; or a "
                  "built-in operator graph (alexnet, resnet101, inception3, rnnlm, transformer)");
  cmd->add_option("--planner", a->options.planner,
                  "pipeline (a layer model), intra-op (per-layer sharding of an operator graph or "
                  "ONNX file: TensorOpt's frontier) or llm (a transformer); default: by the input");
  cmd->add_option("--flops", a->options.flops,
                  "Intra-op: peak compute per device with its unit, e.g. 312TFLOP/s (default "
                  "10TFLOP/s)");
  cmd->add_option("--min-block", a->options.min_block,
                  "Intra-op: smallest extent a split may leave per device (default: the graph's)")
      ->check(CLI::Range(1, 1000000000));
  cmd->add_flag("--powers-of-two", a->options.powers_of_two,
                "Intra-op: split dimensions by powers of two only");
  cmd->add_flag("--keep-all-flows", a->options.keep_all_flows,
                "Intra-op: price every tensor flow between two layers");
  cmd->add_option("--cluster", a->options.cluster,
                  "Cluster preset (dgx-a100, dgx-h100, h200, dgx-b200, gb200-nvl72, vtrain-a100; "
                  "transformer default "
                  "dgx-a100; pipeline planner: one node, or --devices) or a paraplan cluster file");
  add_count_option(cmd, Knob::kDevices, a->options.devices,
                   "Most devices to use (transformer default 8)");
  add_count_option(cmd, Knob::kGlobalBatch, a->options.batch,
                   "Global batch in sequences (default 512)");
  add_transformer_knob_flags(cmd, a->options.knobs, true);
  cmd->add_flag("--uniform-stages", a->options.uniform_stages,
                "Keep the layers evenly split across stages");
  cmd->add_option("--svg", a->svg, "Write the frontier as an SVG plot");
  cmd->add_flag("--json", a->json,
                "Print JSON: points with objective, peak_memory_bytes, devices_used");
  add_quiet_flag(cmd, a->quiet);
  cmd->callback([a, cmd, &exit_code] { exit_code = run(*a, given_flags(*cmd)); });
}

}  // namespace paraplan::cli
