// Fits the analytic model's calibration to measured runs and writes it as a calibration file,
// printing the figures before and after and every parameter that moved.
#include "cli/calibrate_command.h"

#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "api/validate.h"
#include "cli/progress.h"
#include "io/calibration_file.h"
#include "io/json_fields.h"

namespace paraplan::cli {
namespace {

struct CalibrateArgs {
  std::string data = PARAPLAN_DEFAULT_VTRAIN_DIR;
  std::string mpt = PARAPLAN_DEFAULT_MPT_FILE;
  std::string from;
  std::string output;
  int iterations = 3000;
  std::uint64_t seed = 1;
  bool quiet = false;
};

std::string figures(const validate::FitScore& s) {
  std::string rankings;
  for (double r : s.ranking_slowdown_percent)
    rankings += fmt::format("{}{:+.1f}%", rankings.empty() ? "" : ", ", r);
  return fmt::format(
      "vTrain multi-node MAPE {:.2f}%, single-node MAPE {:.2f}%, rankings {}; MPT MAPE "
      "{:.2f}% (objective {:.3f})",
      s.multi_mape_percent, s.single_mape_percent, rankings, s.mpt_mape_percent, s.objective);
}

int run(const CalibrateArgs& a) {
  TerminalProgress progress(a.quiet);
  const api::CalibrateResult c =
      api::calibrate({a.data, a.mpt, a.from, a.iterations, a.seed, progress.sink()});
  const validate::FitResult& fit = c.fit;
  io::write_text_file(a.output, io::calibration_to_json(fit.calibration).dump(2) + "\n");
  std::cout << fmt::format(
                   "{} multi-node, {} single-node and {} MPT runs, {} iterations (seed {}), {} "
                   "steps taken\n",
                   c.multi_runs, c.single_runs, c.mpt_runs, a.iterations, a.seed, fit.accepted)
            << "before: " << figures(fit.before) << "\n"
            << "after:  " << figures(fit.after) << "\n";
  Calibration before = fit.start, after = fit.calibration;
  for (const auto& p : validate::fitted_parameters()) {
    const double x = p.field(before), y = p.field(after);
    if (x != y) std::cout << fmt::format("  {:<30} {:.6g} -> {:.6g}\n", p.name, x, y);
  }
  std::cout << "written to " << a.output << "\n";
  return 0;
}

}  // namespace

void add_calibrate_command(CLI::App& app, int& exit_code) {
  auto a = std::make_shared<CalibrateArgs>();
  CLI::App* cmd = app.add_subcommand(
      "calibrate",
      "Fit the analytic model's calibration to measured runs (vTrain CSV format): a "
      "seeded, bounded random search over its physically meaningful parameters");
  cmd->add_option("--data", a->data,
                  "Folder with ground_truth_multi.csv and ground_truth_single.csv");
  cmd->add_option(
      "--mpt", a->mpt,
      "MPT benchmark table to fit as well (rows of the calibration's device; \"\" to skip)");
  cmd->add_option("--from", a->from,
                  "Calibration file to start from (default: the shipped A100 one)");
  cmd->add_option("-o,--output", a->output, "Calibration file to write (JSON)")->required();
  cmd->add_option("--iterations", a->iterations, "Search steps (default 3000)")
      ->check(CLI::Range(0, 10000000));
  cmd->add_option("--seed", a->seed, "Random seed (default 1); the same seed gives the same file");
  add_quiet_flag(cmd, a->quiet);
  cmd->callback([a, &exit_code] { exit_code = run(*a); });
}

}  // namespace paraplan::cli
