// The plan subcommand: its flags become an api::PlanOptions; the API plans; the answer is printed
// (in words or as JSON) and the products asked for are written.
#include "cli/plan_command.h"

#include <iostream>
#include <iterator>
#include <memory>

#include "api/plan_job.h"
#include "cli/flags.h"
#include "cli/progress.h"
#include "cli/transformer_common.h"
#include "io/json_fields.h"
#include "io/native_json.h"
#include "render/chrome_trace.h"

namespace paraplan::cli {
namespace {

struct PlanArgs {
  api::PlanOptions options;
  bool json = false, quiet = false;
  std::string output, report, trace, dot;
  std::vector<std::string> from;
};

int run(PlanArgs& args, const std::vector<std::string>& given) {
  api::PlanOptions& o = args.options;
  o.given = fields_of(given);
  o.words = !args.json;
  o.plan_file = !args.output.empty();
  o.trace = !args.trace.empty();
  o.report = !args.report.empty();
  o.dot = !args.dot.empty();
  if (!args.from.empty()) {
    o.from_format = args.from[0];
    o.from_file = args.from[1];
    if (o.from_file == "-") o.from_text.assign(std::istreambuf_iterator<char>(std::cin), {});
  }
  TerminalProgress progress(args.quiet);
  o.progress = progress.sink();
  const api::PlanOutcome out = api::plan(o);
  if (out.failure) {  // nothing fits: the document shows what would
    if (!args.output.empty()) io::write_text_file(args.output, out.file.dump(2) + "\n");
    if (args.json) std::cout << out.document.dump(2) << "\n";
    throw *out.failure;
  }
  if (!args.output.empty()) io::write_text_file(args.output, out.file.dump(2) + "\n");
  if (!args.dot.empty()) io::write_text_file(args.dot, out.dot);
  if (!args.trace.empty())
    io::write_text_file(args.trace, render::chrome_trace_text(*out.timeline));
  if (!args.report.empty()) io::write_text_file(args.report, out.report_html);
  if (!out.exported.empty())
    std::cout << out.exported;
  else
    std::cout << (args.json ? out.document.dump(2) + "\n" : out.words);
  return 0;
}

}  // namespace

void add_plan_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<PlanArgs>();
  CLI::App* cmd = app.add_subcommand(
      "plan",
      "Find the best plan: the training knobs of a transformer (--model; without INPUT or "
      "--model: llama3-70b on 64 H100 of dgx-h100, 256 x 8192 tokens), pipeline stages for "
      "layer models and profiles (INPUT; --planner pipeline alone: a built-in GPT-3 "
      "2.7B-like layer model on 2x8 devices of 16 GiB), per-layer sharding for operator "
      "graphs (--model alexnet|..., ONNX files)");
  cmd->add_option("--stage-dp", args->options.stage_dp,
                  "Pipeline planner: each stage's data-parallel width, first stage first, e.g. "
                  "2,1,1 (the stage count is its length; --dp fixes every stage's)");
  cmd->add_option("--from", args->from,
                  "Start from the job as you launch it: megatron FILE (Megatron-LM arguments), "
                  "nemo FILE (a NeMo GPT recipe), deepspeed FILE (a ds_config.json), "
                  "torchtitan FILE (a job TOML) or bridge FILE (a Megatron-Bridge launch); keeps "
                  "its sequence length, global batch, "
                  "precision and devices, searches the rest, prints the change as a diff")
      ->expected(2)
      ->type_name("FORMAT FILE");
  cmd->add_flag("--explain", args->options.explain,
                "With --from: list the keys read and those ignored");
  cmd->add_option("INPUT", args->options.input,
                  "Model file: Piper JSON, DAPPLE/PipeDream profile text, paraplan model JSON, or "
                  "ONNX");
  cmd->add_option("--format", args->options.format,
                  "Input format: piper, dapple, native or onnx (default: detect)");
  cmd->add_option("--cost-model", args->options.cost_model,
                  "piper (time per sample), dapple (iteration latency) or pase (intra-op); "
                  "default: by input");
  cmd->add_option(
      "--cluster", args->options.cluster,
      "Cluster preset (dgx-a100, dgx-h100, h200, dgx-b200, gb200-nvl72, vtrain-a100; with a "
      "network graph: "
      "dgx-a100-rails, dgx-h100-rails, pcie-2socket, oversubscribed-2to1, "
      "mixed-a100-h100; the pipeline planner: one node, or --devices) or a paraplan "
      "cluster file (JSON or YAML)");
  cmd->add_option("--placement", args->options.placement,
                  "Pipeline planner on a cluster: search (place stage replicas on the network's "
                  "links, default) or rank-order (stages on consecutive devices, priced)")
      ->check(CLI::IsMember({"search", "rank-order"}));
  cmd->add_option("--objective", args->options.objective,
                  "Pipeline planner: what the plan minimises: iteration (the simulated iteration "
                  "under 1F1B: fill, drain, transfers, the unhidden all-reduce, the optimizer "
                  "step; default) or steady-state (Piper's: the bottleneck stage's time per "
                  "micro-batch)")
      ->check(CLI::IsMember({"iteration", "steady-state"}));
  cmd->add_option("--model-device", args->options.model_device,
                  "Pipeline planner: the device the model's times were measured on (default: the "
                  "cluster's first); other device types run them scaled by peak FLOP/s. "
                  "Transformer planner on several device types: the type the type-blind "
                  "comparison takes every device for (default: the slowest)");
  cmd->add_option("--coarsen", args->options.coarsen,
                  "Pipeline planner: coarsen the layer graph to K super-nodes, solve exactly, "
                  "refine (default: exact; graphs too large for it are coarsened to 64)")
      ->check(CLI::Range(2, 100000));
  add_count_option(cmd, Knob::kDevices, args->options.devices,
                   "Number of devices K (overrides the input; transformer default 8)");
  cmd->add_option("--memory", args->options.memory,
                  "Memory per device: 8GiB (2^30), 80GB (10^9) or a number of bytes");
  cmd->add_option(
      "--bandwidth,--bw", args->options.bandwidth,
      "Bandwidth per device with its unit: 25GB/s (10^9 bytes/s), 25GiB/s (2^30) or "
      "3e9B/s (pipeline planner default: the input's; intra-op: 16GB/s); --bw is an alias");
  cmd->add_option("--microbatches", args->options.microbatches, "Micro-batches per batch N (Piper)")
      ->check(CLI::Range(1, kMaxMicrobatches));
  cmd->add_option("--machines", args->options.machines,
                  "DAPPLE: machines x devices per machine, e.g. 2x8, or sizes like 4,8,4");
  add_count_option(cmd, Knob::kGlobalBatch, args->options.batch,
                   "Global batch size in samples (transformer: sequences, default 512; DAPPLE; "
                   "intra-op: default 128)");
  cmd->add_option("--microbatch-size", args->options.microbatch_size,
                  "DAPPLE: samples per micro-batch (default 1)")
      ->check(CLI::Range(1, 1000000000));
  cmd->add_option("--profile-batch", args->options.profile_batch,
                  "DAPPLE: batch size the profile was measured at (default: from the file name, "
                  "…-pbs-N.txt)")
      ->check(CLI::Range(1, 1000000000));
  cmd->add_option("--planner", args->options.planner,
                  "pipeline (stages x data x tensor parallel), intra-op (per-layer sharding) or "
                  "llm (transformer knobs); default: llm for transformer --model, intra-op for "
                  "operator graphs and ONNX, else pipeline");
  cmd->add_option(
      "--model", args->options.model,
      "Built-in transformer (gpt3-175b, llama3-405b, ...) or config.json; or a built-in "
      "operator graph (alexnet, resnet101, inception3, rnnlm, transformer)");
  cmd->add_option("--flops", args->options.flops,
                  "Intra-op: peak compute per device with its unit, e.g. 312TFLOP/s (default "
                  "10TFLOP/s)");
  cmd->add_option("--min-block", args->options.min_block,
                  "Intra-op: smallest extent a split may leave per device (PaSE's cutoff; "
                  "default 4 for the CNNs, 1 otherwise)")
      ->check(CLI::Range(1, 1000000000));
  cmd->add_flag("--keep-all-flows", args->options.keep_all_flows,
                "Intra-op: price every tensor flow between two layers (PaSE keeps only the last)");
  cmd->add_flag("--powers-of-two", args->options.powers_of_two,
                "Intra-op: split dimensions by powers of two only");
  cmd->add_flag("--all-devices", args->options.all_devices,
                "Intra-op: every layer uses all devices");
  cmd->add_option("--dot", args->dot, "Intra-op: write the graph with its splits for Graphviz");
  add_transformer_knob_flags(cmd, args->options.knobs, true);
  cmd->add_flag("--uniform-stages", args->options.uniform_stages,
                "Transformer: keep the layers evenly split across stages (no non-uniform search)");
  cmd->add_option("--report", args->report,
                  "Write a self-contained HTML report of the best plan (summary, stages or layers, "
                  "simulated timeline, memory, frontier; intra-op: the operator graph)");
  cmd->add_option(
      "--trace", args->trace,
      "Write a Chrome trace of the best plan's simulated iteration (Perfetto, chrome://tracing)");
  cmd->add_option(
         "--resimulate", args->options.resimulate,
         "Transformer: replay the first K plans in the simulator and rank them by its time")
      ->check(CLI::Range(0, 1000));
  cmd->add_option("--top", args->options.top, "Transformer: how many plans to list (default 5)")
      ->check(CLI::Range(1, 1000));
  cmd->add_option("--time-limit", args->options.time_limit_s,
                  "Stop searching after this many seconds (default 60; 0: no limit): the "
                  "transformer planner answers with the best plan so far, the pipeline planner "
                  "with the coarsened graph's plan; each says so")
      ->check(CLI::Range(0.0, 1e6));
  cmd->add_option("--export", args->options.export_to,
                  "Transformer: print the best plan for a training engine: megatron (Megatron-LM's "
                  "torchrun line), nemo (a NeMo recipe YAML), deepspeed (Megatron-DeepSpeed's "
                  "line and its DeepSpeed JSON), torchtitan (a job TOML, torchtitan "
                  "238fa99), torchtitan-recipe (torchtitan b5bcd76's Python configuration and "
                  "its launch) or bridge (a Megatron-Bridge run_recipe.py launch)");
  cmd->add_option("--train-tokens", args->options.train_tokens,
                  "Transformer: the question before buying — with --days, the fewest devices of "
                  "the preset's kind whose best plan trains this many tokens in time (15T, 300B, "
                  "or a count), and that plan");
  cmd->add_option("--days", args->options.days,
                  "Transformer: the deadline in days for --train-tokens")
      ->check(CLI::Range(1e-6, 1e6));
  cmd->add_option("--gpu-hour-price", args->options.gpu_hour_price,
                  "Transformer: with --train-tokens, the price of one device-hour (any currency): "
                  "the run's cost")
      ->check(CLI::Range(0.0, 1e9));
  cmd->add_flag("--json", args->json, "Print the plan as JSON instead of a table");
  add_quiet_flag(cmd, args->quiet);
  cmd->add_option("-o,--output", args->output, "Also write the plan as JSON to this file");
  cmd->callback([args, cmd, &exit_code] { exit_code = run(*args, given_flags(*cmd)); });
}

}  // namespace paraplan::cli
