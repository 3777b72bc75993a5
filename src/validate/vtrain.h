// Accuracy of the analytic cost model against measured runs (data/vtrain): each run is
// priced on the cluster it ran on with the shipped A100 calibration or a given one.
#pragma once

#include <string>
#include <vector>

#include "cost/analytic.h"
#include "io/vtrain_reader.h"

namespace paraplan::validate {

struct ScoredRun {
  io::MeasuredRun run;
  double predicted_s = 0;
  double predicted_peak_bytes = 0;  ///< memory the model says the busiest device must hold
  bool fits = true;                 ///< predicted peak within the device's memory
  double error() const { return predicted_s / run.iteration_time_s - 1; }
};

/// Prices every run (a GPT of the run's shape on the run's cluster preset, with its parallel
/// degrees, ZeRO stage, attention kernel and recomputation) with `calibration` when the run's
/// device is the calibration's (default: the shipped A100 one), else with the shipped
/// calibration of the run's device.
std::vector<ScoredRun> score_runs(const std::vector<io::MeasuredRun>& runs,
                                  const Calibration& calibration = default_calibration("A100"));
/// Mean absolute percentage error, in percent.
double mean_absolute_percentage_error(const std::vector<ScoredRun>& rows);

/// For one model (same width, depth, GPUs and batch): the configuration the model ranks first
/// against the measured best.
struct Ranking {
  double parameters_billion = 0;
  int gpus = 0;
  int configurations = 0;
  const ScoredRun* picked = nullptr;
  const ScoredRun* best = nullptr;
  double slowdown() const { return picked->run.iteration_time_s / best->run.iteration_time_s - 1; }
};
std::vector<Ranking> rankings(const std::vector<ScoredRun>& rows);

}  // namespace paraplan::validate
