// DAPPLE's latency / speedup model (HPGO 0.9.1, docs/specs/dapple.md §3-§6), formula for
// formula, quirks included: three global bandwidths, NVLink all-reduce scaling with ⌊n/2⌋, the
// warm-up term Ctot/(rp·M), one activation hop per boundary, and the all-reduce tail with s·β of
// slack and the parameter range that is off by one state.
#pragma once

#include <vector>

#include "cost/dapple_states.h"
#include "ir/model.h"
#include "ir/plan.h"

namespace paraplan {

struct DappleSettings {
  std::vector<int> machine_ends;      ///< exclusive end id of each machine ("seps"), e.g. {8, 16}
  int global_batch = 1;               ///< GBS, samples per iteration
  int microbatch_size = 1;            ///< samples per micro-batch (DAPPLE's Python API: 1)
  double nvlink_bytes_per_s = 25e9;   ///< point-to-point inside a machine
  double ethernet_bytes_per_s = 1e9;  ///< point-to-point between machines
  double nccl_bytes_per_s = 3e9;      ///< collectives between machines
  /// Multiplier of the activation transfer inside the bottleneck P. DAPPLE's stage DP uses 2,
  /// its bipartition 1; paraplan's planner uses 1 (one whole-batch transfer per boundary).
  double bottleneck_activation_factor = 1;
};

/// A DAPPLE pipeline: `replicas` (rp) copies of a pipeline whose stage s ends at state
/// cuts[s] (the last is the final state) and runs on the GPUs gpus[s].
struct DappleLayout {
  std::vector<int> cuts;
  std::vector<std::vector<int>> gpus;
  int replicas = 1;
};

class DappleCostModel {
 public:
  DappleCostModel(const Model& model, DappleStates states, DappleSettings settings);

  const DappleStates& states() const { return states_; }
  const DappleSettings& settings() const { return settings_; }
  int devices() const { return settings_.machine_ends.empty() ? 0 : settings_.machine_ends.back(); }
  int machine_of(int gpu) const;

  /// AR(G, W): all-reduce of W bytes over the GPUs G.
  double allreduce_s(const std::vector<int>& gpus, double bytes) const;
  /// AR over the contiguous GPUs first .. first + count - 1.
  double allreduce_s(int first, int count, double bytes) const;
  /// X(F, T, V): activation transfer of V bytes from the GPUs F to the GPUs T.
  double transfer_s(const std::vector<int>& from, const std::vector<int>& to, double bytes) const;
  /// C(k+1..j) for the whole global batch on one GPU; k = -1 is the start.
  double compute_s(int k, int j) const;
  double total_compute_s() const { return compute_s(-1, states_.size() - 1); }
  /// Activation bytes (whole batch) crossing a cut after state j.
  double cut_bytes(int j) const;

  /// P: the pipeline's bottleneck for the whole batch.
  double bottleneck_s(const DappleLayout& layout) const;
  /// L for a given P (the iteration time); +inf when there is no micro-batch (M = 0).
  double latency_s(const DappleLayout& layout, double bottleneck) const;
  double latency_s(const DappleLayout& layout) const {
    return latency_s(layout, bottleneck_s(layout));
  }
  /// Pure data parallelism on every GPU: Ctot / N + AR(all, W).
  double data_parallel_latency_s() const;
  /// The layout as a Plan (stages, layers, devices, objective = L, speedup = Ctot / L).
  Plan to_plan(const DappleLayout& layout) const;

 private:
  const Model& model_;
  DappleStates states_;
  DappleSettings settings_;
  double scale_;  // f = GBS / PBS
};

}  // namespace paraplan
