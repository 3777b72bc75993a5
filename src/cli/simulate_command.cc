// The simulate subcommand.
#include "cli/simulate_command.h"

#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <memory>

#include "api/results_json.h"
#include "api/simulate.h"
#include "io/chrome_trace.h"
#include "io/json_fields.h"
#include "ir/units.h"

namespace paraplan::cli {
namespace {

struct SimulateArgs {
  std::string plan;
  std::string trace;
  std::string schedule;
  std::string report;
  std::string stack;
  bool json = false;
};

std::string result_text(const api::SimulateResult& s) {
  const sim::Result& r = s.result;
  const auto& devices = r.timeline.devices;
  std::string out;
  if (s.cost_model == "piper") {
    out +=
        fmt::format("{}: {} stage(s), {} replicas, {} micro-batches, {} events simulated (1f1b)\n",
                    s.model, s.stages, devices.size(), s.microbatches, r.timeline.events.size());
    out += fmt::format(
        "iteration (profile time units): simulated {:.6g}, {} {:.6g} ({:+.2f}%: fill, drain and "
        "the all-reduce{}); bubble {:.1f}%\n",
        s.iteration_time_s,
        s.on_network ? "on the cluster's links; the placement's bound N × slowest stage"
                     : "Piper's bound N × objective",
        s.reference_s, 100 * s.difference,
        s.on_network ? ", and contention that comes and goes" : "", 100 * r.bubble_fraction);
    for (std::size_t i = 0; i < devices.size() && i < 64; ++i)
      out += fmt::format("  {:<32} busy {:.6g}   peak memory {}\n", devices[i], r.devices[i].busy_s,
                         format_bytes(r.devices[i].peak_bytes));
    if (devices.size() > 64) out += fmt::format("  ... {} more replicas\n", devices.size() - 64);
    return out;
  }
  if (s.cost_model == "pase")
    return fmt::format("{}: {} layers on {} devices, {} events simulated\n", s.model, s.layers,
                       s.devices, r.timeline.events.size()) +
           fmt::format("step time: simulated {:.6g} s, the plan's {:.6g} s ({:+.2f}%)\n",
                       s.iteration_time_s, s.reference_s, 100 * s.difference);
  if (s.cost_model == "dapple")
    return fmt::format("DAPPLE plan: {} stage(s), {} micro-batches, {} events simulated\n",
                       s.stages, s.microbatches, r.timeline.events.size()) +
           fmt::format(
               "iteration time: simulated {:.6g} s, DAPPLE's latency {:.6g} s ({:+.2f}%: "
               "its warm-up is approximate and its all-reduce tail is not replayed); "
               "bubble {:.1f}%\n",
               s.iteration_time_s, s.reference_s, 100 * s.difference, 100 * r.bubble_fraction);
  out += fmt::format("{}: {} schedule, {} stage(s) × {} micro-batches, {} events simulated\n",
                     s.model, s.schedule, s.stages, s.microbatches, r.timeline.events.size());
  out += fmt::format(
      "iteration time: simulated {:.4f} s, analytic {:.4f} s ({:+.2f}%); "
      "bubble {:.1f}% of the devices' time\n",
      s.iteration_time_s, s.reference_s, 100 * s.difference, 100 * r.bubble_fraction);
  for (std::size_t d = 0; d < devices.size(); ++d)
    out += fmt::format("  {:<24} busy {:.4f} s   peak memory {}\n", devices[d], r.devices[d].busy_s,
                       format_bytes(r.devices[d].peak_bytes));
  return out;
}

int run(const SimulateArgs& a) {
  const api::SimulateResult s =
      api::simulate_plan({a.plan, a.schedule, !a.report.empty(), a.stack});
  if (!a.trace.empty()) io::write_chrome_trace(a.trace, s.result.timeline);
  if (!a.report.empty()) io::write_text_file(a.report, s.report_html);
  if (a.json) {
    std::cout << api::simulation_json(s).dump(2) << "\n";
    return 0;
  }
  std::cout << result_text(s);
  if (!a.trace.empty())
    std::cout << "trace written to " << a.trace
              << (s.planner == "llm" ? " (open in Perfetto or chrome://tracing)\n" : "\n");
  return 0;
}

}  // namespace

void add_simulate_command(CLI::App& app, int& exit_code) {
  auto a = std::make_shared<SimulateArgs>();
  CLI::App* cmd = app.add_subcommand(
      "simulate",
      "Replay one iteration of a plan written by `plan -o` (transformer plans; "
      "pipeline plans under Piper's cost model) in the discrete-event simulator");
  cmd->add_option("PLAN", a->plan, "Plan file written by `paraplan plan --model ... -o FILE`")
      ->required();
  cmd->add_option("--trace", a->trace,
                  "Write a Chrome trace (Perfetto, chrome://tracing) of the iteration");
  cmd->add_option(
      "--schedule", a->schedule,
      "gpipe, 1f1b or interleaved-1f1b (default: the plan's: interleaved when vpp > 1)");
  cmd->add_option(
      "--report", a->report,
      "Write a self-contained HTML report (summary, stages, timeline, memory, frontier)");
  cmd->add_option("--stack", a->stack,
                  "Transformer plans: replay on this training stack (megatron, fsdp, deepspeed) "
                  "with its kernels and overlaps (default: the plan's)")
      ->check(CLI::IsMember({"megatron", "fsdp", "deepspeed"}));
  cmd->add_flag("--json", a->json, "Print JSON");
  cmd->callback([a, &exit_code] { exit_code = run(*a); });
}

}  // namespace paraplan::cli
