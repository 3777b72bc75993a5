// Prices every measured configuration with the analytic model (the vTrain cluster and the A100
// calibration) and prints predicted against measured, the mean absolute percentage error per
// file, and, per model of the multi-node file, how the configuration ranked first measures
// against the measured best.
#include "cli/validate_command.h"

#include <cmath>
#include <iostream>
#include <map>
#include <memory>

#include <fmt/format.h>

#include "cost/analytic.h"
#include "io/vtrain_reader.h"
#include "zoo/cluster_presets.h"
#include "zoo/llm_models.h"

namespace paraplan::cli {
namespace {

struct ValidateArgs {
  std::string data = PARAPLAN_DEFAULT_VTRAIN_DIR;
  bool quiet = false;
};

struct Scored {
  io::MeasuredRun run;
  double predicted_s = 0;
};

std::vector<Scored> score(const std::vector<io::MeasuredRun>& runs) {
  std::vector<Scored> out;
  for (const auto& r : runs) {
    TransformerConfig model = zoo::megatron_gpt("gpt", r.heads, r.hidden, r.layers, 50257);
    model.max_positions = r.seq_len;
    AnalyticCostModel cost(model, *zoo::cluster_preset("vtrain-a100", r.gpus),
                           default_calibration("A100"));
    TrainingConfig t;
    t.seq_len = r.seq_len;
    t.global_batch = r.global_batch;
    t.micro_batch = r.micro_batch;
    t.tp = r.tp;
    t.pp = r.pp;
    t.dp = r.dp;
    t.recompute = Recompute::kFull;
    out.push_back({r, cost.evaluate(t).iteration_time_s});
  }
  return out;
}

double mape(const std::vector<Scored>& rows) {
  double sum = 0;
  for (const auto& s : rows) sum += std::abs(s.predicted_s - s.run.iteration_time_s) / s.run.iteration_time_s;
  return 100 * sum / static_cast<double>(rows.size());
}

int run(const ValidateArgs& args) {
  auto multi = score(io::read_vtrain_csv(args.data + "/ground_truth_multi.csv"));
  auto single = score(io::read_vtrain_csv(args.data + "/ground_truth_single.csv"));
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
                                 100 * (s.predicted_s / s.run.iteration_time_s - 1));
  }
  std::cout << fmt::format("multi-node:  {} runs, mean absolute percentage error {:.2f}% (target 8%)\n",
                           multi.size(), mape(multi));
  std::cout << fmt::format("single-node: {} runs, mean absolute percentage error {:.2f}% (target 10%)\n",
                           single.size(), mape(single));
  std::map<std::tuple<std::int64_t, std::int64_t, int, std::int64_t>, std::vector<const Scored*>> models;
  for (const auto& s : multi)
    models[{s.run.hidden, s.run.layers, s.run.gpus, s.run.global_batch}].push_back(&s);
  for (const auto& [key, rows] : models) {
    const Scored* best = rows[0];
    const Scored* picked = rows[0];
    for (const Scored* s : rows) {
      if (s->run.iteration_time_s < best->run.iteration_time_s) best = s;
      if (s->predicted_s < picked->predicted_s) picked = s;
    }
    const double ratio = picked->run.iteration_time_s / best->run.iteration_time_s;
    std::cout << fmt::format(
        "ranking {:.1f}B on {} GPUs ({} configurations): first-ranked (line {}) measures {:.3f} s, "
        "measured best (line {}) {:.3f} s: {:+.1f}% (target within 2%)\n",
        rows[0]->run.parameters_billion, std::get<2>(key), rows.size(), picked->run.line,
        picked->run.iteration_time_s, best->run.line, best->run.iteration_time_s,
        100 * (ratio - 1));
  }
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
  cmd->callback([args, &exit_code] { exit_code = run(*args); });
}

}  // namespace paraplan::cli
