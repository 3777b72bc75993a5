// Operator-level description of a layer: an iteration space (named dimensions with extents) and
// the layer's tensors as projections of it. Intra-operator planners split the iteration space;
// cost models derive FLOPs and bytes from the operator, nothing is typed in by hand.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace paraplan {

enum class OpKind {
  kConv,
  kPooling,
  kFullyConnected,
  kEinsum,
  kEmbedding,
  kLstm,
  kElementwise,
  kNorm,
  kSoftmax,
  kSoftmaxCrossEntropy,
  kReduceMean,
  kConcat,
  kSplit,
  kStack,
  kUnstack,
  kRavel,
  kUnravel,
  kTranspose,
};

/// Name used in output and error messages ("Conv", "FC", "Einsum", ...).
std::string_view op_kind_name(OpKind kind);

/// One dimension of an operator's iteration space.
struct IterDim {
  std::string name;
  std::int64_t extent = 1;
  /// False for dimensions that are never cut (convolution output rows/columns, LSTM sequence,
  /// concat/stack axes); the cost model still uses the real extent.
  bool splittable = true;
};

/// A tensor of an operator as a projection of its iteration space: tensor dimension i has extent
/// shape[i] and is cut into the product of the splits of the iteration dimensions in dims[i]
/// (an empty list: never cut).
struct TensorView {
  std::vector<std::int64_t> shape;
  std::vector<std::vector<int>> dims;

  std::int64_t elements() const;
};

/// Iteration dimensions forming a (batched) matrix product C[M,N] = A[M,K] B[K,N]; the size of a
/// group is the product of its extents times its scale (LSTM: N = 4·units, K = 2·units).
struct GemmView {
  std::vector<int> batch, m, n, k;
  std::int64_t n_scale = 1;
  std::int64_t k_scale = 1;
};

struct Operator {
  OpKind kind = OpKind::kElementwise;
  std::vector<IterDim> dims;
  std::vector<TensorView> inputs;  ///< activations; graph edges carry these
  std::vector<TensorView> outputs;
  std::vector<TensorView> weights;  ///< parameters; not graph nodes
  GemmView gemm;                    ///< for Conv, FC, Einsum, Embedding, LSTM
  int pointwise_ops = 0;            ///< fused element-wise ops per output element (ReLU = 1)
  int axis = -1;                    ///< Norm / Softmax axis (iteration dim index)
  std::vector<int> reduce_axes;     ///< ReduceMean: iteration dims reduced away
  std::int64_t window_rows = 0;     ///< Pooling window
  std::int64_t window_cols = 0;

  /// Forward FLOPs of one iteration (the whole operator, one device): 2·M·N·K for products,
  /// one per element otherwise. For reporting; cost models have their own formulas.
  double forward_flops() const;
  /// Bytes of all weights (4-byte elements unless `bytes_per_element` says otherwise).
  double weight_bytes(double bytes_per_element = 4) const;
  /// A short description of the dims, e.g. "b=128 C=3 h=55 w=55 r=11 s=11 n=96".
  std::string dims_text() const;
  /// How a split (parts per iteration dim, in dims order) cuts it, e.g. "b/4 n/2"; "unsplit".
  std::string split_text(const std::vector<int>& split) const;
};

}  // namespace paraplan
