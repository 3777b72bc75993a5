// Checks an ONNX model before libonnx's shape inference runs on it. That inference trusts its
// input: a node that breaks its operator's schema, a zero stride, or a weight whose rank does not
// match its input's can make it read out of bounds (libonnx 1.12, Debian 12's, does this in
// Conv's, ConvTranspose's and MaxUnpool's inference). Such a model is refused with a message
// naming the node instead.
#pragma once

#include <cstdint>
#include <string>

namespace onnx {
class ModelProto;
}

namespace paraplan::io {

/// Throws Error(kInput, path, ...) naming the first node libonnx's shape inference could not run
/// on safely. `opset`: the model's default-domain opset. May run shape inference on prefixes of
/// the graph (to learn the rank of a weight made by an earlier node).
void check_before_shape_inference(const onnx::ModelProto& model, std::int64_t opset,
                                  const std::string& path);

}  // namespace paraplan::io
