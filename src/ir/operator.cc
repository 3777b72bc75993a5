// Operator helpers: names, sizes and derived FLOPs.
#include "ir/operator.h"

#include <sstream>

namespace paraplan {

std::string_view op_kind_name(OpKind kind) {
  switch (kind) {
    case OpKind::kConv:
      return "Conv";
    case OpKind::kPooling:
      return "Pooling";
    case OpKind::kFullyConnected:
      return "FC";
    case OpKind::kEinsum:
      return "Einsum";
    case OpKind::kEmbedding:
      return "Embedding";
    case OpKind::kLstm:
      return "LSTM";
    case OpKind::kElementwise:
      return "Elementwise";
    case OpKind::kNorm:
      return "Norm";
    case OpKind::kSoftmax:
      return "Softmax";
    case OpKind::kSoftmaxCrossEntropy:
      return "SoftmaxCrossEntropy";
    case OpKind::kReduceMean:
      return "ReduceMean";
    case OpKind::kConcat:
      return "Concat";
    case OpKind::kSplit:
      return "Split";
    case OpKind::kStack:
      return "Stack";
    case OpKind::kUnstack:
      return "Unstack";
    case OpKind::kRavel:
      return "Ravel";
    case OpKind::kUnravel:
      return "Unravel";
    case OpKind::kTranspose:
      return "Transpose";
  }
  return "?";
}

std::int64_t TensorView::elements() const {
  std::int64_t n = 1;
  for (auto e : shape) n *= e;
  return n;
}

namespace {
double group_size(const Operator& op, const std::vector<int>& group) {
  double s = 1;
  for (int d : group) s *= static_cast<double>(op.dims[d].extent);
  return s;
}
}  // namespace

double Operator::forward_flops() const {
  switch (kind) {
    case OpKind::kConv:
    case OpKind::kFullyConnected:
    case OpKind::kEinsum:
    case OpKind::kEmbedding:
    case OpKind::kLstm:
      return 2 * group_size(*this, gemm.batch) * group_size(*this, gemm.m) *
             group_size(*this, gemm.n) * static_cast<double>(gemm.n_scale) *
             group_size(*this, gemm.k) * static_cast<double>(gemm.k_scale);
    default: {
      double e = 1;
      for (const auto& d : dims) e *= static_cast<double>(d.extent);
      return e;
    }
  }
}

double Operator::weight_bytes(double bytes_per_element) const {
  double b = 0;
  for (const auto& w : weights) b += static_cast<double>(w.elements()) * bytes_per_element;
  return b;
}

std::string Operator::dims_text() const {
  std::ostringstream s;
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (i) s << ' ';
    s << dims[i].name << '=' << dims[i].extent;
  }
  return s.str();
}

std::string Operator::split_text(const std::vector<int>& split) const {
  std::string out;
  for (std::size_t i = 0; i < split.size() && i < dims.size(); ++i) {
    if (split[i] == 1) continue;
    if (!out.empty()) out += ' ';
    out += dims[i].name + "/" + std::to_string(split[i]);
  }
  return out.empty() ? "unsplit" : out;
}

}  // namespace paraplan
