// The operator graph of an intra-operator plan as an SVG figure (no scripts, nothing fetched):
// layers drawn top to bottom in layers of equal depth, each box with its name and how the plan
// splits it, shaded by the number of devices it uses, joined by its tensor flows.
#pragma once

#include <string>

#include "ir/model.h"
#include "ir/plan.h"

namespace paraplan::render {

/// Deterministic for the same input. Error(kInput) if the model's edges form a cycle.
std::string operator_graph_svg(const Model& model, const Plan& plan);

}  // namespace paraplan::render
