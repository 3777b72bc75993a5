// libonnx's shape inference, run where its crashes cannot take paraplan down. libonnx 1.12
// (Debian 12's) trusts the models it is given: many operators' inference functions, the older
// opsets' above all (Gemm-6 reads dimensions of an input without checking its rank), read out of
// bounds on a model that breaks their definition. onnx_guard refuses the cases known, with the
// node and the reason; this runs the inference itself in a child process, so that any other such
// model is refused with the node that stops libonnx, never a crash.
#pragma once

#include <string>

namespace onnx {
class ModelProto;
}

namespace paraplan::io {

/// Runs onnx::shape_inference::InferShapes (data propagation on, type checks off) on `model`
/// in a forked child and copies the inferred types back: `model`'s graph then holds what an
/// in-process call would have left in its value_info, inputs and outputs. Throws Error(kInput,
/// path, ...) with libonnx's message when inference refuses the model, or naming the first node
/// whose inference the child did not survive (found by inferring prefixes of the graph); Error
/// (kInternal) when no child process can be made or it does not finish within `timeout_seconds`.
void infer_shapes_isolated(onnx::ModelProto& model, const std::string& path,
                           double timeout_seconds = 300);

}  // namespace paraplan::io
