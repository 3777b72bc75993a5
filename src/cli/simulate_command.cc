// The simulate subcommand.
#include "cli/simulate_command.h"

#include <iostream>
#include <memory>

#include "api/plan_text.h"
#include "api/results_json.h"
#include "api/simulate.h"
#include "io/json_fields.h"
#include "render/chrome_trace.h"

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

int run(const SimulateArgs& a) {
  const api::SimulateResult s =
      api::simulate_plan({a.plan, a.schedule, !a.report.empty(), a.stack});
  if (!a.trace.empty()) io::write_text_file(a.trace, render::chrome_trace_text(s.result.timeline));
  if (!a.report.empty()) io::write_text_file(a.report, s.report_html);
  // A plan whose replayed peak does not fit under the schedule asked: the figures, then exit 4.
  const int verdict = s.fits ? 0 : 4;
  if (a.json) {
    std::cout << api::simulation_json(s).dump(2) << "\n";
    return verdict;
  }
  std::cout << api::simulation_words(s);
  if (!a.trace.empty())
    std::cout << "trace written to " << a.trace
              << (s.kind == PlanKind::kTransformer ? " (open in Perfetto or chrome://tracing)\n"
                                                   : "\n");
  return verdict;
}

}  // namespace

void add_simulate_command(CLI::App& app, int& exit_code) {
  auto a = std::make_shared<SimulateArgs>();
  CLI::App* cmd = app.add_subcommand(
      "simulate",
      "Replay one iteration of a plan written by `plan -o` in the discrete-event simulator: "
      "transformer plans (one device type or mixed), pipeline plans under Piper's and "
      "DAPPLE's cost models, intra-operator plans");
  cmd->add_option("PLAN", a->plan, "Plan file written by `paraplan plan --model ... -o FILE`")
      ->required();
  cmd->add_option("--trace", a->trace,
                  "Write a Chrome trace (Perfetto, chrome://tracing) of the iteration");
  cmd->add_option(
      "--schedule", a->schedule,
      "Transformer plans: gpipe, 1f1b, interleaved-1f1b or zero-bubble (ZB-H1); pipeline plans: "
      "gpipe or 1f1b; DAPPLE: 1f1b (default: the plan's: interleaved when vpp > 1)");
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
