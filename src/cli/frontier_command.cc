// The frontier subcommand.
#include "cli/frontier_command.h"

#include <fmt/format.h>

#include <iostream>
#include <map>
#include <memory>

#include "api/frontier.h"
#include "api/inputs.h"
#include "api/plan.h"
#include "api/results_json.h"
#include "cli/flags.h"
#include "cli/progress.h"
#include "cli/transformer_common.h"
#include "io/svg_plot.h"
#include "ir/error.h"
#include "ir/units.h"
#include "report/plan_report.h"

namespace paraplan::cli {
namespace {

struct FrontierArgs {
  std::string input;
  std::string format = "auto";
  std::string memory, bandwidth;
  int microbatches = 0;
  bool devices_given = false;
  double memory_step = 0.01;
  double time_limit_s = 30;
  std::string model;
  std::string cluster;  ///< empty: not given (the transformer planner then uses dgx-a100)
  int devices = 8;
  std::int64_t batch = 512;
  TransformerKnobs knobs;
  bool uniform_stages = false;
  bool json = false;
  std::string svg;
  bool quiet = false;
  std::vector<std::string> given;  ///< the flags on the command line (set by the callback)
};

const std::vector<std::string> kOutputFlags = {"--svg", "--json", "--quiet"};
const std::vector<std::string> kPipelineFlags = {"INPUT",        "--format",       "--memory",
                                                 "--bandwidth",  "--microbatches", "--memory-step",
                                                 "--time-limit", "--cluster",      "--devices"};
const std::vector<std::string> kLlmFlags = {"--model", "--cluster",        "--devices",
                                            "--batch", "--uniform-stages", "--memory"};

// The pipeline planner's frontier (Piper's cost model) on a layer model.
int run_pipeline(const FrontierArgs& a) {
  refuse_other_flags(a.given, joined(kPipelineFlags, kOutputFlags),
                     "the pipeline planner's frontier (INPUT)");
  api::Workload w =
      api::load_workload({a.input, a.format, a.cluster, 0, a.devices_given ? a.devices : 8});
  const PiperSettings settings = api::piper_settings(
      w, a.devices_given ? a.devices : 0, a.memory.empty() ? 0 : bytes_flag("--memory", a.memory),
      a.bandwidth.empty() ? 0 : bandwidth_flag("--bandwidth", a.bandwidth), a.microbatches);
  api::PipelineFrontierRequest request{w.model, settings, {}};
  request.options.memory_step = a.memory_step;
  request.options.time_limit_s = a.time_limit_s;
  TerminalProgress progress(a.quiet);
  request.options.progress = progress.sink();
  const api::PipelineFrontierPlan found =
      api::pipeline_frontier(request, a.input.empty() ? "default workload" : a.input);
  const PipelineFrontierResult& f = found.frontier;
  const double seconds = found.seconds;
  const Model& model = w.model;
  if (!a.svg.empty()) {
    std::map<int, io::PlotSeries> by_devices;
    for (const auto& p : f.points) {
      auto& series = by_devices[p.objectives.devices];
      series.name = fmt::format("{} devices", p.objectives.devices);
      series.points.emplace_back(p.objectives.peak_bytes / 1073741824.0, p.objectives.time_s);
    }
    std::vector<io::PlotSeries> series;
    for (auto it = by_devices.rbegin(); it != by_devices.rend(); ++it) series.push_back(it->second);
    io::write_text_file(a.svg, io::scatter_svg(series, model.name + ": time against memory",
                                               "peak memory per device (GiB)",
                                               "time per sample (Piper's objective)"));
  }
  if (a.json) {
    std::cout << api::pipeline_frontier_json(request, found).dump(2) << "\n";
    return 0;
  }
  std::cout << fmt::format(
      "{}: {} non-dominated plans over (Piper's time per sample, peak memory "
      "per device, devices) on up to {} devices; {} planner runs in {:.3f} s{}\n",
      model.name, f.points.size(), settings.max_devices, f.solves, seconds,
      f.truncated ? " (truncated: time or point limit)" : "");
  std::cout << fmt::format("{:>16} {:>12} {:>7} {:>7}\n", "objective", "memory", "devices",
                           "stages");
  for (const auto& p : f.points)
    std::cout << fmt::format("{:>16.9g} {:>12} {:>7} {:>7}\n", p.objectives.time_s,
                             format_bytes(p.objectives.peak_bytes), p.objectives.devices,
                             p.plan.stages.size());
  if (!a.svg.empty()) std::cout << "plot written to " << a.svg << "\n";
  return 0;
}

int run(const FrontierArgs& a) {
  if (a.model.empty() || !api::is_transformer_model(a.model)) {
    if (!a.model.empty())
      throw Error(ErrorKind::kUsage, "",
                  "frontier: --model takes a transformer; give a layer model as INPUT");
    return run_pipeline(a);
  }
  if (!a.input.empty())
    throw Error(ErrorKind::kUsage, "", "give either INPUT or --model, not both");
  refuse_other_flags(a.given, joined(joined(kLlmFlags, transformer_knob_flags()), kOutputFlags),
                     "the transformer frontier (--model " + a.model + ")");
  const std::string cluster_name = a.cluster.empty() ? "dgx-a100" : a.cluster;
  const TransformerConfig model = api::load_transformer(a.model);
  Cluster cluster = api::one_device_type(api::load_cluster(cluster_name, a.devices), a.devices,
                                         "the transformer frontier");
  TransformerKnobs k = a.knobs;
  k.memory = a.memory;
  api::apply_memory_knobs(k, cluster);
  LlmSearchSettings s = search_settings(k, a.devices, a.batch, a.uniform_stages);
  TerminalProgress progress(a.quiet);
  s.progress = progress.sink();
  const api::TransformerFrontierRequest request{model, cluster,
                                                api::load_calibration(k.calibration, cluster), s};
  const LlmFrontierResult f = api::transformer_frontier(request);
  if (!a.svg.empty())
    io::write_text_file(
        a.svg, report::frontier_svg(f.points, fmt::format("{}: time against memory", model.name)));
  if (a.json) {
    std::cout << api::transformer_frontier_json(request, cluster_name, f).dump(2) << "\n";
    return 0;
  }
  std::cout << fmt::format(
      "{} on up to {} × {}: {} non-dominated plans over (iteration time, "
      "peak memory per device, devices) from {} configurations in {:.3f} s\n",
      model.name, a.devices, cluster.device_types[0].name, f.points.size(), f.evaluated, f.seconds);
  std::cout << fmt::format("{:>12} {:>12} {:>7}  {}\n", "iteration s", "memory", "devices",
                           "configuration");
  for (const auto& c : f.points) {
    const TrainingConfig& t = c.config;
    std::cout << fmt::format(
        "{:>12.4f} {:>12} {:>7}  tp {} cp {} pp {} dp {} ep {} mb {} vpp {} "
        "recompute {}{} zero {}{}\n",
        c.result.iteration_time_s, format_bytes(c.result.memory.peak_bytes), t.devices(), t.tp,
        t.cp, t.pp, t.dp, t.ep, t.micro_batch, t.vpp, recompute_text(t),
        t.sequence_parallel ? " sp" : "", t.zero_stage, t.overlap_grad_reduce ? " overlap" : "");
  }
  if (!a.svg.empty()) std::cout << "plot written to " << a.svg << "\n";
  return 0;
}

}  // namespace

void add_frontier_command(CLI::App& app, int& exit_code) {
  auto a = std::make_shared<FrontierArgs>();
  CLI::App* cmd = app.add_subcommand(
      "frontier",
      "Every non-dominated transformer plan over (iteration time, peak memory per "
      "device, devices used), on up to --devices devices (halving down to 1)");
  cmd->add_option("INPUT", a->input,
                  "Layer model (Piper JSON, paraplan model JSON, DAPPLE profile): the pipeline "
                  "planner's frontier; default: the built-in workload");
  cmd->add_option("--format", a->format, "INPUT format: piper, dapple, native (default: detect)");
  cmd->add_option("--memory", a->memory, "Pipeline planner: memory per device, e.g. 16GiB");
  cmd->add_option("--bandwidth", a->bandwidth,
                  "Pipeline planner: bandwidth per device, e.g. 25GiB/s");
  cmd->add_option("--microbatches", a->microbatches, "Pipeline planner: micro-batches per batch N")
      ->check(CLI::Range(1, 1000000000));
  cmd->add_option("--memory-step", a->memory_step,
                  "Pipeline planner: each next point at least this fraction leaner (default 0.01; "
                  "0: the exact frontier)")
      ->check(CLI::Range(0.0, 0.5));
  cmd->add_option(
         "--time-limit", a->time_limit_s,
         "Pipeline planner: stop after this many seconds with the points found (default 30)")
      ->check(CLI::Range(0.0, 1e6));
  cmd->add_option("--model", a->model,
                  "Built-in transformer (gpt3-175b, llama3-405b, ...) or a config.json");
  cmd->add_option("--cluster", a->cluster,
                  "Cluster preset (dgx-a100, dgx-h100, h200, vtrain-a100; transformer default "
                  "dgx-a100; pipeline planner: one node, or --devices) or a paraplan cluster file");
  cmd->add_option("--devices", a->devices, "Most devices to use (transformer default 8)")
      ->check(CLI::Range(1, 1 << 20))
      ->each([a](const std::string&) { a->devices_given = true; });
  cmd->add_option("--batch", a->batch, "Global batch in sequences (default 512)")
      ->check(CLI::Range(1, 1 << 30));
  add_transformer_knob_flags(cmd, a->knobs, true);
  cmd->add_flag("--uniform-stages", a->uniform_stages,
                "Keep the layers evenly split across stages");
  cmd->add_option("--svg", a->svg, "Write the frontier as an SVG plot");
  cmd->add_flag("--json", a->json,
                "Print JSON: points with objective, peak_memory_bytes, devices_used");
  add_quiet_flag(cmd, a->quiet);
  cmd->callback([a, cmd, &exit_code] {
    a->given = given_flags(*cmd);
    exit_code = run(*a);
  });
}

}  // namespace paraplan::cli
