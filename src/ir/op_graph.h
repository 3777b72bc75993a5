// Building operator graphs: each call creates one layer (an Operator) from the shapes of its
// input tensors and adds an edge for every input produced by an earlier layer. Used by the
// built-in models (zoo/) and the ONNX reader (io/).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/model.h"

namespace paraplan {

/// A tensor while a graph is built: produced by a layer (its output number) or a graph input /
/// weight (producer < 0, no edge). `names` name its dimensions (for readable iteration spaces).
struct OpTensor {
  int producer = -1;
  int output = 0;
  std::vector<std::int64_t> shape;
  std::vector<std::string> names;

  int rank() const { return static_cast<int>(shape.size()); }
  std::int64_t elements() const {
    std::int64_t n = 1;
    for (auto e : shape) n *= e;
    return n;
  }
};

/// Shapes that do not fit an operator throw Error(kInput) with a message naming the operator.
class OpGraphBuilder {
 public:
  explicit OpGraphBuilder(std::string model_name);

  /// A graph input (or weight): no layer, no edge. Dimension names default to d0, d1, ...
  OpTensor input(std::vector<std::int64_t> shape, std::vector<std::string> names = {}) const;

  /// 2-D convolution of x (b, C, H, W) with `out_channels` filters r×s; stride and pad per
  /// (row, column). Iteration space (b, C, h, w, r, s, n); output rows/columns are never split.
  OpTensor conv(const OpTensor& x, std::int64_t out_channels, std::int64_t r, std::int64_t s,
                std::int64_t stride_r, std::int64_t stride_c, std::int64_t pad_r,
                std::int64_t pad_c, int pointwise_ops, std::string name = {});
  /// Pooling of x (b, C, H, W) with an r×s window. Iteration space = the output (b, C, h, w).
  OpTensor pooling(const OpTensor& x, std::int64_t r, std::int64_t s, std::int64_t stride_r,
                   std::int64_t stride_c, std::int64_t pad_r, std::int64_t pad_c,
                   std::string name = {});
  /// Fully connected layer on x (lead..., k): iteration space (lead..., n, k).
  OpTensor fully_connected(const OpTensor& x, std::int64_t units, int pointwise_ops,
                           std::string name = {});
  /// Einsum "AB,CD->EF" of two tensors (either may be a weight). Iteration space: the output's
  /// letters, then the reduced letters in the order they appear in the first operand.
  OpTensor einsum(const std::string& equation, const OpTensor& a, const OpTensor& b,
                  int pointwise_ops, std::string name = {});
  /// Embedding lookup of token ids x (x...) into a vocab×d table, priced as the one-hot GEMM
  /// (x..., V) × (V, d). Iteration space (x..., d, V).
  OpTensor embedding(const OpTensor& tokens, std::int64_t vocab, std::int64_t width,
                     std::string name = {});
  /// Stacked LSTM on x (B, S, K) with K = units: iteration space (L, S, B, N, K).
  OpTensor lstm(const OpTensor& x, std::int64_t units, std::int64_t layers, std::string name = {});
  /// Element-wise op on one or two tensors (pointwise_ops extra ops per element). The second may
  /// broadcast (numpy rules) to the first's shape; its broadcast dimensions are never cut.
  OpTensor elementwise(const std::vector<OpTensor>& xs, int pointwise_ops, std::string name = {});
  /// Normalisation over `axis` (negative counts from the end; BatchNorm is axis 0).
  OpTensor norm(const OpTensor& x, int axis, std::string name = {});
  OpTensor softmax(const OpTensor& x, int axis, std::string name = {});
  /// Softmax cross-entropy over the last axis; the graph's loss (no output consumed).
  OpTensor softmax_cross_entropy(const OpTensor& x, std::string name = {});
  /// Mean over `axes`; with keepdims the reduced axes stay as extent-1 dimensions.
  OpTensor reduce_mean(const OpTensor& x, std::vector<int> axes, std::string name = {},
                       bool keepdims = false);
  /// Permutes dimensions: output dimension i is input dimension perm[i]. No cost of its own.
  OpTensor transpose(const OpTensor& x, const std::vector<int>& perm, std::string name = {});
  OpTensor concat(const std::vector<OpTensor>& xs, int axis, std::string name = {});
  /// Splits x along `axis` into parts of the given sizes.
  std::vector<OpTensor> split(const OpTensor& x, int axis, const std::vector<std::int64_t>& sizes,
                              std::string name = {});
  OpTensor stack(const std::vector<OpTensor>& xs, int axis, std::string name = {});
  std::vector<OpTensor> unstack(const OpTensor& x, int axis, std::string name = {});
  /// Flatten to one dimension.
  OpTensor ravel(const OpTensor& x, std::string name = {});
  /// One dimension to `shape`.
  OpTensor unravel(const OpTensor& x, std::vector<std::int64_t> shape, std::string name = {});
  /// Ravel followed by Unravel (two layers).
  OpTensor reshape(const OpTensor& x, std::vector<std::int64_t> shape, std::string name = {});

  int size() const { return model_.size(); }
  /// The finished model (edges indexed). The builder is empty afterwards.
  Model finish();

 private:
  std::vector<OpTensor> add(Operator op, std::vector<OpTensor> inputs, std::string name);
  std::string default_name(OpKind kind) const;
  /// A same-shaped operator acting along one axis (Norm, Softmax).
  OpTensor along_axis(OpKind kind, const OpTensor& x, int axis, std::string name);

  Model model_;
};

}  // namespace paraplan
