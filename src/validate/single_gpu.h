// Accuracy of the analytic cost model against plain-PyTorch training on one GPU
// (data/h100-single-gpu): iteration time, peak memory against what the caching allocator held,
// and the verdict "fits" against whether the run ran out of memory.
#pragma once

#include <vector>

#include "cost/analytic.h"
#include "io/single_gpu_runs.h"

namespace paraplan::validate {

struct ScoredSingleGpu {
  io::SingleGpuRun run;
  TrainingConfig config;  ///< as priced: stack fsdp on one device
  AnalyticResult predicted;
  double device_memory_bytes = 0;
  /// Predicted over measured iteration time, minus 1 (runs that ran).
  double time_error() const { return predicted.iteration_time_s / run.iteration_time_s - 1; }
  /// Predicted peak over the allocator's reserved peak, minus 1 (runs that ran).
  double peak_error() const { return predicted.memory.peak_bytes / run.peak_reserved_bytes - 1; }
  bool verdict_right() const { return predicted.fits == run.ran; }
};

/// Each run priced as `paraplan evaluate --stack fsdp --devices 1` prices it, on the cluster
/// preset of its GPU with the shipped calibration; Error(kInput) naming the line for a GPU with
/// no preset.
std::vector<ScoredSingleGpu> score_single_gpu(const std::vector<io::SingleGpuRun>& runs);

/// The training configuration of a run: fsdp on one device (ZeRO 3 on one rank: nothing is
/// sharded), the run's batch, micro-batch, sequence, recomputation and compilation.
TrainingConfig single_gpu_config(const io::SingleGpuRun& run);

}  // namespace paraplan::validate
