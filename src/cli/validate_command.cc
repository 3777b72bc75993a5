// Prices every measured configuration with the analytic model (the vTrain cluster and the A100
// calibration) and prints predicted against measured, the mean absolute percentage error per
// file, and, per model of the multi-node file, how the configuration ranked first measures
// against the measured best.
#include "cli/validate_command.h"

#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "io/calibration_file.h"
#include "io/vtrain_reader.h"
#include "validate/vtrain.h"

namespace paraplan::cli {
namespace {

struct ValidateArgs {
  std::string data = PARAPLAN_DEFAULT_VTRAIN_DIR;
  bool quiet = false;
  std::string calibration;
};

int run(const ValidateArgs& args) {
  const Calibration calibration = args.calibration.empty()
                                      ? default_calibration("A100")
                                      : io::read_calibration_file(args.calibration);
  const io::MeasuredRuns runs = io::read_vtrain_folder(args.data);
  auto multi = validate::score_runs(runs.multi, calibration);
  auto single = validate::score_runs(runs.single, calibration);
  if (!args.quiet) {
    std::cout << fmt::format("{:<7} {:>5} {:>6} {:>5} {:>6} {:>4} {:>5} {:>3} {:>3} {:>3}  {:>12} {:>12} {:>8}\n",
                             "set", "line", "GPUs", "batch", "hidden", "L", "mb", "t", "p", "d",
                             "measured s", "predicted s", "error");
    for (const auto* set : {&multi, &single})
      for (const auto& s : *set)
        std::cout << fmt::format("{:<7} {:>5} {:>6} {:>5} {:>6} {:>4} {:>5} {:>3} {:>3} {:>3}  {:>12.4f} {:>12.4f} {:>+7.1f}%\n",
                                 set == &multi ? "multi" : "single", s.run.line, s.run.gpus,
                                 s.run.global_batch, s.run.hidden, s.run.layers, s.run.micro_batch,
                                 s.run.tp, s.run.pp, s.run.dp, s.run.iteration_time_s, s.predicted_s,
                                 100 * s.error());
  }
  std::cout << fmt::format("multi-node:  {} runs, mean absolute percentage error {:.2f}% (target 8%)\n",
                           multi.size(), validate::mean_absolute_percentage_error(multi));
  std::cout << fmt::format("single-node: {} runs, mean absolute percentage error {:.2f}% (target 10%)\n",
                           single.size(), validate::mean_absolute_percentage_error(single));
  for (const auto& r : validate::rankings(multi))
    std::cout << fmt::format(
        "ranking {:.1f}B on {} GPUs ({} configurations): first-ranked (line {}) measures {:.3f} s, "
        "measured best (line {}) {:.3f} s: {:+.1f}% (target within 2%)\n",
        r.parameters_billion, r.gpus, r.configurations, r.picked->run.line,
        r.picked->run.iteration_time_s, r.best->run.line, r.best->run.iteration_time_s,
        100 * r.slowdown());
  return 0;
}

}  // namespace

void add_validate_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<ValidateArgs>();
  CLI::App* cmd = app.add_subcommand(
      "validate", "Compare the analytic cost model with measured A100 iteration times (vTrain "
                  "data set): per-run error, mean absolute percentage error, plan ranking");
  cmd->add_option("--data", args->data, "Folder with ground_truth_multi.csv and ground_truth_single.csv");
  cmd->add_flag("--summary", args->quiet, "Print only the summary lines");
  cmd->add_option("--calibration", args->calibration,
                  "Calibration file to validate (JSON or YAML; default: the shipped A100 one)");
  cmd->callback([args, &exit_code] { exit_code = run(*args); });
}

}  // namespace paraplan::cli
