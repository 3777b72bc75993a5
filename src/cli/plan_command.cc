// The plan subcommand: flag parsing, input loading, and dispatch to the planners.
#include "cli/plan_command.h"

#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "api/inputs.h"
#include "api/plan.h"
#include "cli/flags.h"
#include "cli/intra_op_command.h"
#include "cli/llm_plan_command.h"
#include "cli/plan_args.h"
#include "cli/progress.h"
#include "ir/error.h"

namespace paraplan::cli {
namespace {

[[noreturn]] void usage(const std::string& message) { throw Error(ErrorKind::kUsage, "", message); }

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

int run_intra_op_path(const PlanArgs& args) {
  if (args.cost_model != "auto" && args.cost_model != "pase")
    usage("the intra-op planner prices with --cost-model pase (got \"" + args.cost_model + "\")");
  refuse_other_flags(args.given, joined(kIntraOpFlags, kOutputFlags),
                     "the intra-op planner (operator graphs)");
  IntraOpArgs a;
  a.input = args.input;
  a.format = args.format;
  a.model = args.model;
  a.devices = args.devices;
  a.batch = args.batch;
  a.flops = args.flops;
  a.bandwidth = args.bandwidth;
  a.min_block = args.min_block;
  a.keep_all_flows = args.keep_all_flows;
  a.powers_of_two = args.powers_of_two;
  a.all_devices = args.all_devices;
  a.json = args.json;
  a.output = args.output;
  a.dot = args.dot;
  a.report = args.report;
  a.trace = args.trace;
  a.progress = args.progress;
  return run_intra_op(a);
}

// Without INPUT or --model, plan answers the question most users come with: how to train a
// well-known LLM on a realistic cluster.
constexpr const char* kShowcaseModel = "llama3-70b";
constexpr const char* kShowcaseCluster = "dgx-h100";
constexpr int kShowcaseDevices = 64;
constexpr int kShowcaseBatch = 256;
constexpr int kShowcaseSeqLen = 8192;

int run_llm_path(const PlanArgs& args, bool showcase = false) {
  if (!args.input.empty()) usage("give either INPUT or --model, not both");
  refuse_other_flags(args.given, joined(joined(kLlmFlags, transformer_knob_flags()), kOutputFlags),
                     showcase ? fmt::format("the transformer planner (without INPUT or --model it "
                                            "plans {}; give INPUT, or --planner pipeline for the "
                                            "built-in layer model)",
                                            kShowcaseModel)
                              : "the transformer planner (--model " + args.model + ")");
  LlmPlanArgs a;
  a.model = showcase ? kShowcaseModel : args.model;
  a.cluster = showcase && args.cluster_file.empty() ? kShowcaseCluster : args.cluster_file;
  a.devices = showcase && !args.devices ? kShowcaseDevices : args.devices;
  a.batch = showcase && !args.batch ? kShowcaseBatch : args.batch;
  a.knobs = args.knobs;
  a.knobs.memory = args.memory;  // plan's own --memory: the device memory of the cluster
  if (showcase && !a.knobs.seq_len) a.knobs.seq_len = kShowcaseSeqLen;
  a.showcase = showcase;
  a.uniform_stages = args.uniform_stages;
  a.resimulate = args.resimulate;
  a.report = args.report;
  a.trace = args.trace;
  a.progress = args.progress;
  a.top = args.top;
  a.time_limit_s = args.time_limit_s;
  a.json = args.json;
  a.output = args.output;
  a.export_to = args.export_to;
  a.model_device = args.model_device;
  return run_llm_plan(a);
}

int run(PlanArgs args) {
  TerminalProgress progress(args.quiet);
  args.progress = progress.sink();
  if (args.input.empty() && args.model.empty() && (args.planner == "auto" || args.planner == "llm"))
    return run_llm_path(args, true);
  if (!args.model.empty() && api::is_transformer_model(args.model) &&
      (args.planner == "auto" || args.planner == "llm"))
    return run_llm_path(args);
  if (args.planner == "llm")
    usage("--planner llm needs --model with a transformer (built-in or config.json)");
  std::string planner = args.planner;
  if (planner == "auto")
    planner = !args.model.empty() || args.format == "onnx" || ends_with(args.input, ".onnx")
                  ? "intra-op"
                  : "pipeline";
  if (planner == "intra-op") return run_intra_op_path(args);
  if (planner != "pipeline")
    usage("--planner must be pipeline or intra-op (got \"" + args.planner + "\")");
  return run_pipeline_path(args);
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
  cmd->add_option("INPUT", args->input,
                  "Model file: Piper JSON, DAPPLE/PipeDream profile text, paraplan model JSON, or "
                  "ONNX");
  cmd->add_option("--format", args->format,
                  "Input format: piper, dapple, native or onnx (default: detect)");
  cmd->add_option("--cost-model", args->cost_model,
                  "piper (time per sample), dapple (iteration latency) or pase (intra-op); "
                  "default: by input");
  cmd->add_option("--cluster", args->cluster_file,
                  "Cluster preset (dgx-a100, dgx-h100, h200, vtrain-a100; with a network graph: "
                  "dgx-a100-rails, dgx-h100-rails, pcie-2socket, oversubscribed-2to1, "
                  "mixed-a100-h100; the pipeline planner: one node, or --devices) or a paraplan "
                  "cluster file (JSON or YAML)");
  cmd->add_option("--placement", args->placement,
                  "Pipeline planner on a cluster: search (place stage replicas on the network's "
                  "links, default) or rank-order (stages on consecutive devices, priced)")
      ->check(CLI::IsMember({"search", "rank-order"}));
  cmd->add_option("--model-device", args->model_device,
                  "Pipeline planner: the device the model's times were measured on (default: the "
                  "cluster's first); other device types run them scaled by peak FLOP/s. "
                  "Transformer planner on several device types: the type the type-blind "
                  "comparison takes every device for (default: the slowest)");
  cmd->add_option("--coarsen", args->coarsen,
                  "Pipeline planner: coarsen the layer graph to K super-nodes, solve exactly, "
                  "refine (default: exact; graphs too large for it are coarsened to 64)")
      ->check(CLI::Range(2, 100000));
  cmd->add_option("--devices", args->devices, "Number of devices K (overrides the input)")
      ->check(CLI::Range(1, 1000000));
  cmd->add_option("--memory", args->memory,
                  "Memory per device: 8GiB (2^30), 80GB (10^9) or a number of bytes");
  cmd->add_option(
      "--bandwidth,--bw", args->bandwidth,
      "Bandwidth per device with its unit: 25GB/s (10^9 bytes/s), 25GiB/s (2^30) or "
      "3e9B/s (pipeline planner default: the input's; intra-op: 16GB/s); --bw is an alias");
  cmd->add_option("--microbatches", args->microbatches, "Micro-batches per batch N (Piper)")
      ->check(CLI::Range(1, 1000000000));
  cmd->add_option("--machines", args->machines,
                  "DAPPLE: machines x devices per machine, e.g. 2x8, or sizes like 4,8,4");
  cmd->add_option("--batch", args->batch,
                  "Global batch size in samples (DAPPLE; intra-op: default 128)")
      ->check(CLI::Range(1, 1000000000));
  cmd->add_option("--microbatch-size", args->microbatch_size,
                  "DAPPLE: samples per micro-batch (default 1)")
      ->check(CLI::Range(1, 1000000000));
  cmd->add_option("--profile-batch", args->profile_batch,
                  "DAPPLE: batch size the profile was measured at (default: from the file name, "
                  "…-pbs-N.txt)")
      ->check(CLI::Range(1, 1000000000));
  cmd->add_option("--planner", args->planner,
                  "pipeline (stages x data x tensor parallel), intra-op (per-layer sharding) or "
                  "llm (transformer knobs); default: llm for transformer --model, intra-op for "
                  "operator graphs and ONNX, else pipeline");
  cmd->add_option(
      "--model", args->model,
      "Built-in transformer (gpt3-175b, llama3-405b, ...) or config.json; or a built-in "
      "operator graph (alexnet, resnet101, inception3, rnnlm, transformer)");
  cmd->add_option("--flops", args->flops,
                  "Intra-op: peak compute per device with its unit, e.g. 312TFLOP/s (default "
                  "10TFLOP/s)");
  cmd->add_option("--min-block", args->min_block,
                  "Intra-op: smallest extent a split may leave per device (PaSE's cutoff; "
                  "default 4 for the CNNs, 1 otherwise)")
      ->check(CLI::Range(1, 1000000000));
  cmd->add_flag("--keep-all-flows", args->keep_all_flows,
                "Intra-op: price every tensor flow between two layers (PaSE keeps only the last)");
  cmd->add_flag("--powers-of-two", args->powers_of_two,
                "Intra-op: split dimensions by powers of two only");
  cmd->add_flag("--all-devices", args->all_devices, "Intra-op: every layer uses all devices");
  cmd->add_option("--dot", args->dot, "Intra-op: write the graph with its splits for Graphviz");
  add_transformer_knob_flags(cmd, args->knobs, true);
  cmd->add_flag("--uniform-stages", args->uniform_stages,
                "Transformer: keep the layers evenly split across stages (no non-uniform search)");
  cmd->add_option("--report", args->report,
                  "Write a self-contained HTML report of the best plan (summary, stages or layers, "
                  "simulated timeline, memory, frontier; intra-op: the operator graph)");
  cmd->add_option(
      "--trace", args->trace,
      "Write a Chrome trace of the best plan's simulated iteration (Perfetto, chrome://tracing)");
  cmd->add_option(
         "--resimulate", args->resimulate,
         "Transformer: replay the first K plans in the simulator and rank them by its time")
      ->check(CLI::Range(0, 1000));
  cmd->add_option("--top", args->top, "Transformer: how many plans to list (default 5)")
      ->check(CLI::Range(1, 1000));
  cmd->add_option("--time-limit", args->time_limit_s,
                  "Transformer: stop after this many seconds with the best plan so far")
      ->check(CLI::Range(0.0, 1e6));
  cmd->add_option("--export", args->export_to,
                  "Transformer: print the best plan for a training engine: megatron (Megatron-LM "
                  "arguments) or deepspeed (DeepSpeed JSON config)");
  cmd->add_flag("--json", args->json, "Print the plan as JSON instead of a table");
  add_quiet_flag(cmd, args->quiet);
  cmd->add_option("-o,--output", args->output, "Also write the plan as JSON to this file");
  cmd->callback([args, cmd, &exit_code] {
    args->given = given_flags(*cmd);
    exit_code = run(*args);
  });
}

}  // namespace paraplan::cli
