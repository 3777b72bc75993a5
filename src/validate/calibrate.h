// Fitting a calibration to measured runs: a bounded, seeded random local search over the
// calibration's physically meaningful parameters that minimises the model's error against the
// runs (the same figures `validate` prints). No per-run correction exists: every run is priced
// with the one calibration.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "io/vtrain_reader.h"
#include "ir/calibration.h"
#include "ir/progress.h"

namespace paraplan::validate {

/// One fitted parameter: its name in the calibration file, the physical range it stays in
/// (with `of_start`, as factors of the starting value: the start's memory bandwidth is taken as
/// the device's peak), and whether the search steps on a logarithmic scale.
struct FittedParameter {
  std::string name;
  double low = 0, high = 0;
  bool log_scale = false;
  std::function<double&(Calibration&)> field;
  bool of_start = false;
};
/// The parameters the fit moves (GEMM, attention, memory-bound and communication efficiencies,
/// latencies and overheads). The bytes per parameter, the overlap slowdown and the memory terms
/// stay as given: the runs cannot identify them (no overlap, no memory measured).
const std::vector<FittedParameter>& fitted_parameters();

/// The figures of one calibration against the runs.
/// The measured runs a fit is scored on: vTrain's multi- and single-node Megatron-DeepSpeed
/// runs, and MPT's FSDP runs (any may be empty).
struct FitData {
  std::vector<io::MeasuredRun> multi, single, mpt;
};

struct FitScore {
  double multi_mape_percent = 0;
  double single_mape_percent = 0;
  double mpt_mape_percent = 0;
  std::vector<double> ranking_slowdown_percent;  ///< per model of the multi-node runs
  /// The sets' MAPEs, plus 4 × each MAPE beyond 95 % of its target (8 %, 10 %, 8 %), plus each
  /// ranking's slowdown beyond 2 %: lower is better.
  double objective = 0;
};
FitScore fit_score(const FitData& data, const Calibration& calibration);

struct FitSettings {
  int iterations = 3000;
  std::uint64_t seed = 1;
  ProgressSink* progress = nullptr;  ///< told of every 50 steps and the best objective; may be null
};

struct FitResult {
  Calibration start;        ///< the given start, clamped into the bounds, two link tiers
  Calibration calibration;  ///< the fitted one
  FitScore before, after;
  int accepted = 0;  ///< steps taken (no worse objective)
};

/// Deterministic: the same runs, start and settings give the same calibration on every platform
/// (the generator and its normal deviates are computed here, not by the standard library's
/// distributions). Starts from `start` clamped into the bounds; never returns a worse objective.
FitResult fit_calibration(const FitData& data, const Calibration& start,
                          const FitSettings& settings);

}  // namespace paraplan::validate
