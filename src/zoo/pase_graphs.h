// PaSE's five built-in operator graphs (alexnet, resnet101, inception3, rnnlm, transformer) with
// exactly its dimensions and layer order (specs/pase.md §5).
#pragma once

#include <string>
#include <vector>

#include "ir/model.h"

namespace paraplan::zoo {

struct OperatorWorkload {
  Model model;
  /// Smallest per-device extent a split may leave (PaSE's `cutoff`: 4 for the CNNs, 1 for RNNLM
  /// and the Transformer).
  int min_block = 1;
};

/// The names accepted by `pase_graph`, in a stable order.
const std::vector<std::string>& pase_graph_names();

/// Builds one graph with batch size `batch`; Error(kUsage) for an unknown name or batch < 1.
OperatorWorkload pase_graph(const std::string& name, int batch);

}  // namespace paraplan::zoo
