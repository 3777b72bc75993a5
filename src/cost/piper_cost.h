// Piper's cost model (Tarnawski et al., NeurIPS 2021), exactly as docs/specs/piper.md §3 gives
// it: time per sample of the bottleneck stage, memory a·y + b per layer with y = ⌈s/d⌉ from the
// suffix sums of data-parallel degrees. Per-stage option choice is an exact knapsack.
#pragma once

#include <string>
#include <vector>

#include "cost/pipeline_cost.h"
#include "ir/model.h"

namespace paraplan {

struct PiperSettings {
  int max_devices = 1;                 ///< K
  double memory_per_device_bytes = 0;  ///< M
  double bandwidth_bytes_per_s = 0;    ///< B
  int microbatches = 1;                ///< N (d must divide N; Σd <= N)
  /// Every stage's data-parallel width d, fixed by the user (0: searched). The search is the
  /// same, over the shapes with this d only.
  int data_parallel = 0;
  /// kMemory prices a stage by its smallest possible memory per device instead of its time,
  /// with no memory limit: the planner then finds the smallest memory any plan needs.
  enum class Objective { kTimePerSample, kMemory } objective = Objective::kTimePerSample;
  /// The bandwidth that prices the data-parallel all-reduce (a probe's measurement; 0: B).
  double allreduce_bandwidth_bytes_per_s = 0;
  double allreduce_bandwidth() const {
    return allreduce_bandwidth_bytes_per_s > 0 ? allreduce_bandwidth_bytes_per_s
                                               : bandwidth_bytes_per_s;
  }
  /// Kinds of device in a mixed cluster (empty: K devices of M bytes that run the model's times
  /// as given). A stage runs on one group: its compute and optimizer times × the group's
  /// time_factor, its memory within the group's. Σ counts is K; the time-per-sample objective
  /// only (the memory objective takes the homogeneous settings).
  struct DeviceGroup {
    std::string name;
    int count = 0;
    double memory_bytes = 0;
    double time_factor = 1;  ///< its time for what the model's times measure (H100 vs A100: ~0.3)
  };
  std::vector<DeviceGroup> device_groups = {};
  /// The groups, or one group of K devices of M bytes at factor 1.
  std::vector<DeviceGroup> groups() const {
    if (!device_groups.empty()) return device_groups;
    return {{"device", max_devices, memory_per_device_bytes, 1.0}};
  }
};

class PiperCostModel : public PipelineCostModel {
 public:
  PiperCostModel(const Model& model, PiperSettings settings);

  std::string name() const override { return "piper"; }
  int max_devices() const override { return settings_.max_devices; }
  std::vector<int> device_budgets() const override;
  int max_data_parallel_sum() const override { return max_dp_sum_; }
  const std::vector<StageShape>& shapes() const override { return shapes_; }
  std::unique_ptr<StageCursor> cursor() const override;
  /// The cursor for any options (cursor() gives the fast one where it applies); for tests.
  std::unique_ptr<StageCursor> generic_cursor() const;
  Plan evaluate(const Plan& plan) const override;
  double objective_lower_bound() const override;
  LayerBounds layer_bounds() const override;

  const Model& model() const { return model_; }
  const PiperSettings& settings() const { return settings_; }
  const std::vector<int>& degrees() const { return degrees_; }
  /// An edge's position in its source layer's out-edge list.
  int edge_out_position(int edge) const { return edge_out_pos_[edge]; }

 private:
  friend class PiperCursor;
  const Model& model_;
  PiperSettings settings_;
  int max_dp_sum_;
  std::vector<int> degrees_;  ///< every degree any layer has, ascending
  std::vector<StageShape> shapes_;
  std::vector<int> shape_degree_index_;  ///< per shape: index into degrees_
  std::vector<PiperSettings::DeviceGroup> groups_;
  std::vector<int> edge_out_pos_, edge_in_pos_;  ///< an edge's position in its ends' lists
  bool uniform_ = false;  ///< the fast cursor applies (cost/piper_uniform_cursor.h)
};

}  // namespace paraplan
