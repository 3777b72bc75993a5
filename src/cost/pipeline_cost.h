// The interface between the pipeline planner and a bottleneck cost model (Piper's family): the
// planner enumerates contiguous stages; the model prices a stage for a shape (t, d) and an
// in-flight count y, incrementally as layers leave the stage, and scores whole plans.
#pragma once

#include <climits>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "ir/plan.h"

namespace paraplan {

inline constexpr double kInfinity = std::numeric_limits<double>::infinity();

/// A stage shape: tensor-parallel degree t and data-parallel degree d (d·t devices of one
/// device group).
struct StageShape {
  int tensor_parallel = 1;
  int data_parallel = 1;
  int device_type = 0;  ///< index into the cost model's device_budgets()
};

/// Prices one stage S as layers are removed from it. Not thread-safe; one per thread.
class StageCursor {
 public:
  virtual ~StageCursor() = default;
  /// S := `layers` (a successor-closed set's members).
  virtual void reset(const std::vector<int>& layers) = 0;
  /// S := S minus `layer`. `layer` must have no successor left in S.
  virtual void remove(int layer) = 0;
  /// Reverts the most recent remove().
  virtual void undo() = 0;
  /// The stage's cost with shape `shape` (index into shapes()) when y micro-batches are in
  /// flight; +inf if it cannot run (memory, or a layer lacks the degree). Non-decreasing in y.
  /// Exact when below `cutoff`; otherwise any value >= cutoff (the caller does not care).
  virtual double cost(int shape, int y, double cutoff = kInfinity) = 0;
  /// A lower bound on cost(shape, y) for every y (the cost with no memory limit).
  virtual double lower_bound(int shape) = 0;
  /// Whether the stage fits in memory with shape `shape` and y in flight (cost() is finite).
  virtual bool fits(int shape, int y) { return cost(shape, y) < kInfinity; }
  /// {a, b}: cost(shape, y) equals lower_bound(shape) for y <= a, and is +inf for y > b.
  /// Lets the planner skip cost() calls; {0, INT_MAX} says nothing.
  virtual std::pair<int, int> y_range(int /*shape*/) { return {0, INT_MAX}; }
  /// lower_bound() and y_range() of every shape at once (sized to shapes()).
  virtual void bounds(std::vector<double>& lower, std::vector<std::pair<int, int>>& range) {
    for (std::size_t si = 0; si < lower.size(); ++si) {
      lower[si] = lower_bound(static_cast<int>(si));
      range[si] = y_range(static_cast<int>(si));
    }
  }
  /// Option index per layer of S (layers ascending) that attains cost(shape, y).
  virtual std::vector<std::pair<int, int>> choice(int shape, int y) = 0;
};

/// A cost model whose objective is the bottleneck (max over stages) of stage costs.
class PipelineCostModel {
 public:
  virtual ~PipelineCostModel() = default;
  virtual std::string name() const = 0;
  virtual int max_devices() const = 0;  ///< K: Σ d·t <= K
  /// Devices of each group (Σ d·t over a group's stages <= its count); one group of K unless
  /// the cluster mixes kinds of device.
  virtual std::vector<int> device_budgets() const { return {max_devices()}; }
  virtual int max_data_parallel_sum() const = 0;              ///< Σ d <= this
  virtual const std::vector<StageShape>& shapes() const = 0;  ///< ascending (group, t, d)
  virtual std::unique_ptr<StageCursor> cursor() const = 0;
  /// Scores a plan from scratch: per-stage figures, memory, feasibility, objective.
  virtual Plan evaluate(const Plan& plan) const = 0;
  /// A value no plan's objective is below (0 if unknown). The planner uses it to try tight
  /// upper bounds first.
  virtual double objective_lower_bound() const { return 0; }
  /// Per-layer lower bounds the planner prunes with. A stage S whose cost is at most τ on d·t
  /// devices has d·t >= Σ_{v∈S} work[v] / τ and d·t >= Σ_{v∈S} memory[v] / memory_limit (memory
  /// in device-bytes: what the layer holds per device times the devices it is split over, at
  /// its leanest). Empty vectors: no such bounds.
  struct LayerBounds {
    std::vector<double> work;
    std::vector<double> memory;
    double memory_limit = 0;
  };
  virtual LayerBounds layer_bounds() const { return {}; }
};

}  // namespace paraplan
