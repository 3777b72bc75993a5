// DAPPLE's preprocessing (docs/specs/dapple.md §2): drop "Input*" sources and "__getitem__*"
// sinks, then PipeDream's antichain DAG, topologically sorted into "states". A pipeline cuts
// after states along a path of that DAG; a stage's cost is a difference of prefix sums.
#pragma once

#include <string>
#include <vector>

#include "ir/model.h"

namespace paraplan {

struct DappleStates {
  std::vector<std::string> description;
  std::vector<std::vector<int>> augmented_antichain;  ///< layer indices, ascending
  std::vector<double> prefix_compute_s;               ///< at the profile batch, not normalised
  std::vector<double> prefix_activation_bytes;
  std::vector<double> prefix_parameter_bytes;
  std::vector<double> output_activation_bytes;  ///< bytes crossing a cut after the state
  std::vector<std::vector<int>> predecessors;   ///< transitive, ascending
  /// Layers covered by each state (the augmented antichain and everything before it).
  std::vector<std::vector<int>> covered_layers;
  bool linearised = false;  ///< true when the antichain DAG was too large (see below)

  int size() const { return static_cast<int>(description.size()); }
};

/// PipeDream's antichain states. Uses each layer's first option at t = 1 (every layer needs one).
/// If the antichain DAG would exceed `max_states`, falls back to a linear order of the layers (each
/// state = a prefix of a topological order; the activation crossing the cut is the sum of outputs
/// of prefix layers with an edge leaving the prefix).
DappleStates dapple_states(const Model& model, int max_states = 5000);

}  // namespace paraplan
