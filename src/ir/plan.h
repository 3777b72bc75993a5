// The plan vocabulary: what a planner decides and what a cost model predicts for it.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace paraplan {

/// One pipeline stage: a contiguous set of layers run by d replicas of t devices each.
struct Stage {
  std::vector<int> layers;        ///< layer indices, ascending
  std::vector<int> option_index;  ///< per layer (same order): index into options_for(t)
  int data_parallel = 1;          ///< d
  int tensor_parallel = 1;        ///< t
  std::vector<int> device_ids;    ///< explicit placement when the cost model needs one
  int inflight_microbatches = 1;  ///< y: micro-batches whose activations are held at once
  // Predicted figures (cost-model units; see docs/cost-models.md).
  double time = 0;  ///< the stage's cost (Piper: time per sample)
  double compute_time = 0;
  double communication_time = 0;  ///< activation transfers on cut edges
  double allreduce_time = 0;      ///< data-parallel gradient all-reduce share
  double memory_bytes = 0;        ///< per device

  int devices() const { return data_parallel * tensor_parallel; }
};

/// Intra-operator plans: how one layer's iteration space is cut (one count per dimension) and
/// what it costs (cost-model units; PaSE: FLOP-equivalents per device).
struct LayerSplit {
  int layer = 0;           ///< layer index
  std::vector<int> split;  ///< parts per iteration dimension, in the operator's dim order
  int devices = 1;         ///< product of `split`
  double compute = 0;
  double communication = 0;   ///< collectives inside the layer
  double redistribution = 0;  ///< re-laying out its inputs from their producers
};

/// A complete parallelisation of one model on one cluster.
struct Plan {
  bool feasible = false;
  std::string planner;            ///< "pipeline" (stages; piper or dapple) or "intra-op" (pase)
  std::string cost_model;         ///< "piper", "dapple" or "pase"
  double objective = 0;           ///< the cost model's own figure (lower is better)
  std::optional<double> speedup;  ///< DAPPLE: one device on the whole batch / plan time
  std::string schedule = "1F1B";
  int microbatches = 1;       ///< per pipeline replica per iteration
  int pipeline_replicas = 1;  ///< DAPPLE's rp: identical copies of the pipeline
  int devices_used = 0;
  std::vector<Stage> stages;
  std::vector<LayerSplit> layer_splits;  ///< intra-operator plans: one per layer
  std::optional<double> step_time_s;     ///< estimated seconds per training step, if known
};

}  // namespace paraplan
