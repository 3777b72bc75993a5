// The analytic model priced per pipeline stage for the layer-split search: the stage holding
// layers [first, last] of a transformer (the embedding rides on layer 0, the LM head on the
// last layer) costs one micro-batch's forward + backward time on one of its devices, or +inf
// when its memory (weights, gradients, optimizer states, activations of the micro-batches in
// flight) exceeds the device.
#pragma once

#include "cost/analytic.h"

namespace paraplan {

class AnalyticStagePricer {
 public:
  /// `config` must pass cost.check(); its stage_layers are ignored.
  AnalyticStagePricer(const AnalyticCostModel& cost, const TrainingConfig& config);

  int layers() const { return layers_; }
  /// Seconds per micro-batch of the stage [first, last] with `stages_from_here` stages from it
  /// to the end of the pipeline (its in-flight micro-batches under 1F1B, capped by the
  /// micro-batches); +inf if it does not fit. Non-decreasing as the stage grows.
  double stage_time(int first, int last, int stages_from_here) const;

 private:
  const AnalyticCostModel& cost_;
  TrainingConfig config_;
  BlockCosts blocks_;
  int layers_;
  double memory_limit_;
};

}  // namespace paraplan
