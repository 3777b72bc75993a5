// Structural checks every reader runs on the model it built: dangling or duplicate edges,
// cycles, layers without options. Messages name the source file and the offending item.
#pragma once

#include <string>

#include "ir/model.h"

namespace paraplan::io {

/// Throws Error(kInput) naming `source` for self-loops, duplicate edges and cycles; calls
/// model.index().
void check_edges(Model& model, const std::string& source);
/// check_edges, plus layers without options.
void check_model(Model& model, const std::string& source);

}  // namespace paraplan::io
