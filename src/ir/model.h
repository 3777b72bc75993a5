// The model vocabulary: a DAG of layers, each with measured options per tensor-parallel degree.
// Everything a planner or cost model knows about a network comes from here.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ir/operator.h"

namespace paraplan {

/// One way to run a layer on t devices (Piper's "TMPC"): per-device costs for one micro-batch.
struct LayerOption {
  std::string id;             ///< e.g. "vanilla", "activation recomp"
  double compute_time_s = 0;  ///< forward + backward time of one micro-batch (profile unit)
  /// The forward part of compute_time_s when measured (profiles); 0: unknown, taken as a third.
  double forward_time_s = 0;
  /// The optimizer's step for this layer's parameters on one device, once per iteration
  /// (profiles measure it; 0: not modelled).
  double optimizer_time_s = 0;
  double parameter_bytes = 0;  ///< per-device weights, used for the data-parallel all-reduce
  double memory_per_inflight_bytes =
      0;                          ///< a: memory per micro-batch in flight (stashed activations)
  double memory_fixed_bytes = 0;  ///< b: memory independent of the micro-batches in flight
  /// Extra bytes on each incoming edge (same order as Model::in_edges(layer)) when it is cut.
  std::vector<double> sync_in_bytes;
  /// Extra bytes on each outgoing edge (same order as Model::out_edges(layer)) when it is cut.
  std::vector<double> sync_out_bytes;
};

/// Options for one tensor-parallel degree t.
struct TensorParallelOptions {
  int degree = 1;
  std::vector<LayerOption> options;
};

/// A node of the model graph.
struct Layer {
  std::int64_t id = 0;  ///< the id in the input file (stable, shown to users)
  std::string name;
  std::vector<TensorParallelOptions> by_degree;  ///< sorted by degree, degrees unique
  /// Bytes of the layer's output activation (profile-based models: per profile batch).
  double output_bytes = 0;
  /// Operator-level description (operator graphs: PaSE's models, ONNX); empty for profiled layers.
  std::optional<Operator> op;

  const std::vector<LayerOption>* options_for(int degree) const;
};

/// A directed edge carrying `bytes` of activation per micro-batch (forward; the gradient is the
/// same size backward).
struct Edge {
  int from = 0;  ///< layer index (position in Model::layers)
  int to = 0;
  double bytes = 0;
  /// Operator graphs: which output tensor of `from` flows into which input of `to`. Two layers
  /// may be joined by several edges (one per tensor flow).
  int from_output = 0;
  int to_input = 0;
};

/// A DAG of layers. Layers are addressed by index; `Layer::id` is what users see.
/// Where and on what a profile was measured: the layer times hold for that device running alone
/// on that input (empty / 0: not recorded).
struct ProfileFacts {
  std::string device;                     ///< e.g. "cpu (x86_64)" or the GPU's name
  double flops_per_s = 0;                 ///< its matmul rate measured by the profiler, alone
  int threads = 0;                        ///< intra-op threads it was measured with
  std::vector<std::int64_t> input_shape;  ///< the example input (the micro-batch first)
  std::int64_t tokens = 0;                ///< token inputs: the vocabulary (0: float inputs)
  bool recorded() const { return flops_per_s > 0 || !input_shape.empty(); }
};

struct Model {
  std::string name;
  std::vector<Layer> layers;
  std::vector<Edge> edges;
  /// Samples in the batch the layer costs were measured at (DAPPLE profiles); 1 for per-sample.
  int profile_batch_size = 1;
  /// Number of micro-batches per training batch the costs assume (Piper's mbsInBatch).
  int microbatches = 1;
  /// Profiled models (`python3 -m paraplan profile`): what the times were measured on and with.
  ProfileFacts profiled;

  /// Indices into `edges` of the edges entering / leaving each layer, in edge order.
  /// Filled by `index()`; the readers call it.
  std::vector<std::vector<int>> in_edge_ids;
  std::vector<std::vector<int>> out_edge_ids;

  int size() const { return static_cast<int>(layers.size()); }
  /// Rebuilds in_edge_ids / out_edge_ids from `edges`.
  void index();
  /// Tensor-parallel degrees that every layer supports, ascending.
  std::vector<int> common_degrees() const;
  /// A topological order, or empty if the graph has a cycle.
  std::vector<int> topological_order() const;
};

}  // namespace paraplan
