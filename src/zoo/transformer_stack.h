// A built-in model: a stack of transformer layers between an embedding and a head, with
// per-layer options for tensor-parallel degrees 1..8 with and without activation recomputation,
// derived from the layer shapes and a device's peak FLOP/s (roofline at a fixed efficiency).
// It is the default workload of `paraplan plan` and a generator for tests and benchmarks.
#pragma once

#include "ir/cluster.h"
#include "ir/model.h"

namespace paraplan::zoo {

struct TransformerShape {
  int layers = 40;
  int hidden = 2560;
  int heads = 32;
  int sequence = 1024;
  int vocabulary = 50257;
  int microbatch_size = 2;           ///< samples per micro-batch
  int microbatches = 64;             ///< per batch
  double peak_flops_per_s = 312e12;  ///< A100 bf16 dense
  double efficiency = 0.5;           ///< achieved fraction of peak for these GEMMs
};

/// GPT-3 2.7B-like by default (40 layers, hidden 2560).
Model transformer_stack(const TransformerShape& shape);
/// The default workload's cluster: 2 machines of 8 devices with 16 GiB each, NVLink inside a
/// machine, 25 GiB/s between machines.
Cluster default_cluster();

}  // namespace paraplan::zoo
