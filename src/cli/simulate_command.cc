// The simulate subcommand.
#include "cli/simulate_command.h"

#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "cli/report.h"
#include "cost/analytic.h"
#include "io/chrome_trace.h"
#include "io/transformer_json.h"
#include "ir/error.h"
#include "ir/units.h"
#include "sim/transformer_program.h"

namespace paraplan::cli {
namespace {

struct SimulateArgs {
  std::string plan;
  std::string trace;
  std::string schedule;
  std::string report;
  bool json = false;
};

int run(const SimulateArgs& a) {
  const io::TransformerPlanFile f = io::read_transformer_plan(a.plan);
  const std::string where = a.plan + ": /config";
  if (f.config.devices() > f.cluster.device_count())
    throw Error(ErrorKind::kInput, where,
                fmt::format("the plan uses tp × cp × pp × dp = {} devices but its cluster has {}",
                            f.config.devices(), f.cluster.device_count()));
  if (!f.config.stage_layers.empty()) {
    long long sum = 0;
    for (int n : f.config.stage_layers) sum += n;
    if (sum != f.model.num_layers)
      throw Error(ErrorKind::kInput, where + "/stage_layers",
                  fmt::format("the stages hold {} layers but the model ({}) has {}", sum,
                              f.model.name, f.model.num_layers));
  }
  AnalyticCostModel cost(f.model, f.cluster, f.calibration);
  AnalyticResult analytic;
  try {
    analytic = cost.evaluate(f.config);
  } catch (const Error& e) {  // a knob rule: the file, not the command line, is wrong
    throw Error(ErrorKind::kInput, where, e.what());
  }
  if (!analytic.fits)
    throw Error(ErrorKind::kInfeasible, where,
                fmt::format("the plan does not fit in memory: {} per device on the busiest stage, "
                            "{} available", format_bytes(analytic.memory.peak_bytes),
                            format_bytes(cost.device_memory_bytes())));
  const sim::Schedule schedule =
      a.schedule.empty() ? sim::default_schedule(f.config) : sim::parse_schedule(a.schedule);
  const sim::TransformerSimulation s = sim::simulate_transformer(cost, f.config, schedule);
  if (!a.trace.empty()) io::write_text_file(a.trace, io::chrome_trace(s.result.timeline).dump() + "\n");
  if (!a.report.empty()) {
    LlmSearchSettings fs;  // the frontier of the plan's own setting
    fs.devices = f.config.devices();
    fs.global_batch = f.config.global_batch;
    fs.seq_len = f.config.seq_len;
    fs.top_k = 1;
    io::write_text_file(a.report, transformer_report(cost, f.config, f.cluster.name, fs));
  }
  const auto& devices = s.result.timeline.devices;
  if (a.json) {
    io::Json per_device = io::Json::array();
    for (std::size_t d = 0; d < devices.size(); ++d)
      per_device.push_back({{"name", devices[d]},
                            {"busy_s", s.result.devices[d].busy_s},
                            {"peak_bytes", s.result.devices[d].peak_bytes}});
    io::Json j = {{"model", f.model.name},
                  {"schedule", sim::schedule_name(schedule)},
                  {"iteration_time_s", s.iteration_time_s},
                  {"analytic_iteration_time_s", s.analytic_time_s},
                  {"difference", s.difference},
                  {"bubble_fraction", s.result.bubble_fraction},
                  {"peak_bytes", [&] {
                     double peak = 0;
                     for (const auto& d : s.result.devices) peak = std::max(peak, d.peak_bytes);
                     return peak;
                   }()},
                  {"analytic_peak_bytes", s.analytic_peak_bytes},
                  {"events", s.result.timeline.events.size()},
                  {"devices", per_device}};
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  std::cout << fmt::format("{}: {} schedule, {} stage(s) × {} micro-batches, {} events simulated\n",
                           f.model.name, sim::schedule_name(schedule), f.config.pp,
                           f.config.microbatches(), s.result.timeline.events.size())
            << fmt::format("iteration time: simulated {:.4f} s, analytic {:.4f} s ({:+.2f}%); "
                           "bubble {:.1f}% of the devices' time\n",
                           s.iteration_time_s, s.analytic_time_s, 100 * s.difference,
                           100 * s.result.bubble_fraction);
  for (std::size_t d = 0; d < devices.size(); ++d)
    std::cout << fmt::format("  {:<24} busy {:.4f} s   peak memory {}\n", devices[d],
                             s.result.devices[d].busy_s, format_bytes(s.result.devices[d].peak_bytes));
  if (!a.trace.empty()) std::cout << "trace written to " << a.trace << " (open in Perfetto or chrome://tracing)\n";
  return 0;
}

}  // namespace

void add_simulate_command(CLI::App& app, int& exit_code) {
  auto a = std::make_shared<SimulateArgs>();
  CLI::App* cmd = app.add_subcommand(
      "simulate", "Replay one iteration of a transformer plan written by `plan -o` in the "
                  "discrete-event simulator");
  cmd->add_option("PLAN", a->plan, "Plan file written by `paraplan plan --model ... -o FILE`")->required();
  cmd->add_option("--trace", a->trace, "Write a Chrome trace (Perfetto, chrome://tracing) of the iteration");
  cmd->add_option("--schedule", a->schedule,
                  "gpipe, 1f1b or interleaved-1f1b (default: the plan's: interleaved when vpp > 1)");
  cmd->add_option("--report", a->report,
                  "Write a self-contained HTML report (summary, stages, timeline, memory, frontier)");
  cmd->add_flag("--json", a->json, "Print JSON");
  cmd->callback([a, &exit_code] { exit_code = run(*a); });
}

}  // namespace paraplan::cli
