// ONNX models (Debian's libonnx) into an operator graph: shapes are inferred with ONNX's own
// shape inference, each node is mapped to an operator of the IR; constant sub-graphs (weights,
// shape arithmetic) are folded away. Unsupported nodes are all reported, by name and type.
#pragma once

#include <cstdint>
#include <string>

#include "ir/model.h"

namespace paraplan::io {

struct OnnxOptions {
  /// Replaces a symbolic or unknown leading (batch) dimension of the graph inputs; 0: such a
  /// dimension is an error asking for --batch.
  std::int64_t batch = 0;
};

struct OnnxModel {
  Model model;
  std::int64_t batch = 0;  ///< leading dimension of the first graph input
};

/// Error(kIo) if the file cannot be read; Error(kInput) naming the file and the node (name and
/// operator type) for a malformed model, failed shape inference or unsupported nodes.
OnnxModel read_onnx(const std::string& path, const OnnxOptions& options = {});
/// The same from the file's bytes; `source` names it in messages.
OnnxModel parse_onnx(const std::string& bytes, const std::string& source,
                     const OnnxOptions& options = {});

}  // namespace paraplan::io
