// Graphviz DOT for a model and (optionally) an intra-operator plan: one node per layer labelled
// with its type and split, one edge per tensor flow.
#pragma once

#include <string>

#include "ir/model.h"
#include "ir/plan.h"

namespace paraplan::render {

/// Layers with the same device count share a fill colour; edges are labelled with the bytes they
/// carry. Deterministic: layers and edges in model order.
std::string model_to_dot(const Model& model, const Plan* plan = nullptr);

}  // namespace paraplan::render
