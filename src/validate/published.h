// Accuracy of the analytic cost model against published throughputs it was never fitted to
// (data/moe): each run priced on its cluster preset with the shipped calibration of the device.
#pragma once

#include <vector>

#include "cost/analytic.h"
#include "io/published_runs.h"

namespace paraplan::validate {

struct ScoredPublished {
  io::PublishedRun run;
  TransformerConfig model;
  AnalyticResult predicted;
  int devices = 0;
  double device_memory_bytes = 0;
  double measured_s = 0;  ///< the batch's tokens over the published tokens/s of all devices
  double error() const { return predicted.iteration_time_s / measured_s - 1; }
};

/// Error(kInput) naming the entry when its model is no built-in or its cluster no preset.
std::vector<ScoredPublished> score_published(const std::vector<io::PublishedRun>& runs);

}  // namespace paraplan::validate
